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

// TestAdoptionObstacles: SHOW GRANTS lines as MariaDB 10.11 (read from the server, also under ANSI_QUOTES) and
// MySQL 8.0/8.4 (from its manual: roles as `r`@`%`, dynamic privileges, PROXY on “@“, partial revokes) print
// them, against the policy of namespace team-a with the default databases.
func TestAdoptionObstacles(t *testing.T) {
	policy := []string{"team-a", "team-a_*"}
	const usage = "GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*B69027D44F6E5EDC07F1AEAD1477967B16F28227' WITH MAX_USER_CONNECTIONS 3"
	for _, tc := range []struct {
		name  string
		lines []string
		want  obstacles
	}{
		// Adoptable.
		{"MariaDB: nothing but USAGE", []string{usage}, 0},
		{"MySQL: nothing but USAGE", []string{"GRANT USAGE ON *.* TO `u`@`%`"}, 0},
		{"MariaDB: REQUIRE and resource limits", []string{"GRANT USAGE ON *.* TO `u`@`%` REQUIRE ISSUER 'x\"y' SUBJECT 'a''b WITH GRANT OPTION' WITH MAX_QUERIES_PER_HOUR 5"}, 0},
		{"grants in the allowed databases, escaped as operator101 grants them", []string{usage,
			"GRANT SELECT, INSERT ON `team\\-a\\_app`.* TO `u`@`%`", "GRANT ALL PRIVILEGES ON `team-a`.* TO `u`@`%`"}, 0},
		{"table, column and routine grants in the allowed databases", []string{usage,
			"GRANT SELECT (`c`), INSERT (`c`, `d`), UPDATE ON `team-a_app`.`t` TO `u`@`%`",
			"GRANT EXECUTE ON PROCEDURE `team-a_app`.`p` TO `u`@`%`",
			"GRANT EXECUTE, ALTER ROUTINE ON FUNCTION `team-a`.`f` TO `u`@`%`",
			"GRANT EXECUTE ON PACKAGE BODY `team-a`.`pk` TO `u`@`%`",
			"GRANT SELECT ON TABLE `team-a`.`t` TO `u`@`%`"}, 0},
		{"MariaDB under ANSI_QUOTES", []string{`GRANT USAGE ON *.* TO "u"@"%"`, `GRANT SELECT ON "team-a\_x".* TO "u"@"%"`}, 0},
		{"a quoted name that reads like a clause", []string{"GRANT SELECT ON `team-a_x`.`t TO x WITH GRANT OPTION` TO `u`@`%`"}, 0},

		// Global privileges.
		{"MariaDB: a global privilege", []string{"GRANT SELECT, RELOAD ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*B69027D44F6E5EDC07F1AEAD1477967B16F28227'"}, obstacleGlobal},
		{"MariaDB: ALL PRIVILEGES", []string{"GRANT ALL PRIVILEGES ON *.* TO `dba`@`%` WITH GRANT OPTION"}, obstacleGlobal | obstacleGrantOption},
		{"MySQL: a replication account", []string{"GRANT REPLICATION SLAVE ON *.* TO `repl`@`%`"}, obstacleGlobal},
		{"MySQL: dynamic privileges", []string{"GRANT USAGE ON *.* TO `u`@`%`", "GRANT BACKUP_ADMIN,CONNECTION_ADMIN ON *.* TO `u`@`%`"}, obstacleGlobal},
		{"MySQL: a partial revoke", []string{"GRANT SELECT ON *.* TO `u`@`%`", "REVOKE SELECT ON `mysql`.* FROM `u`@`%`"}, obstacleGlobal},
		// GRANT OPTION.
		{"GRANT OPTION alone", []string{"GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*B6' WITH GRANT OPTION"}, obstacleGrantOption},
		{"GRANT OPTION in an allowed database", []string{usage, "GRANT SELECT ON `team-a\\_app`.* TO `u`@`%` WITH GRANT OPTION"}, obstacleGrantOption},
		{"GRANT OPTION on a table", []string{usage, "GRANT SELECT ON `team-a_app`.`t` TO `u`@`%` WITH GRANT OPTION"}, obstacleGrantOption},
		// Roles.
		{"MariaDB: a role", []string{"GRANT `r o``le` TO `u`@`%` WITH ADMIN OPTION", usage, "SET DEFAULT ROLE `r o``le` FOR `u`@`%`"}, obstacleRoles},
		{"MariaDB: a role named on", []string{"GRANT `on` TO `u`@`%`", usage}, obstacleRoles},
		{"MySQL: roles", []string{"GRANT USAGE ON *.* TO `u`@`%`", "GRANT `r1`@`%`,`r2`@`%` TO `u`@`%`"}, obstacleRoles},
		// Proxy grants.
		{"MariaDB: a proxy grant", []string{usage, "GRANT PROXY ON `dba`@`%` TO `u`@`%`"}, obstacleProxy},
		{"MySQL: a proxy grant with GRANT OPTION", []string{"GRANT PROXY ON ``@`` TO `u`@`%` WITH GRANT OPTION"}, obstacleProxy | obstacleGrantOption},
		// Database-level grants outside.
		{"another tenant's database", []string{usage, "GRANT SELECT ON `team-b_orders`.* TO `u`@`%`"}, obstacleDatabase},
		{"a system schema", []string{usage, "GRANT SELECT ON `mysql`.* TO `u`@`%`"}, obstacleDatabase},
		{"operator101's schema", []string{usage, "GRANT SELECT ON `operator101`.* TO `u`@`%`"}, obstacleDatabase},
		{"every database", []string{usage, "GRANT SELECT ON `%`.* TO `u`@`%`"}, obstacleDatabase},
		{"a pattern wider than the policy", []string{usage, "GRANT SELECT ON `team-a%`.* TO `u`@`%`"}, obstacleDatabase},
		{"an unescaped _ is a wildcard", []string{usage, "GRANT SELECT ON `team-a_app`.* TO `u`@`%`"}, obstacleDatabase},
		// Table, column and routine grants outside.
		{"a table elsewhere", []string{usage, "GRANT SELECT ON `team-b_orders`.`t` TO `u`@`%`"}, obstacleTable},
		{"a column elsewhere", []string{usage, "GRANT SELECT (`password`) ON `mysql`.`user` TO `u`@`%`"}, obstacleTable},
		{"a procedure elsewhere", []string{usage, "GRANT EXECUTE ON PROCEDURE `team-b`.`p` TO `u`@`%`"}, obstacleRoutine},
		{"a function elsewhere", []string{usage, "GRANT EXECUTE ON FUNCTION `sys`.`f` TO `u`@`%`"}, obstacleRoutine},
		{"a table whose database is a pattern's look-alike", []string{usage, "GRANT SELECT ON `team-a`.`t` TO `u`@`%`",
			"GRANT SELECT ON `team-ab`.`t` TO `u`@`%`"}, obstacleTable},
		// What is not understood refuses.
		{"an unterminated quote", []string{"GRANT SELECT ON `team-a`.* TO `u`@`%"}, obstacleUnknown},
		{"another statement", []string{"CREATE USER `u`@`%`"}, obstacleUnknown},
		{"an empty line", []string{""}, obstacleUnknown},
		{"no TO", []string{"GRANT SELECT ON `team-a`.*"}, obstacleUnknown},
		{"the current database", []string{"GRANT SELECT ON * TO `u`@`%`"}, obstacleUnknown},
		{"columns on every database", []string{"GRANT SELECT (`c`) ON `team-a`.* TO `u`@`%`"}, obstacleUnknown},
		{"unbalanced parentheses", []string{"GRANT SELECT (`c` ON `team-a`.`t` TO `u`@`%`"}, obstacleUnknown},
		{"everything at once", []string{"GRANT ALL PRIVILEGES ON *.* TO `u`@`%` WITH GRANT OPTION", "GRANT `r` TO `u`@`%`",
			"GRANT PROXY ON `a`@`%` TO `u`@`%`", "GRANT SELECT ON `x`.* TO `u`@`%`", "GRANT SELECT ON `x`.`t` TO `u`@`%`",
			"GRANT EXECUTE ON PROCEDURE `x`.`p` TO `u`@`%`", "?"},
			obstacleGlobal | obstacleGrantOption | obstacleRoles | obstacleProxy | obstacleDatabase | obstacleTable | obstacleRoutine | obstacleUnknown},
	} {
		if got := adoptionObstacles(tc.lines, policy); got != tc.want {
			t.Errorf("%s: %q (%b), want %q (%b)", tc.name, got, got, tc.want, tc.want)
		}
	}
	// No databases allowed: any grant on one is in the way.
	if got := adoptionObstacles([]string{usage, "GRANT SELECT ON `team-a`.* TO `u`@`%`"}, nil); got != obstacleDatabase {
		t.Errorf("no databases allowed: %q", got)
	}
	if got := adoptionObstacles([]string{usage}, nil); got != 0 {
		t.Errorf("no databases allowed, no grants: %q", got)
	}
}

