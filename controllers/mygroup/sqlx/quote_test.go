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

package sqlx

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestQuoteIdent(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "alice", want: "`alice`"},
		{in: "a`b", want: "`a``b`"},
		{in: "``", want: "``````"},
		{in: `o'brien\`, want: "`o'brien\\`"},
		{in: "x`; DROP USER root; -- ", bad: true}, // trailing space
		{in: "x`; DROP USER root; --", want: "`x``; DROP USER root; --`"},
		{in: "用户", want: "`用户`"},
		{in: "nul\x00", bad: true},
		{in: "key🔑", bad: true},
		{in: "\xff", bad: true},
	} {
		got, err := quoteIdent(tc.in)
		if tc.bad {
			if !errors.Is(err, ErrInvalidName) {
				t.Errorf("quoteIdent(%q) = %q, %v; want ErrInvalidName", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("quoteIdent(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestEscapeDatabasePattern(t *testing.T) {
	if got, want := escapeDatabasePattern(`my_db%\x`), `my\_db\%\\x`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestNativePasswordHash(t *testing.T) {
	// The value MariaDB's PASSWORD('password') returns.
	if got, want := NativePasswordHash("password"), "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestPlan(t *testing.T) {
	const pw = "s3cret'; DROP USER x; --"
	hash := NativePasswordHash(pw)
	server := Privileges()[1:]
	for _, tc := range []struct {
		name string
		a    Account
		o    Observed
		want []string
	}{{
		name: "absent account is created with its grants",
		a:    Account{User: "app", Host: "%", Password: pw, Grants: map[string][]string{"shop_db": {"SELECT", "INSERT"}}},
		o:    Observed{serverPrivileges: server},
		want: []string{
			"CREATE USER `app`@`%` IDENTIFIED BY PASSWORD '" + hash + "' WITH MAX_USER_CONNECTIONS 0",
			"GRANT INSERT, SELECT ON `shop\\_db`.* TO `app`@`%`",
		},
	}, {
		name: "converged account needs nothing",
		a:    Account{User: "app", Host: "%", Password: pw, MaxUserConnections: 5, Grants: map[string][]string{"d": {"SELECT"}}},
		o: Observed{Exists: true, Plugin: "mysql_native_password", AuthString: hash, MaxUserConnections: 5,
			Grants: map[string][]string{"d": {"SELECT"}}, serverPrivileges: server},
	}, {
		name: "rotation, limit, extra and missing privileges, grants on another database and GRANT OPTION",
		a:    Account{User: "app", Host: "%", Password: pw, Grants: map[string][]string{"d": {"SELECT", "UPDATE"}}},
		o: Observed{Exists: true, Plugin: "mysql_native_password", AuthString: "*OLD", MaxUserConnections: 3,
			Grants: map[string][]string{"d": {"DELETE", "GRANT OPTION", "SELECT"}, "other": {"SELECT"}}, serverPrivileges: server},
		want: []string{
			"ALTER USER `app`@`%` IDENTIFIED BY PASSWORD '" + hash + "'",
			"ALTER USER `app`@`%` WITH MAX_USER_CONNECTIONS 0",
			"REVOKE DELETE, GRANT OPTION ON `d`.* FROM `app`@`%`",
			"GRANT UPDATE ON `d`.* TO `app`@`%`",
			"REVOKE SELECT ON `other`.* FROM `app`@`%`",
		},
	}, {
		name: "ALL PRIVILEGES expands to what the server has",
		a:    Account{User: "app", Host: "%", Password: pw, Grants: map[string][]string{"d": {"ALL PRIVILEGES"}}},
		o: Observed{Exists: true, Plugin: "mysql_native_password", AuthString: hash,
			Grants: map[string][]string{"d": {"SELECT"}}, serverPrivileges: []string{"INSERT", "SELECT"}},
		want: []string{"GRANT INSERT ON `d`.* TO `app`@`%`"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := plan(tc.a, &tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for _, s := range got {
				if strings.Contains(s, pw) {
					t.Errorf("statement carries the password: %s", s)
				}
			}
		})
	}
}

func TestPlanRejects(t *testing.T) {
	for name, a := range map[string]Account{
		"privilege outside the allow-list": {User: "u", Host: "%", Grants: map[string][]string{"d": {"SUPER"}}},
		"database with NUL":                {User: "u", Host: "%", Grants: map[string][]string{"d\x00": {"SELECT"}}},
	} {
		if _, err := plan(a, &Observed{}); KindOf(err) != KindInvalidGrant {
			t.Errorf("%s: got %v, want an InvalidGrant error", name, err)
		}
	}
	if _, err := plan(Account{User: "u\x00", Host: "%"}, &Observed{}); !errors.Is(err, ErrInvalidName) {
		t.Errorf("user with NUL: got %v", err)
	}
}
