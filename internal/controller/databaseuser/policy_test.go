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

package databaseuser

import (
	"time"

	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

func TestMatchPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"shop", "shop", true},
		{"shop", "shop2", false},
		{"team-a_*", "team-a_orders", true},
		{"team-a_*", "team-a_", true},
		{"team-a_*", "team-a", false},
		{"team-a_*", "team-b_orders", false},
		{"*", "anything", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "acb", false},
		{"ab*b", "ab", false},
		{"x?y", "xzy", false}, // only * is special
		{"x?y", "x?y", true},
		{"[a]", "a", false},
	} {
		if got := (mysqlaccount.Policy{Databases: []string{tc.pattern}}).AllowsDatabase(tc.name); got != tc.want {
			t.Errorf("Policy{%q}.AllowsDatabase(%q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestCheckPolicy(t *testing.T) {
	target := func(mutate func(*mygroupv1alpha1.DatabaseTargetSpec)) *mygroupv1alpha1.DatabaseTarget {
		dt := &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: "shared"},
			Spec: mygroupv1alpha1.DatabaseTargetSpec{
				AllowedNamespaces: []string{"team-a", "team-b"},
				Databases:         []string{"${namespace}", "${namespace}_*", "common"},
				UserPrefix:        "${namespace}_",
			}}
		if mutate != nil {
			mutate(&dt.Spec)
		}
		return dt
	}
	dbu := func(ns, user string, dbs ...string) *mygroupv1alpha1.DatabaseUser {
		d := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "u"},
			Spec: mygroupv1alpha1.DatabaseUserSpec{User: user}}
		for _, db := range dbs {
			d.Spec.Grants = append(d.Spec.Grants, mygroupv1alpha1.Grant{Database: db, Privileges: []mygroupv1alpha1.Privilege{"SELECT"}})
		}
		return d
	}
	everyone := func(s *mygroupv1alpha1.DatabaseTargetSpec) {
		s.AllowedNamespaces, s.Databases, s.UserPrefix = []string{"*"}, []string{"*"}, ""
	}
	for _, tc := range []struct {
		name          string
		target        *mygroupv1alpha1.DatabaseTarget
		dbu           *mygroupv1alpha1.DatabaseUser
		reason, about string
	}{
		{"own databases", target(nil), dbu("team-a", "team-a_app", "team-a", "team-a_orders", "common"), "", ""},
		{"no grants", target(nil), dbu("team-b", "team-b_x"), "", ""},
		{"namespace not listed", target(nil), dbu("team-c", "team-c_app"), mygroupv1alpha1.ReasonTargetNotAllowed, `namespace "team-c"`},
		{"star allows every namespace", target(everyone), dbu("anyone", "x", "whatever"), "", ""},
		{"prefix missing", target(nil), dbu("team-a", "app"), mygroupv1alpha1.ReasonUserNotAllowed, `begin with "team-a_"`},
		{"another team's prefix", target(nil), dbu("team-a", "team-b_app"), mygroupv1alpha1.ReasonUserNotAllowed, `"team-a_"`},
		{"another team's database", target(nil), dbu("team-a", "team-a_app", "team-b_orders"), mygroupv1alpha1.ReasonGrantNotAllowed, `"team-b_orders"`},
		{"a database that only looks like ours", target(nil), dbu("team-a", "team-a_app", "team-a-orders"), mygroupv1alpha1.ReasonGrantNotAllowed, `"team-a-orders"`},
		{"star database is a name, not everything", target(nil), dbu("team-a", "team-a_app", "*"), mygroupv1alpha1.ReasonGrantNotAllowed, `"*"`},
		{"mysql even when * is allowed", target(everyone), dbu("x", "x", "mysql"), mygroupv1alpha1.ReasonGrantNotAllowed, "system schema"},
		{"sys", target(everyone), dbu("x", "x", "sys"), mygroupv1alpha1.ReasonGrantNotAllowed, "system schema"},
		{"information_schema in capitals", target(everyone), dbu("x", "x", "INFORMATION_SCHEMA"), mygroupv1alpha1.ReasonGrantNotAllowed, "system schema"},
		{"performance_schema", target(everyone), dbu("x", "x", "performance_schema"), mygroupv1alpha1.ReasonGrantNotAllowed, "system schema"},
		{"operator101's records", target(everyone), dbu("x", "x", "operator101"), mygroupv1alpha1.ReasonGrantNotAllowed, "system schema"},
		{"no databases listed", target(func(s *mygroupv1alpha1.DatabaseTargetSpec) { everyone(s); s.Databases = nil }), dbu("x", "x", "d"),
			mygroupv1alpha1.ReasonGrantNotAllowed, "no database"},
	} {
		_, got := checkPolicy(tc.target, tc.dbu)
		switch {
		case tc.reason == "" && got != nil:
			t.Errorf("%s: refused: %+v", tc.name, *got)
		case tc.reason != "" && got == nil:
			t.Errorf("%s: allowed, want %s", tc.name, tc.reason)
		case got != nil && (got.reason != tc.reason || !strings.Contains(got.message, tc.about)):
			t.Errorf("%s: %s %q, want %s about %s", tc.name, got.reason, got.message, tc.reason, tc.about)
		}
	}
}

