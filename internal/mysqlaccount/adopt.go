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
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Adoption. A target's existingAccounts: Adopt lets a DatabaseUser take over an account that exists without a
// claim. operator101 then sets the account's password and manages its database-level grants (mysql.db) only,
// so whatever else the account holds would stay with the tenant: global privileges, GRANT OPTION, roles,
// proxy grants, table, column and routine grants. An account is therefore adopted only when every privilege it
// holds fits the target's policy; any other is refused and left exactly as it is (no claim, no statement).
// Refusing, rather than revoking what does not fit, is deliberate: the account is not the tenant's yet, and
// stripping a replication or admin account of its privileges on a tenant's request would break whoever uses it.
//
// What the account holds is read with SHOW GRANTS FOR, which MariaDB 10.6+ and MySQL 8.0+ both answer (with
// SELECT on the mysql schema) in the form of the GRANT statements that would recreate it; the lines are parsed
// here, and any line not understood refuses the adoption.

// obstacle is a kind of privilege that keeps an account from being adopted; obstacles is a set of them.
type obstacles uint

const (
	obstacleGlobal obstacles = 1 << iota
	obstacleGrantOption
	obstacleRoles
	obstacleProxy
	obstacleDatabase
	obstacleTable
	obstacleRoutine
	obstacleUnknown
)

// obstacleNames say what each obstacle is, for a DatabaseUser's status: kinds only, never a name the account
// holds privileges on (the account is not the tenant's).
var obstacleNames = []struct {
	o    obstacles
	name string
}{
	{obstacleGlobal, "global privileges (ON *.*) beyond USAGE"},
	{obstacleGrantOption, "GRANT OPTION"},
	{obstacleRoles, "roles granted to it"},
	{obstacleProxy, "proxy grants"},
	{obstacleDatabase, "database-level grants outside the target's databases"},
	{obstacleTable, "table or column grants outside the target's databases"},
	{obstacleRoutine, "routine grants outside the target's databases"},
	{obstacleUnknown, "grants operator101 cannot read"},
}

func (o obstacles) String() string {
	var out []string
	for _, n := range obstacleNames {
		if o&n.o != 0 {
			out = append(out, n.name)
		}
	}
	if len(out) < 2 {
		return strings.Join(out, "")
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// checkAdoptable refuses, with an error of KindAdoptionRefused, to adopt the existing account of a, whose name
// acct is quoted (refuse), when it holds a privilege beyond a.AdoptDatabases. It only reads.
func (c *Client) checkAdoptable(ctx context.Context, a Account, acct string) error {
	lines, err := c.showGrants(ctx, acct)
	if err != nil {
		return err
	}
	if o := adoptionObstacles(lines, a.AdoptDatabases); o != 0 {
		return &Error{Kind: KindAdoptionRefused, Op: "account " + a.User + "@" + a.Host, Err: fmt.Errorf(
			"existingAccounts: Adopt takes over only an account whose every privilege fits the DatabaseTarget's policy, "+
				"and this one holds %s. It was left as it is (no password set, not recorded): the server's admin "+
				"revokes those privileges, or the DatabaseUser names another user", o)}
	}
	return nil
}

// showGrants runs SHOW GRANTS FOR acct (quoted by accountName). The lines carry the account's password hash on
// MariaDB: they never leave this package, and no error quotes them.
func (c *Client) showGrants(ctx context.Context, acct string) ([]string, error) {
	rows, err := c.db.QueryContext(ctx, "SHOW GRANTS FOR "+acct)
	if err != nil {
		return nil, wrap("SHOW GRANTS", err)
	}
	defer func() { _ = rows.Close() }()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, wrap("SHOW GRANTS", err)
		}
		lines = append(lines, l)
	}
	return lines, wrap("SHOW GRANTS", rows.Err())
}

// adoptionObstacles says what, in the SHOW GRANTS lines of an account, lies beyond a policy that allows
// grants on the databases the patterns match (`*` matches any run of characters; system schemas never). It is
// a pure function, table-tested with MariaDB's and MySQL's output (adopt_test.go).
func adoptionObstacles(lines []string, allowed []string) obstacles {
	var o obstacles
	for _, l := range lines {
		toks, err := tokenize(l)
		if err != nil || len(toks) == 0 {
			o |= obstacleUnknown
			continue
		}
		o |= grantObstacles(toks, Policy{Databases: allowed})
	}
	return o
}

// token is one lexical token of a SHOW GRANTS line: a word or punctuation, or a quoted identifier or string
// (quoted: its text is unquoted).
type token struct {
	text   string
	quoted bool
}

// is reports whether t is the unquoted keyword kw.
func (t token) is(kw string) bool { return !t.quoted && strings.EqualFold(t.text, kw) }

