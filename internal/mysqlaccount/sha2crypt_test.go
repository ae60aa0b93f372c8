/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package mysqlaccount

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSHA256Crypt checks the SHA-crypt against Drepper's published vectors (SHA-crypt.txt: default rounds,
// salts of 10 and 16 characters, and 10000 rounds).
func TestSHA256Crypt(t *testing.T) {
	for _, tc := range []struct {
		key, salt string
		rounds    int
		want      string
	}{
		{"Hello world!", "saltstring", 5000, "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"},
		{"This is just a test", "toolongsaltstrin", 5000, "Un/5jzAHMgOGZ5.mWJpuVolil07guHPvOW8mGRcvxa5"},
		{"Hello world!", "saltstringsaltst", 10000, "3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"},
	} {
		if got := sha256Crypt([]byte(tc.key), []byte(tc.salt), tc.rounds); got != tc.want {
			t.Errorf("sha256Crypt(%q, %q, %d) = %s, want %s", tc.key, tc.salt, tc.rounds, got, tc.want)
		}
	}
}

// TestSHA256CryptAgainstOpenSSL compares with `openssl passwd -5` for keys longer than a digest and salts
// of every length openssl takes, where it is installed.
func TestSHA256CryptAgainstOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	for _, tc := range []struct{ key, salt string }{
		{"x", "a"},
		{strings.Repeat("long password ", 10), "0123456789abcdef"},
		{"pä$$wörd'\"\\`", "./ABCxyz09"},
	} {
		out, err := exec.Command("openssl", "passwd", "-5", "-salt", tc.salt, tc.key).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSpace(string(out))
		if got := "$5$" + tc.salt + "$" + sha256Crypt([]byte(tc.key), []byte(tc.salt), 5000); got != want {
			t.Errorf("%q/%q: %s, openssl %s", tc.key, tc.salt, got, want)
		}
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
