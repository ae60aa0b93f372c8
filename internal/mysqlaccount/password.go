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
	"crypto/pbkdf2"
	"crypto/sha1" //nolint:gosec // mysql_native_password is defined on SHA-1.
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// What is done with a password once refuse has let it through (its length: checkPassword): the forms the
// server stores (mysql_native_password's hash, caching_sha2_password's string from sha2crypt.go) and the digest
// the claim keeps of it. No password byte ever reaches the SQL text, an error or a log line: only these forms.

// password is the IDENTIFIED clause that sets a's password on s, whether the existing account's password
// differs from it, and, when the clause is to run (a new account, or drift), the digest the claim then keeps
// (passwordDigest): each form of the password is computed once, here, of a password refuse let through (no
// longer than s takes: checkPassword). On MySQL the clause (a SHA-crypt) is computed only when the password is
// to be set: a converged account costs the claim's digest only (PBKDF2, whose 4096 iterations do not depend on
// the password's length); on MariaDB, the unsalted hash only.
func password(a Account, o *Observed, s Server, crypt *sha2Crypter) (identified string, drift bool, digest string, err error) {
	if s.nativePasswords() {
		hash := NativePasswordHash(a.Password)
		identified = fmt.Sprintf("IDENTIFIED BY PASSWORD '%s'", hash)
		drift = o.AuthString != hash || o.Plugin != "mysql_native_password"
	} else {
		digest = passwordDigest(a.Password, a.Claimant, a.User, a.Host)
		r := o.Claim
		drift = o.Plugin != "caching_sha2_password" || r == nil || r.AuthString != o.AuthString || r.PasswordDigest != digest
	}
	if o.Exists && !drift {
		return "", false, "", nil // nothing to set: no SHA-crypt, no digest to record
	}
	if digest == "" {
		digest = passwordDigest(a.Password, a.Claimant, a.User, a.Host)
	}
	if identified == "" {
		auth, err := crypt.authString(a.Password)
		if err != nil {
			return "", false, "", err
		}
		identified = fmt.Sprintf("IDENTIFIED WITH caching_sha2_password AS '%s'", auth)
	}
	return identified, drift, digest, nil
}

// NativePasswordHash is the mysql_native_password hash of password: '*' + HEX(SHA1(SHA1(password))).
func NativePasswordHash(password string) string {
	// SHA-1 is the format's own, not a choice: the server stores and compares exactly this.
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}

// passwordDigest is what the claim keeps of a password: PBKDF2-SHA256, salted with the claimant and the account,
// so that equal passwords give different digests and the digest is costly to guess from. It only tells whether
// the Secret's password changed, where the server's hash is salted (caching_sha2_password).
func passwordDigest(password string, o Claimant, user, host string) string {
	salt := []byte("operator101\x00" + o.UID + "\x00" + user + "\x00" + host)
	key, err := pbkdf2.Key(sha256.New, password, salt, 4096, 32)
	if err != nil { // only for parameters FIPS mode refuses; these are fixed
		panic(err)
	}
	return hex.EncodeToString(key)
}
