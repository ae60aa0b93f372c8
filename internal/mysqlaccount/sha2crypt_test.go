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
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestSHA256Crypt checks the SHA-crypt against every SHA-256 vector Drepper publishes (SHA-crypt.txt, "Test
// vectors"): default rounds, a salt cut to 16 characters, a key longer than the 32-byte digest, rounds from 1000
// (the minimum: the vector asks for 10) to 123456. `openssl passwd -5 -salt 'rounds=N$SALT' KEY` (OpenSSL
// 3.0.19) gives the same strings.
func TestSHA256Crypt(t *testing.T) {
	for _, tc := range []struct {
		key, salt string
		rounds    int
		want      string
	}{
		{"Hello world!", "saltstring", 5000, "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"},
		{"Hello world!", "saltstringsaltst", 10000, "3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"},
		{"This is just a test", "toolongsaltstrin", 5000, "Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5"},
		{"a very much longer text to encrypt.  This one even stretches over morethan one line.", "anotherlongsalts", 1400,
			"Rx.j8H.h8HjEDGomFU8bDkXm3XIUnzyxf12oP84Bnq1"},
		{"we have a short salt string but not a short password", "short", 77777, "JiO1O3ZpDAxGJeaDIuqCoEFysAe1mZNJRs3pw0KQRd/"},
		{"a short string", "asaltof16chars..", 123456, "gP3VQ/6X7UUEW3HkBn2w1/Ptq2jxPyzV/cZKmF/wJvD"},
		{"the minimum number is still observed", "roundstoolow", 1000, "yfvwcWrQ8l/K0DAWyuPMDNHpIVlTQebY9l/gL972bIC"},
	} {
		if got := sha256Crypt([]byte(tc.key), []byte(tc.salt), tc.rounds); got != tc.want {
			t.Errorf("sha256Crypt(%q, %q, %d) = %s, want %s", tc.key, tc.salt, tc.rounds, got, tc.want)
		}
	}
}

// openSSLVectors are `openssl passwd -5 -salt SALT KEY` (OpenSSL 3.0.19): a one-byte key and salt, a key of
// 140 bytes, a 16-character salt, and a key with UTF-8 and the characters SQL and shells quote.
var openSSLVectors = []struct{ key, salt, want string }{
	{"x", "a", "$5$a$m5PPB7rYZmTs0gzCcO.9R/qmXtGr3g/5s2bl1flV9x2"},
	{strings.Repeat("long password ", 10), "0123456789abcdef", "$5$0123456789abcdef$//MJaRt8xv9d61.2WHzXjs93xy4sxP6bBwXto..xbW3"},
	{"pä$$wörd'\"\\`", "./ABCxyz09", "$5$./ABCxyz09$x9YHR6Hl5fxudFad/URIxXNtE4ztYiXv1B6Sa2NcXo."},
}

// TestSHA256CryptAgainstOpenSSL compares with OpenSSL's SHA-crypt: always with its recorded outputs
// (openSSLVectors), and where openssl is installed also with what it prints now, which checks the recording.
func TestSHA256CryptAgainstOpenSSL(t *testing.T) {
	_, lookErr := exec.LookPath("openssl")
	for _, tc := range openSSLVectors {
		if got := "$5$" + tc.salt + "$" + sha256Crypt([]byte(tc.key), []byte(tc.salt), 5000); got != tc.want {
			t.Errorf("%q/%q: %s, openssl printed %s", tc.key, tc.salt, got, tc.want)
		}
		if lookErr != nil {
			continue
		}
		out, err := exec.Command("openssl", "passwd", "-5", "-salt", tc.salt, tc.key).Output()
		if err != nil {
			t.Fatal(err)
		}
		if now := strings.TrimSpace(string(out)); now != tc.want {
			t.Errorf("%q/%q: the recorded %s, openssl now prints %s", tc.key, tc.salt, tc.want, now)
		}
	}
	if lookErr != nil {
		t.Logf("openssl is not installed: compared with its recorded outputs only")
	}
}

func TestCachingSHA2AuthString(t *testing.T) {
	got, err := cachingSHA2AuthString("secret", "abcdefghijklmnopqrst")
	if err != nil || len(got) != 70 || !strings.HasPrefix(got, "$A$005$abcdefghijklmnopqrst") {
		t.Errorf("%q (%d), %v", got, len(got), err)
	}
	if _, err := cachingSHA2AuthString("secret", "short"); err == nil {
		t.Error("a short salt was accepted")
	}
}

// BenchmarkSHA2Crypt is the SHA-crypt behind caching_sha2_password (5000 rounds, a 20-byte salt) by the
// password's length: up to the longest MySQL takes (256 bytes, the bound), and beyond it, where the cost grows
// with the square of the length (the digest behind the P sequence hashes the password once per byte of it).
func BenchmarkSHA2Crypt(b *testing.B) {
	for _, n := range []int{16, 64, 256, 1024, 4096, 16384} {
		key := []byte(strings.Repeat("k", n))
		b.Run(fmt.Sprintf("bytes=%d", n), func(b *testing.B) {
			for b.Loop() {
				sha256Crypt(key, []byte(salt), 5000)
			}
		})
	}
}

// BenchmarkSHA2Resync is the password part of one check of an account (plan): on MySQL with a password as
// long as MySQL takes, converged (the claim's digest and the server's string match: what every resync costs)
// and changed (the Secret changed: the SHA-crypt runs and the password is set again); for comparison, on
// MariaDB (mysql_native_password, no limit) with a password as large as a Secret can be (1 MiB).
func BenchmarkSHA2Resync(b *testing.B) {
	owner := Claimant{UID: "uid-1", Namespace: "team", Name: "app"}
	mysqlPw := strings.Repeat("p", MaxCachingSHA2PasswordLength)
	mariadbPw := strings.Repeat("p", 1<<20)
	mysqlObserved := func(digest string) *Observed {
		return &Observed{Exists: true, Plugin: "caching_sha2_password", AuthString: "$A$005$stored",
			serverPrivileges: serverPrivileges(mysql84),
			Claim:            &claim{Claimant: owner, PasswordDigest: digest, AuthString: "$A$005$stored"}}
	}
	for _, tc := range []struct {
		name string
		pw   string
		o    *Observed
		s    Server
	}{
		{"mysql-256B-converged", mysqlPw, mysqlObserved(passwordDigest(mysqlPw, owner, "app", "%")), mysql84},
		{"mysql-256B-changed", mysqlPw, mysqlObserved(passwordDigest("old", owner, "app", "%")), mysql84},
		{"mariadb-1MiB-converged", mariadbPw, &Observed{Exists: true, Plugin: "mysql_native_password",
			AuthString: NativePasswordHash(mariadbPw), serverPrivileges: serverPrivileges(mariadb1011)}, mariadb1011},
	} {
		a := Account{User: "app", Host: "%", Password: tc.pw, Claimant: owner}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := planChecked(a, tc.o, tc.s, &sha2Crypter{salt: salt}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