// Config's defaults are set here and nowhere else (cmd/main.go leaves unset values zero).
func TestConfigDefaults(t *testing.T) {
	var c Config
	if err := c.complete(); err != nil || c.DefaultTarget != DefaultTarget || c.ResyncPeriod != DefaultResyncPeriod {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	if err := (&Config{ResyncPeriod: 10 * time.Millisecond}).complete(); err == nil {
		t.Error("a resync period under 1s was accepted")
	}
}

// TestAdoptable: an existing account is adoptable only on an Adopt target that lists its user name for the
// DatabaseUser's namespace and for no other: the admin's record of whose account it is.
func TestAdoptable(t *testing.T) {
	listed := []mygroupv1alpha1.AdoptableAccounts{
		{Namespace: "team-a", Users: []string{"app_a", "both"}},
		{Namespace: "team-b", Users: []string{"app_b", "both"}},
	}
	for _, tc := range []struct {
		policy   mygroupv1alpha1.ExistingAccountsPolicy
		listed   []mygroupv1alpha1.AdoptableAccounts
		ns, user string
		want     bool
	}{
		{mygroupv1alpha1.ExistingAccountsAdopt, listed, "team-a", "app_a", true},
		{mygroupv1alpha1.ExistingAccountsAdopt, listed, "team-b", "app_b", true},
		{mygroupv1alpha1.ExistingAccountsAdopt, listed, "team-b", "app_a", false}, // another team's account
		{mygroupv1alpha1.ExistingAccountsAdopt, listed, "team-c", "app_a", false},
		{mygroupv1alpha1.ExistingAccountsAdopt, listed, "team-a", "both", false}, // listed twice: neither's
		{mygroupv1alpha1.ExistingAccountsAdopt, listed, "team-a", "unlisted", false},
		{mygroupv1alpha1.ExistingAccountsAdopt, listed, "team-a", "APP_A", false}, // names as they are
		{mygroupv1alpha1.ExistingAccountsAdopt, nil, "team-a", "app_a", false},    // no record: adopt nothing
		{mygroupv1alpha1.ExistingAccountsRefuse, listed, "team-a", "app_a", false},
		{"", listed, "team-a", "app_a", false},
	} {
		spec := &mygroupv1alpha1.DatabaseTargetSpec{ExistingAccounts: tc.policy, AdoptableAccounts: tc.listed}
		if got := adoptable(spec, tc.ns, tc.user); got != tc.want {
			t.Errorf("%s, %d lists, %s names %q: adoptable %v, want %v", tc.policy, len(tc.listed), tc.ns, tc.user, got, tc.want)
		}
	}
}
