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
	"errors"
	"strings"
	"testing"
)

func TestReserved(t *testing.T) {
	for user, want := range map[string]bool{
		"root": true, "ROOT": true, "mysql.sys": true, "mysql.session": true,
		"mysql.infoschema": true, "MySQL.whatever": true, "mariadb.sys": true, "PUBLIC": true, "": true,
		"operator101admin": false, // the admin's name: refused as not owned, see TestOnlyWhatItOwns
		"app":              false, "rooted": false, "mysql": false, "mysqlx": false, "team-a_app": false,
	} {
		if got := Reserved(user); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", user, got, want)
		}
	}
}

// TestDecide is the claim rule, case by case. Every refusal says the same to the tenant, whatever the server
// holds: no other host, no other DatabaseUser, and not whether the account exists; the operator's log (Detail)
// says which case it is.
func TestDecide(t *testing.T) {
	me := Claimant{UID: "me", Namespace: "team-a", Name: "app"}
	other := &claim{Claimant: Claimant{UID: "other", Namespace: "team-b", Name: "theirs"}}
	mine := &claim{Claimant: me}
	const want = `account u@%: user name "u" is not this DatabaseUser's to manage: operator101 holds no claim on it ` +
		`for this DatabaseUser (the server's admin can tell why, and free the name)`
	for _, tc := range []struct {
		name   string
		adopt  bool
		o      Observed
		want   decision
		detail string // part of the KindNotClaimed error's Detail, "" when allowed
	}{
		{name: "new account", o: Observed{}, want: manage},
		{name: "our account", o: Observed{Exists: true, Claim: mine}, want: manage},
		{name: "our account, dropped by hand", o: Observed{Claim: mine}, want: manage},
		{name: "made by hand", o: Observed{Exists: true}, detail: "was not created by operator101"},
		{name: "made by hand, target adopts", adopt: true, o: Observed{Exists: true}, want: adopt},
		{name: "another DatabaseUser's", o: Observed{Exists: true, Claim: other}, detail: "recorded as team-b/theirs's"},
		{name: "another DatabaseUser's, even when adopting", adopt: true, o: Observed{Exists: true, Claim: other},
			detail: "recorded as team-b/theirs's"},
		{name: "stale record of another", o: Observed{Claim: other}, detail: "delete its row"},
		{name: "same user, other host, by hand", o: Observed{OtherHosts: []string{"10.0.0.1"}}, detail: `host "10.0.0.1"`},
		{name: "same user, other host, by hand, adopting", adopt: true, o: Observed{OtherHosts: []string{"10.0.0.1"}},
			detail: `host "10.0.0.1"`},
		{name: "same user, other host, another's", o: Observed{OtherHosts: []string{"h"}, OtherClaims: map[string]*claim{"h": other}},
			detail: `host "h"`},
		{name: "same user, other host not created yet, another's", o: Observed{OtherClaims: map[string]*claim{"h": other}},
			detail: `recorded with host "h"`},
		{name: "same user, other host, ours", o: Observed{OtherHosts: []string{"h"}, OtherClaims: map[string]*claim{"h": mine}}, want: manage},
	} {
		a := Account{User: "u", Host: "%", Claimant: me, Adopt: tc.adopt}
		got, err := decide(a, &tc.o, notOwned(a.User, a.Host))
		switch {
		case tc.detail == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		case tc.detail == "":
		case KindOf(err) != KindNotClaimed:
			t.Errorf("%s: %v; want NotClaimed", tc.name, err)
		case err.Error() != want:
			// The same text whether the account exists, exists with another host, or is only recorded.
			t.Errorf("%s: the tenant reads %q; want %q", tc.name, err, want)
		case !strings.Contains(Detail(err), tc.detail):
			t.Errorf("%s: the log reads %q; want it to say %q", tc.name, Detail(err), tc.detail)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for v, want := range map[string]string{
		"10.11.19-MariaDB-0+deb12u1": "MariaDB 10.11.19",
		"11.8.3-MariaDB-ubu2404":     "MariaDB 11.8.3",
		"10.6.21-MariaDB":            "MariaDB 10.6.21",
		"8.0.40":                     "MySQL 8.0.40",
		"8.4.3-commercial":           "MySQL 8.4.3",
		"9.1.0":                      "MySQL 9.1.0",
	} {
		s, err := ParseVersion(v)
		if err != nil || s.String() != want || s.supported() != "" {
			t.Errorf("%s: %v (%q), %v; want %s, supported", v, s, s.supported(), err, want)
		}
	}
	for _, v := range []string{"10.5.27-MariaDB", "5.7.44", "10.3.39-MariaDB-0+deb10u2"} {
		s, err := ParseVersion(v)
		if err != nil || !strings.Contains(s.supported(), "not supported") {
			t.Errorf("%s: %v %v: want not supported", v, s, err)
		}
	}
	if _, err := ParseVersion("garbage"); err == nil {
		t.Error("garbage parsed")
	}
}

func TestTLSConfig(t *testing.T) {
	if cfg, err := TLSConfig(TLSDisabled, "db", nil, nil, nil); cfg != nil || err != nil {
		t.Errorf("Disabled: %v, %v", cfg, err)
	}
	req, err := TLSConfig(TLSRequired, "db", nil, nil, nil)
	if err != nil || !req.InsecureSkipVerify || req.VerifyConnection != nil {
		t.Errorf("Required: %+v, %v", req, err)
	}
	// VerifyCA needs a CA (TestVerifyCANeedsCA); with one, it verifies the chain itself.
	ca, err := TLSConfig(TLSVerifyCA, "db", nil, nil, nil)
	if ca != nil || !errors.Is(err, ErrVerifyCANeedsCA) {
		t.Errorf("VerifyCA without a CA: a configuration to connect with: %t, error %v", ca != nil, err)
	}
	full, err := TLSConfig(TLSVerifyFull, "db.example", nil, nil, nil)
	if err != nil || full.InsecureSkipVerify || full.ServerName != "db.example" {
		t.Errorf("VerifyFull: %+v, %v", full, err)
	}
	for name, args := range map[string][3]string{
		"not PEM CA":       {"not pem", "", ""},
		"cert without key": {"", "cert", ""},
		"key without cert": {"", "", "key"},
		"garbage pair":     {"", "cert", "TOPSECRETKEY"},
	} {
		_, err := TLSConfig(TLSVerifyFull, "db", []byte(args[0]), []byte(args[1]), []byte(args[2]))
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "TOPSECRETKEY") {
			t.Errorf("%s: the error carries the key", name)
		}
	}
	if _, err := TLSConfig("Preferred", "db", nil, nil, nil); err == nil {
		t.Error("an unknown mode was accepted")
	}
}
