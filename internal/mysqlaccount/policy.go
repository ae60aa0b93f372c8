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
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The tenant policy's databases: which databases an account may be granted, or adopted with. The one place
// that decides the system schemas and what a policy's `*` matches; the controller, the planner and adoption
// all ask it. Pure functions, table-tested without a server.

// SystemSchemas are never granted through a DatabaseUser: the server's own, and operator101's records.
var SystemSchemas = []string{"mysql", "sys", "information_schema", "performance_schema", ClaimSchema}

// SystemSchema reports whether db is one of SystemSchemas. The server compares database names
// case-insensitively on some systems (lower_case_table_names), so this does too.
func SystemSchema(db string) bool {
	return slices.ContainsFunc(SystemSchemas, func(s string) bool { return strings.EqualFold(s, db) })
}

// Policy is what a DatabaseTarget allows one namespace's accounts to hold.
type Policy struct {
	// Databases are patterns whose only wildcard is `*` (any run of characters, also none), with
	// ${namespace} already replaced. `?`, `[` and `\` stand for themselves: database names may contain them,
	// which is why path.Match does not serve.
	Databases []string
}

// String lists the patterns, quoted, for a message: "no database" when there is none.
func (p Policy) String() string {
	if len(p.Databases) == 0 {
		return "no database"
	}
	q := make([]string, len(p.Databases))
	for i, d := range p.Databases {
		q[i] = strconv.Quote(d)
	}
	return strings.Join(q, ", ")
}

// AllowsDatabase: the literal database name db is no system schema and matches one of the patterns.
func (p Policy) AllowsDatabase(db string) bool {
	if SystemSchema(db) {
		return false
	}
	name := literal(db)
	return slices.ContainsFunc(p.Databases, func(g string) bool { return covers(globTokens(g), name, false) })
}

// allowsPattern: every database the mysql.db pattern like covers (`%` any run, `_` any one character,
// backslash escaping the next) is allowed by one of the patterns, and like covers no system schema.
func (p Policy) allowsPattern(like string) bool {
	toks := likeTokens(like)
	for _, s := range SystemSchemas {
		if covers(toks, literal(s), true) {
			return false
		}
	}
	return slices.ContainsFunc(p.Databases, func(g string) bool { return covers(globTokens(g), toks, false) })
}

// likeToken is one element of a pattern: a character, or a wildcard: anyOne (`_`) or anyRun (`%`, or `*` in a
// policy's pattern).
type likeToken struct {
	r    rune
	kind int
}

const (
	char = iota
	anyOne
	anyRun
)

func literal(s string) []likeToken {
	out := make([]likeToken, 0, len(s))
	for _, r := range s {
		out = append(out, likeToken{r: r})
	}
	return out
}

// likeTokens reads a mysql.db pattern.
func likeTokens(p string) []likeToken {
	var out []likeToken
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '\\' && i+1 < len(rs):
			i++
			out = append(out, likeToken{r: rs[i]})
		case rs[i] == '%':
			out = append(out, likeToken{kind: anyRun})
		case rs[i] == '_':
			out = append(out, likeToken{kind: anyOne})
		default:
			out = append(out, likeToken{r: rs[i]})
		}
	}
	return out
}

// globTokens reads a policy's pattern, where `*` is the only wildcard.
func globTokens(p string) []likeToken {
	var out []likeToken
	for _, r := range p {
		if r == '*' {
			out = append(out, likeToken{kind: anyRun})
		} else {
			out = append(out, likeToken{r: r})
		}
	}
	return out
}

// covers reports whether every name the pattern p covers is matched by the pattern g: each of g's characters
// must stand against the same character of p (compared case-insensitively with fold, as a server with
// lower_case_table_names would), g's anyOne against one character of p, and p's wildcards against g's anyRun.
// For a literal p this is plain matching. The alignment is sufficient: every name p covers is then split the
// same way, each piece of it matched by the same part of g. Memoized: a pattern of many `*` stays linear in
// the product of the lengths.
func covers(g, p []likeToken, fold bool) bool {
	same := func(a, b rune) bool { return a == b || fold && unicode.ToLower(a) == unicode.ToLower(b) }
	memo := map[[2]int]bool{}
	var match func(i, j int) bool
	match = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var v bool
		switch {
		case i == len(g):
			v = j == len(p)
		case g[i].kind == anyRun:
			v = match(i+1, j) || j < len(p) && match(i, j+1)
		case g[i].kind == anyOne:
			v = j < len(p) && p[j].kind == char && match(i+1, j+1)
		default:
			v = j < len(p) && p[j].kind == char && same(p[j].r, g[i].r) && match(i+1, j+1)
		}
		memo[key] = v
		return v
	}
	return match(0, 0)
}