// TestPatternAllowed: a mysql.db pattern fits the policy only when every name it covers does.
func TestPatternAllowed(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		policy  []string
		want    bool
	}{
		{`team-a`, []string{"team-a"}, true},
		{`team-a\_x`, []string{"team-a_*"}, true},
		{`team-a\_%`, []string{"team-a_*"}, true},
		{`team-a\_x%y\_`, []string{"team-a_*"}, true},
		{`team-a_x`, []string{"team-a_*"}, false},          // team-aXx
		{`team-a_x`, []string{"team-a*"}, true},            // any character after team-a
		{`team-a%`, []string{"team-a", "team-a_*"}, false}, // team-ab: no single pattern, nor the two, cover it
		{`%`, []string{"*"}, false},                        // covers mysql
		{`m_sql`, []string{"*"}, false},                    // covers mysql
		{`MYSQL`, []string{"*"}, false},                    // the same schema where names fold case
		{`app\_%`, []string{"*"}, true},
		{`a\\b`, []string{`a\b`}, true},
		{`x`, nil, false},
		{`team-a\_x`, []string{"*_x"}, true},
		{`team-a\_%x`, []string{"*_x"}, false}, // team-a_Ax
		{`%_x`, []string{"*_x"}, false},
	} {
		if got := (Policy{Databases: tc.policy}).allowsPattern(tc.pattern); got != tc.want {
			t.Errorf("patternAllowed(%q, %q) = %v, want %v", tc.pattern, tc.policy, got, tc.want)
		}
	}
}

