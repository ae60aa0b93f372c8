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
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// The pure parts of the controller: what the account, the target and the target's name are, from the
// objects alone. Table-tested without a cluster or a database.

// targetName is the DatabaseTarget a DatabaseUser picks: its `target` label, or the default.
func targetName(dbu *mygroupv1alpha1.DatabaseUser, defaultTarget string) string {
	if t := dbu.Labels[mygroupv1alpha1.TargetLabel]; t != "" {
		return t
	}
	return defaultTarget
}

// accountHost is the spec's host, '%' when unset.
func accountHost(dbu *mygroupv1alpha1.DatabaseUser) string {
	if dbu.Spec.Host == "" {
		return "%"
	}
	return dbu.Spec.Host
}

// desiredAccount is the account a DatabaseUser asks for, with its password.
func desiredAccount(dbu *mygroupv1alpha1.DatabaseUser, password string) mysqlaccount.Account {
	a := mysqlaccount.Account{User: dbu.Spec.User, Host: accountHost(dbu), Password: password}
	for _, l := range []struct {
		from *int32
		to   *int64
	}{{dbu.Spec.MaxUserConnections, &a.MaxUserConnections}, {dbu.Spec.MaxQueriesPerHour, &a.MaxQueriesPerHour},
		{dbu.Spec.MaxUpdatesPerHour, &a.MaxUpdatesPerHour}, {dbu.Spec.MaxConnectionsPerHour, &a.MaxConnectionsPerHour}} {
		if l.from != nil {
			*l.to = int64(*l.from)
		}
	}
	a.TLS = accountTLS(dbu.Spec.TLS)
	if len(dbu.Spec.Grants) > 0 {
		a.Grants = map[string][]string{}
		for _, g := range dbu.Spec.Grants {
			for _, p := range g.Privileges {
				a.Grants[g.Database] = append(a.Grants[g.Database], string(p))
			}
		}
	}
	return a
}

// accountTLS is what spec.tls requires, in mysqlaccount's terms (nothing when unset; SSL when require is
// unset, the schema's default).
func accountTLS(t *mygroupv1alpha1.AccountTLS) mysqlaccount.TLSRequirement {
	if t == nil {
		return mysqlaccount.TLSRequirement{}
	}
	switch t.Require {
	case mygroupv1alpha1.AccountRequireNone:
		return mysqlaccount.TLSRequirement{}
	case mygroupv1alpha1.AccountRequireX509:
		return mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireX509, Subject: t.Subject, Issuer: t.Issuer}
	}
	return mysqlaccount.TLSRequirement{Require: mysqlaccount.RequireSSL}
}

// desiredClaimedAccount is desiredAccount, claimed in the server for dbu, adopted only when the target's policy
// allows it (allowed.adopt), and only when all the account holds lies within the databases the policy allows
// dbu's namespace.
func desiredClaimedAccount(dbu *mygroupv1alpha1.DatabaseUser, allowed allowance, password string) mysqlaccount.Account {
	a := desiredAccount(dbu, password)
	a.Claimant = claimant(dbu)
	if allowed.requireTLS && a.TLS.Require == mysqlaccount.RequireNone {
		a.TLS.Require = mysqlaccount.RequireSSL
	}
	if a.Adopt = allowed.adopt; a.Adopt {
		a.AdoptDatabases = allowed.databases.Databases
	}
	return a
}

// claimant is how the claim table names a DatabaseUser.
func claimant(dbu *mygroupv1alpha1.DatabaseUser) mysqlaccount.Claimant {
	return mysqlaccount.Claimant{UID: string(dbu.UID), Namespace: dbu.Namespace, Name: dbu.Name}
}

// targetFromSecret reads a target's admin Secret: host, port (default 3306), username, password, for TLS
// ca.crt, tls.crt and tls.key, and server-public-key.pem (the server's RSA key, pinned; used without TLS).
func targetFromSecret(spec *mygroupv1alpha1.DatabaseTargetSpec, s *corev1.Secret) (mysqlaccount.Target, error) {
	t := mysqlaccount.Target{Host: string(s.Data["host"]), User: string(s.Data["username"]),
		Password: string(s.Data["password"]), Port: 3306}
	var missing []string
	for _, k := range []string{"host", "username", "password"} {
		if len(s.Data[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return t, fmt.Errorf("admin Secret %s/%s lacks %s", s.Namespace, s.Name, strings.Join(missing, ", "))
	}
	if p := string(s.Data["port"]); p != "" {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > 65535 {
			return t, fmt.Errorf("admin Secret %s/%s: port is not a number from 1 to 65535", s.Namespace, s.Name)
		}
		t.Port = n
	}
	mode := spec.TLS.Mode
	if mode == "" {
		mode = mygroupv1alpha1.TLSVerifyFull
	}
	serverName := spec.TLS.ServerName
	if serverName == "" {
		serverName = t.Host
	}
	cfg, err := mysqlaccount.TLSConfig(mysqlaccount.TLSMode(mode), serverName, s.Data["ca.crt"], s.Data["tls.crt"], s.Data["tls.key"])
	if err != nil {
		return t, fmt.Errorf("admin Secret %s/%s: TLS: %w", s.Namespace, s.Name, err)
	}
	t.TLS = cfg
	if k := s.Data["server-public-key.pem"]; len(k) > 0 {
		if t.ServerPublicKey, err = mysqlaccount.ParseServerPublicKey(k); err != nil {
			return t, fmt.Errorf("admin Secret %s/%s: server-public-key.pem: %w", s.Namespace, s.Name, err)
		}
	}
	return t, nil
}

// redact removes every secret from a message meant for a condition, an Event, a log line or an error.
func redact(msg string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return msg
}