// tokenize splits a SHOW GRANTS line. Identifiers are quoted with backticks, or double quotes under
// ANSI_QUOTES, a doubled quote standing for itself; strings with single quotes, where a doubled quote or a
// backslash escapes the next character.
func tokenize(s string) ([]token, error) {
	var toks []token
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '`' || r == '"' || r == '\'':
			var b strings.Builder
			j := i + 1
			closed := false
			for ; j < len(rs) && !closed; j++ {
				switch {
				case rs[j] == r && j+1 < len(rs) && rs[j+1] == r:
					b.WriteRune(r)
					j++
				case rs[j] == r:
					closed = true
				case r == '\'' && rs[j] == '\\' && j+1 < len(rs):
					b.WriteRune(rs[j+1])
					j++
				default:
					b.WriteRune(rs[j])
				}
			}
			if !closed {
				return nil, errors.New("unterminated quote")
			}
			toks = append(toks, token{text: b.String(), quoted: true})
			i = j
		case strings.ContainsRune(",().@*=;", r):
			toks = append(toks, token{text: string(r)})
			i++
		default:
			j := i
			for j < len(rs) && !unicode.IsSpace(rs[j]) && !strings.ContainsRune(",().@*=;`\"'", rs[j]) {
				j++
			}
			toks = append(toks, token{text: string(rs[i:j])})
			i = j
		}
	}
	return toks, nil
}

// grantObstacles classifies one line:
//
//	GRANT priv [(cols)], ... ON [TABLE|FUNCTION|PROCEDURE|PACKAGE [BODY]] level TO account [tail]
//	GRANT PROXY ON account TO account [WITH GRANT OPTION]
//	GRANT role, ... TO account [WITH ADMIN OPTION]
//	SET DEFAULT ROLE role FOR account                       (MariaDB)
//	REVOKE priv ON db.* FROM account                        (MySQL's partial revokes, which only global privileges have)
func grantObstacles(toks []token, policy Policy) obstacles {
	switch {
	case toks[0].is("SET") && len(toks) > 2 && toks[1].is("DEFAULT") && toks[2].is("ROLE"):
		return obstacleRoles
	case toks[0].is("REVOKE"):
		return obstacleGlobal
	case !toks[0].is("GRANT"):
		return obstacleUnknown
	}
	on, to := -1, -1
	depth := 0
	for i, t := range toks {
		switch {
		case t.is("("):
			depth++
		case t.is(")"):
			depth--
		case depth != 0:
		case on < 0 && to < 0 && t.is("ON"):
			on = i
		case to < 0 && t.is("TO"):
			to = i
		}
	}
	if to < 0 || depth != 0 {
		return obstacleUnknown
	}
	var o obstacles
	for i := to + 1; i+1 < len(toks); i++ {
		if toks[i].is("GRANT") && toks[i+1].is("OPTION") {
			o |= obstacleGrantOption
		}
	}
	if on < 0 {
		return o | obstacleRoles
	}
	privs, columns, ok := privileges(toks[1:on])
	if !ok {
		return o | obstacleUnknown
	}
	if len(privs) == 1 && privs[0] == "PROXY" {
		return o | obstacleProxy
	}
	level := toks[on+1 : to]
	routine := false
	if len(level) > 0 && !level[0].quoted {
		switch strings.ToUpper(level[0].text) {
		case "TABLE":
			level = level[1:]
		case "FUNCTION", "PROCEDURE":
			level, routine = level[1:], true
		case "PACKAGE":
			level, routine = level[1:], true
			if len(level) > 0 && level[0].is("BODY") {
				level = level[1:]
			}
		}
	}
	switch {
	case len(level) == 3 && level[0].is("*") && level[1].is(".") && level[2].is("*"):
		if routine || columns {
			return o | obstacleUnknown
		}
		if len(privs) != 1 || privs[0] != "USAGE" {
			o |= obstacleGlobal
		}
		return o
	case len(level) == 3 && isName(level[0]) && level[1].is(".") && level[2].is("*"):
		if routine || columns {
			return o | obstacleUnknown
		}
		if !policy.allowsPattern(level[0].text) {
			o |= obstacleDatabase
		}
		return o
	case len(level) == 3 && isName(level[0]) && level[1].is(".") && isName(level[2]):
		// Table, column and routine grants name their database literally: no wildcards there.
		if !policy.AllowsDatabase(level[0].text) {
			if routine {
				o |= obstacleRoutine
			} else {
				o |= obstacleTable
			}
		}
		return o
	}
	return o | obstacleUnknown
}

// isName: an identifier, quoted or not (SHOW GRANTS quotes every one; an unquoted word is taken as written).
func isName(t token) bool {
	return t.quoted || t.text != "" && !strings.ContainsRune(",().@*=;", rune(t.text[0]))
}

// privileges reads a privilege list: names of one or more words, each with an optional column list, separated
// by commas. It returns the names (upper case) and whether a column list was seen.
func privileges(toks []token) (names []string, columns, ok bool) {
	var words []string
	end := func() bool {
		if len(words) == 0 {
			return false
		}
		names = append(names, strings.ToUpper(strings.Join(words, " ")))
		words = nil
		return true
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.is(","):
			if !end() {
				return nil, false, false
			}
		case t.is("("):
			columns = true
			for i < len(toks) && !toks[i].is(")") {
				i++
			}
		case t.quoted || strings.ContainsRune(").@*=;", rune(t.text[0])):
			return nil, false, false
		default:
			words = append(words, t.text)
		}
	}
	return names, columns, end()
}
