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
	"strings"
	"testing"
)

// FuzzQuoteIdent: whatever the input, a quoted identifier is one token that reads back as the input (so it
// cannot end early and smuggle SQL), or the input is refused. The seed corpus is in testdata/fuzz.
func FuzzQuoteIdent(f *testing.F) {
	for _, s := range []string{"alice", "a`b", "`", "x`; DROP USER root; --", `\`, "'", "用户"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := quoteIdent(s)
		if err != nil {
			if checkName(s) == nil {
				t.Fatalf("quoteIdent(%q) failed but checkName accepts it: %v", s, err)
			}
			return
		}
		back, ok := unquoteIdent(q)
		if !ok || back != s {
			t.Fatalf("quoteIdent(%q) = %q reads back as %q, %v", s, q, back, ok)
		}
		if strings.ContainsRune(q, 0) {
			t.Fatalf("quoteIdent(%q) = %q contains NUL", s, q)
		}
		// The account name is two such tokens around one @.
		acct, err := accountName(s, s)
		if err != nil || acct != q+"@"+q {
			t.Fatalf("accountName(%q) = %q, %v", s, acct, err)
		}
	})
}

// FuzzQuoteDatabasePattern: an escaped database pattern has no unescaped wildcard and quotes like any name.
func FuzzQuoteDatabasePattern(f *testing.F) {
	for _, s := range []string{"shop_db", "100%", `a\_b`, "`%_`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := escapeDatabasePattern(s)
		var b strings.Builder
		for i := 0; i < len(p); i++ {
			switch p[i] {
			case '\\':
				if i+1 >= len(p) {
					t.Fatalf("pattern %q of %q ends in a lone backslash", p, s)
				}
				i++
			case '_', '%':
				t.Fatalf("pattern %q of %q has an unescaped wildcard at %d", p, s, i)
			}
			b.WriteByte(p[i])
		}
		if b.String() != s {
			t.Fatalf("pattern %q does not read back as %q", p, s)
		}
	})
}

// unquoteIdent reverses quoteIdent: the test oracle of the fuzz test.
func unquoteIdent(q string) (string, bool) {
	if len(q) < 2 || q[0] != '`' || q[len(q)-1] != '`' {
		return "", false
	}
	body := q[1 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '`' {
			if i+1 >= len(body) || body[i+1] != '`' {
				return "", false // a lone backtick would end the identifier early
			}
			i++
		}
		b.WriteByte(body[i])
	}
	return b.String(), true
}
