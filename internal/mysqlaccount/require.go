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
	"fmt"
	"strings"
	"unicode/utf8"
)

// What an account requires of its clients' connections (CREATE/ALTER USER ... REQUIRE), and its hourly limits.
// MariaDB and MySQL share the statements and the mysql.user columns they set (ssl_type, x509_subject,
// x509_issuer, ssl_cipher; max_questions, max_updates, max_connections).

// Require is the kind of TLS an account requires.
type Require string

const (
	// RequireNone: connections with or without TLS (REQUIRE NONE).
	RequireNone Require = ""
	// RequireSSL: TLS (REQUIRE SSL).
	RequireSSL Require = "SSL"
	// RequireX509: TLS and a client certificate the server's CA verifies (REQUIRE X509), and, with Subject or
	// Issuer, a certificate with that subject or issuer (REQUIRE SUBJECT '...' AND ISSUER '...').
	RequireX509 Require = "X509"
)

// TLSRequirement is what an account requires of its connections; the zero value requires nothing.
type TLSRequirement struct {
	Require Require
	// Subject and Issuer, with RequireX509, are the distinguished names the client certificate must carry, as
	// the server prints them ("/C=DE/O=Example/CN=app").
	Subject, Issuer string
}

// MaxDistinguishedNameLength bounds Subject and Issuer.
const MaxDistinguishedNameLength = 1024

// sslType is the mysql.user ssl_type the requirement sets: "", ANY, X509 or SPECIFIED.
func (r TLSRequirement) sslType() string {
	switch {
	case r.Require == RequireSSL:
		return "ANY"
	case r.Require == RequireX509 && (r.Subject != "" || r.Issuer != ""):
		return "SPECIFIED"
	case r.Require == RequireX509:
		return "X509"
	}
	return ""
}

// clause is the REQUIRE clause of the requirement. Subject and Issuer are '...' literals: checkDN allows
// neither a quote nor a backslash in them, so the literal means the same whatever sql_mode says.
func (r TLSRequirement) clause() (string, error) {
	switch r.sslType() {
	case "ANY":
		return "REQUIRE SSL", nil
	case "X509":
		return "REQUIRE X509", nil
	case "SPECIFIED":
		var parts []string
		for _, p := range []struct{ what, dn string }{{"SUBJECT", r.Subject}, {"ISSUER", r.Issuer}} {
			if p.dn == "" {
				continue
			}
			if err := checkDN(p.dn); err != nil {
				return "", &Error{Kind: KindInvalidAccount, Op: "TLS " + strings.ToLower(p.what), Err: err}
			}
			parts = append(parts, p.what+" '"+p.dn+"'")
		}
		return "REQUIRE " + strings.Join(parts, " AND "), nil
	}
	if r.Require != RequireNone {
		return "", &Error{Kind: KindInvalidAccount, Op: "TLS requirement", Err: fmt.Errorf("%q is not SSL or X509", r.Require)}
	}
	return "REQUIRE NONE", nil
}

// matches says whether the observed account requires exactly r.
func (r TLSRequirement) matches(o *Observed) bool {
	if o.SSLType != r.sslType() || o.SSLCipher != "" {
		return false
	}
	if r.sslType() == "SPECIFIED" {
		return o.X509Subject == r.Subject && o.X509Issuer == r.Issuer
	}
	return true
}

// errBadDN: a distinguished name that cannot be put in a statement as it is.
var errBadDN = errors.New("a distinguished name must be valid UTF-8 without quotes, backslashes or control characters")

// checkDN refuses a distinguished name that a '...' literal would not carry unchanged under every sql_mode.
func checkDN(dn string) error {
	if !utf8.ValidString(dn) || len(dn) > MaxDistinguishedNameLength {
		return fmt.Errorf("%w (at most %d bytes)", errBadDN, MaxDistinguishedNameLength)
	}
	for _, c := range dn {
		if c == '\'' || c == '\\' || c < 0x20 || c == 0x7f {
			return errBadDN
		}
	}
	return nil
}

// hourly is the WITH clause's hourly limits of a, as the statements write them.
func hourly(a Account) string {
	return fmt.Sprintf("MAX_QUERIES_PER_HOUR %d MAX_UPDATES_PER_HOUR %d MAX_CONNECTIONS_PER_HOUR %d",
		a.MaxQueriesPerHour, a.MaxUpdatesPerHour, a.MaxConnectionsPerHour)
}

// hourlyMatch says whether the observed account has a's hourly limits.
func hourlyMatch(a Account, o *Observed) bool {
	return o.MaxQuestions == a.MaxQueriesPerHour && o.MaxUpdates == a.MaxUpdatesPerHour && o.MaxConnections == a.MaxConnectionsPerHour
}