// TestAdoptionRefusedMessage: the message names the kinds, in a fixed order, and nothing of the account's.
func TestAdoptionRefusedMessage(t *testing.T) {
	o := adoptionObstacles([]string{"GRANT PROXY ON `secret-proxied`@`%` TO `u`@`%`", "GRANT `secret-role` TO `u`@`%`",
		"GRANT SELECT ON `secret-db`.* TO `u`@`%` IDENTIFIED BY PASSWORD '*SECRETHASH'"}, []string{"team-a"})
	msg := o.String()
	if msg != "roles granted to it, proxy grants and database-level grants outside the target's databases" {
		t.Errorf("message %q", msg)
	}
	for _, s := range []string{"secret", "SECRET"} {
		if strings.Contains(msg, s) {
			t.Errorf("the message tells about the account: %q", msg)
		}
	}
}

// FuzzAdoptionObstacles: a name the server quotes (a table, a role, the account itself) cannot change how a
// SHOW GRANTS line is read, whatever it holds; and no line makes the reading panic.
func FuzzAdoptionObstacles(f *testing.F) {
	for _, s := range []string{"t", "t` TO `x` WITH GRANT OPTION", "ON", "*.*", "a'b", `a"b`, "用户", "(", ""} {
		f.Add(s)
	}
	policy := []string{"team-a", "team-a_*"}
	f.Fuzz(func(t *testing.T, name string) {
		_ = adoptionObstacles([]string{name, "GRANT " + name + " ON *.* TO x"}, policy)
		q, err := quoteIdent(name)
		if err != nil {
			return
		}
		acct := q + "@`%`"
		for _, tc := range []struct {
			line string
			want obstacles
		}{
			{"GRANT USAGE ON *.* TO " + acct + " IDENTIFIED BY PASSWORD '*B6'", 0},
			{"GRANT SELECT, INSERT ON `team-a_app`." + q + " TO " + acct, 0},
			{"GRANT SELECT (" + q + ") ON `team-a`.`t` TO " + acct, 0},
			{"GRANT SELECT ON `" + escapeDatabasePattern("team-a_"+strings.ReplaceAll(name, "`", "``")) + "`.* TO " + acct, 0},
			{"GRANT " + q + " TO " + acct, obstacleRoles},
			{"GRANT SELECT ON `team-b`." + q + " TO " + acct, obstacleTable},
			{"GRANT PROXY ON " + acct + " TO " + acct, obstacleProxy},
		} {
			if got := adoptionObstacles([]string{tc.line}, policy); got != tc.want {
				t.Fatalf("%s: %q, want %q", tc.line, got, tc.want)
			}
		}
	})
}
