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
	"slices"
	"sort"
	"strings"
)

// plan returns the statements that make the observed account, whose name acct is quoted (refuse), match a on
// server s, and, when they set the password, the digest the claim keeps of it ("" when they do not). It is a
// pure function, table-tested per flavour without a server (plan_test.go); crypt holds the
// caching_sha2_password salt a new MySQL password gets, and counts the SHA-crypts. The statements carry no password, only its hash.
//
// Passwords: MariaDB stores mysql_native_password hashes, unsalted, so the account's hash is compared with
// the password's and a password changed by hand is reverted. MySQL 8.0 and later get caching_sha2_password
// (8.4 disables mysql_native_password, 9.x removes it), whose stored string is salted: the claims
// keeps a digest of the password last set and the string the server stored then, and the password is set
// again when either differs (the Secret changed, or someone changed the password by hand).
func plan(a Account, acct string, o *Observed, s Server, crypt *sha2Crypter) ([]string, string, error) {
	// The grants a asks for, by database pattern (refuse has refused the system schemas).
	desired := map[string][]string{}
	for db, privs := range a.Grants {
		if err := checkName(db); err != nil {
			return nil, "", &Error{Kind: KindInvalidGrant, Op: "database name", Err: err}
		}
		set, err := expand(privs, o.serverPrivileges, s)
		if err != nil {
			return nil, "", err
		}
		desired[escapeDatabasePattern(db)] = set
	}

	identified, drift, digest, err := password(a, o, s, crypt)
	if err != nil {
		return nil, "", err
	}
	require, err := a.TLS.clause()
	if err != nil {
		return nil, "", err
	}
	var stmts []string
	switch {
	case !o.Exists:
		// REQUIRE and the hourly limits only when set: an account that asks for neither is created as before.
		create := fmt.Sprintf("CREATE USER %s %s", acct, identified)
		if a.TLS.sslType() != "" {
			create += " " + require
		}
		create += fmt.Sprintf(" WITH MAX_USER_CONNECTIONS %d", a.MaxUserConnections)
		if a.MaxQueriesPerHour != 0 || a.MaxUpdatesPerHour != 0 || a.MaxConnectionsPerHour != 0 {
			create += " " + hourly(a)
		}
		stmts = append(stmts, create)
	default:
		if drift {
			stmts = append(stmts, fmt.Sprintf("ALTER USER %s %s", acct, identified))
		}
		if !a.TLS.matches(o) {
			stmts = append(stmts, fmt.Sprintf("ALTER USER %s %s", acct, require))
		}
		if o.MaxUserConnections != a.MaxUserConnections {
			stmts = append(stmts, fmt.Sprintf("ALTER USER %s WITH MAX_USER_CONNECTIONS %d", acct, a.MaxUserConnections))
		}
		if !hourlyMatch(a, o) {
			stmts = append(stmts, fmt.Sprintf("ALTER USER %s WITH %s", acct, hourly(a)))
		}
	}

	patterns := map[string]bool{}
	for p := range desired {
		patterns[p] = true
	}
	if o.Exists {
		for p := range o.Grants {
			patterns[p] = true
		}
	}
	ordered := make([]string, 0, len(patterns))
	for p := range patterns {
		ordered = append(ordered, p)
	}
	sort.Strings(ordered)
	for _, p := range ordered {
		var have []string
		if o.Exists {
			have = o.Grants[p]
		}
		want := desired[p]
		revoke, grant := diff(have, want), diff(want, have)
		q, err := quoteIdent(p)
		if err != nil {
			return nil, "", &Error{Kind: KindInvalidGrant, Op: "database name", Err: err}
		}
		if len(revoke) > 0 {
			stmts = append(stmts, fmt.Sprintf("REVOKE %s ON %s.* FROM %s", strings.Join(revoke, ", "), q, acct))
		}
		if len(grant) > 0 {
			stmts = append(stmts, fmt.Sprintf("GRANT %s ON %s.* TO %s", strings.Join(grant, ", "), q, acct))
		}
	}
	return stmts, digest, nil
}

// expand validates privilege names and replaces ALL PRIVILEGES with the server's database-level privileges.
// A privilege this server does not have (MySQL has no DELETE HISTORY) is an InvalidGrant.
func expand(privs, server []string, s Server) ([]string, error) {
	if len(server) == 0 {
		server = serverPrivileges(s)
	}
	set := map[string]bool{}
	for _, p := range privs {
		switch {
		case p == AllPrivileges:
			for _, x := range server {
				set[x] = true
			}
		case !slices.Contains(Privileges(), p):
			return nil, &Error{Kind: KindInvalidGrant, Op: "privileges", Err: fmt.Errorf("%q is not an allowed privilege", p)}
		case !slices.Contains(server, p):
			return nil, &Error{Kind: KindInvalidGrant, Op: "privileges", Err: fmt.Errorf("%s has no privilege %q", s, p)}
		default:
			set[p] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// serverPrivileges are the database-level privileges of a flavour, for when mysql.db could not be read.
func serverPrivileges(s Server) []string {
	var out []string
	for _, p := range Privileges()[1:] {
		if p == "DELETE HISTORY" && s.Flavor != MariaDB {
			continue
		}
		out = append(out, p)
	}
	return out
}

// escapeDatabasePattern makes a database name literal in GRANT ... ON `db`.*, where `_` and `%` are
// wildcards and backslash escapes them.
func escapeDatabasePattern(db string) string {
	r := strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`)
	return r.Replace(db)
}

// diff is a minus b, sorted.
func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}
