// Copyright 2026 The operator101 Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package mysqlaccount

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
)

// MaxCachingSHA2PasswordLength is the longest password, in bytes, MySQL's caching_sha2_password takes: MySQL
// 8.0, 8.4 and 9.x refuse a longer one when they hash it (CREATE USER ... IDENTIFIED BY) and when a client logs
// in with it (full authentication), so an account whose password is longer could never log in
// (MAX_PLAINTEXT_LENGTH in include/crypt_genhash_impl.h, CACHING_SHA2_PASSWORD_MAX_PASSWORD_LENGTH in
// sql/auth/i_sha2_password.h, both checks in sql/auth/sha2_password.cc). It also bounds the SHA-crypt below,
// whose cost grows with the square of the password's length.
const MaxCachingSHA2PasswordLength = 256

// cachingSHA2AuthString is the authentication_string MySQL's caching_sha2_password stores for password:
// "$A$005$", the 20-character salt, and the SHA-256 crypt (Drepper's SHA-crypt, 5000 rounds) of the password
// with that salt. CREATE USER ... IDENTIFIED WITH caching_sha2_password AS '<it>' then sets the password
// without the password in the statement. Written here because Go's standard library has no SHA-crypt and the
// usual modules cap the salt at Drepper's 16 characters, where MySQL uses 20.
func cachingSHA2AuthString(password, salt string) (string, error) {
	if len(salt) != 20 {
		return "", fmt.Errorf("caching_sha2_password salt is %d bytes, want 20", len(salt))
	}
	if len(password) > MaxCachingSHA2PasswordLength { // refused before (checkPassword): a bound on the cost
		return "", fmt.Errorf("caching_sha2_password password is longer than %d bytes", MaxCachingSHA2PasswordLength)
	}
	return "$A$005$" + salt + sha256Crypt([]byte(password), []byte(salt), 5000), nil
}

// saltAlphabet is what caching_sha2_password salts are drawn from: no quote, backslash or `$`.
const saltAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomSalt is the salt of one plan's caching_sha2_password strings: 20 characters of saltAlphabet.
func randomSalt() (string, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = saltAlphabet[int(b[i])%len(saltAlphabet)]
	}
	return string(b), nil
}

// sha2Crypter computes the caching_sha2_password strings of one plan, with one salt, and counts them: the
// tests check when the planner runs a SHA-crypt (a converged account costs none).
type sha2Crypter struct {
	salt string
	runs int
}

// authString is cachingSHA2AuthString with the crypter's salt.
func (c *sha2Crypter) authString(password string) (string, error) {
	s, err := cachingSHA2AuthString(password, c.salt)
	if err == nil {
		c.runs++
	}
	return s, err
}

// sha256Crypt is the hash part (43 characters) of Drepper's SHA-256 crypt of key with salt and rounds.
func sha256Crypt(key, salt []byte, rounds int) string {
	b := sha256.New()
	b.Write(key)
	b.Write(salt)
	b.Write(key)
	sumB := b.Sum(nil)

	a := sha256.New()
	a.Write(key)
	a.Write(salt)
	for n := len(key); n > 0; n -= 32 {
		a.Write(sumB[:min(n, 32)])
	}
	for n := len(key); n > 0; n >>= 1 {
		if n&1 != 0 {
			a.Write(sumB)
		} else {
			a.Write(key)
		}
	}
	sumA := a.Sum(nil)

	dp := sha256.New()
	for range key {
		dp.Write(key)
	}
	p := bytes.Repeat(dp.Sum(nil), len(key)/32+1)[:len(key)] // the digest repeated to the key's length

	ds := sha256.New()
	for range 16 + int(sumA[0]) {
		ds.Write(salt)
	}
	s := bytes.Repeat(ds.Sum(nil), len(salt)/32+1)[:len(salt)]

	c := sumA
	for i := range rounds {
		h := sha256.New()
		if i%2 != 0 {
			h.Write(p)
		} else {
			h.Write(c)
		}
		if i%3 != 0 {
			h.Write(s)
		}
		if i%7 != 0 {
			h.Write(p)
		}
		if i%2 != 0 {
			h.Write(c)
		} else {
			h.Write(p)
		}
		c = h.Sum(nil)
	}

	const alphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	out := make([]byte, 0, 43)
	put := func(b2, b1, b0 byte, n int) {
		w := uint(b2)<<16 | uint(b1)<<8 | uint(b0)
		for range n {
			out = append(out, alphabet[w&0x3f])
			w >>= 6
		}
	}
	order := [10][3]int{{0, 10, 20}, {21, 1, 11}, {12, 22, 2}, {3, 13, 23}, {24, 4, 14}, {15, 25, 5}, {6, 16, 26},
		{27, 7, 17}, {18, 28, 8}, {9, 19, 29}}
	for _, o := range order {
		put(c[o[0]], c[o[1]], c[o[2]], 4)
	}
	put(0, c[31], c[30], 3)
	return string(out)
}
