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

// What Ensure refuses before it reads anything from the server, or hashes anything: pure functions of the
// desired account, the server's flavour and the admin account's name, table-tested without a server. And what
// the steps after it take from there: the account's name quoted for the statements, and the words of a refusal
// of an account that is not the claimant's (notOwned).

// refuse returns the error for an account Ensure must not touch whatever the server holds: a name the server
// cannot store, a reserved account, the target's admin account, a grant on a system schema, a password longer
// than s accepts (KindInvalidAccount, KindReserved, KindNotClaimed, KindInvalidGrant, KindPasswordTooLong).
// Otherwise it returns the account's name quoted for the statements (accountName): the steps after it use that.
// notClaimed is notOwned(a.User, a.Host).
func refuse(a Account, s Server, admin string, notClaimed refusal) (string, error) {
	acct, err := checkAccount(a.User, a.Host)
	if err != nil {
		return "", err
	}
	if Reserved(a.User) {
		return "", &Error{Kind: KindReserved, Op: "account " + a.User + "@" + a.Host,
			Err: errors.New("it is reserved (root, the server's own accounts): never managed by operator101")}
	}
	if a.User == admin {
		return "", notClaimed("it is the target's admin account: never managed")
	}
	for db := range a.Grants {
		if SystemSchema(db) {
			return "", &Error{Kind: KindInvalidGrant, Op: "grants", Err: fmt.Errorf("database %q is a system schema", db)}
		}
	}
	if err := checkPassword(a.Password, s); err != nil {
		return "", err
	}
	return acct, nil
}

// refusal is the error of KindNotClaimed for one account, given why (notOwned).
type refusal func(why string) error

// notOwned is the refusal of user@host: the tenant-facing text is the same whatever the server holds, so that
// a DatabaseUser cannot learn from it whether an account it does not own exists, or with which hosts. why,
// what the server holds, is for the operator's log only (Error.Why). Ensure builds it once, and refuse, decide
// and record each give their why.
func notOwned(user, host string) refusal {
	return func(why string) error {
		return &Error{Kind: KindNotClaimed, Op: "account " + user + "@" + host, Why: why,
			Err: fmt.Errorf("user name %q is not this DatabaseUser's to manage: operator101 holds no claim on it for this "+
				"DatabaseUser (the server's admin can tell why, and free the name)", user)}
	}
}

// MaxUserLength is the longest user name MariaDB documents (80 characters).
const MaxUserLength = 80

// checkAccount refuses, before any SQL, an account MariaDB could not store as it is, and returns its name
// quoted for the statements (accountName).
func checkAccount(user, host string) (string, error) {
	acct, err := accountName(user, host)
	if err != nil {
		return "", &Error{Kind: KindInvalidAccount, Op: "account name", Err: err}
	}
	if n := utf8.RuneCountInString(user); n > MaxUserLength {
		return "", &Error{Kind: KindInvalidAccount, Op: "account name",
			Err: fmt.Errorf("%w: user is %d characters long, at most %d are allowed", ErrInvalidName, n, MaxUserLength)}
	}
	return acct, nil
}

// Reserved says whether user is an account no DatabaseUser may have, by a name every server has: root, the
// server's own accounts (mysql.sys, mysql.session, mysql.infoschema, mariadb.sys), PUBLIC (MariaDB's role of
// every user) and the anonymous user. The target's admin account is never managed either, but a tenant is told
// of it what it is told of any account it does not own (notOwned): a refusal that said "reserved" would confirm
// a guess at the admin's name.
func Reserved(user string) bool {
	switch {
	case user == "", strings.EqualFold(user, "root"), strings.EqualFold(user, "PUBLIC"),
		strings.EqualFold(user, "mariadb.sys"), strings.HasPrefix(strings.ToLower(user), "mysql."):
		return true
	}
	return false
}

// checkPassword refuses a password longer than s accepts, whatever its content, before it is hashed: MySQL's
// caching_sha2_password takes at most MaxCachingSHA2PasswordLength bytes. MariaDB's mysql_native_password
// has no limit of its own (its hash, SHA-1 of SHA-1, costs time in proportion to the length), so none is
// set there; the API server's limit on a Secret (1 MiB) bounds it. The error carries the lengths only, never
// the password.
func checkPassword(password string, s Server) error {
	if limit := s.MaxPasswordLength(); limit > 0 && len(password) > limit {
		return &Error{Kind: KindPasswordTooLong, Op: "password", Err: fmt.Errorf(
			"%d bytes long, more than the %d bytes %s accepts (caching_sha2_password)", len(password), limit, s)}
	}
	return nil
}

// MariaDB does not accept placeholders in account-management statements (CREATE USER ?@? fails with a
// syntax error, and so do IDENTIFIED BY ? and GRANT ... TO ?@?). Those statements are built from:
//   - quoteIdent for user names, hosts and database names: backtick quoting, whose only special character is
//     the backtick itself (doubled), whatever sql_mode says (unlike '...' literals, where backslash escapes
//     depend on NO_BACKSLASH_ESCAPES);
//   - NativePasswordHash for passwords: the statement carries the mysql_native_password hash, whose text is
//     '*' and 40 upper-case hex digits, so no password byte ever reaches the SQL text;
//   - integers formatted by strconv and privilege names from a fixed table.
// Queries that read (mysql.user, mysql.db) use server-side placeholders.

// ErrInvalidName is returned for names MariaDB cannot store: NUL bytes, invalid UTF-8, characters outside the
// Basic Multilingual Plane (the privilege tables are utf8mb3), or trailing spaces (CHAR columns drop them).
var ErrInvalidName = errors.New("invalid name")

// checkName returns ErrInvalidName (wrapped with the reason) when MariaDB could not store s as it is.
func checkName(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidName)
	}
	for _, r := range s {
		switch {
		case r == 0:
			return fmt.Errorf("%w: contains NUL", ErrInvalidName)
		case r > 0xFFFF:
			return fmt.Errorf("%w: contains a character outside the Basic Multilingual Plane", ErrInvalidName)
		}
	}
	if strings.HasSuffix(s, " ") {
		return fmt.Errorf("%w: ends with a space", ErrInvalidName)
	}
	return nil
}

// quoteIdent quotes s as a backtick identifier. It fails for names checkName rejects.
func quoteIdent(s string) (string, error) {
	if err := checkName(s); err != nil {
		return "", err
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`", nil
}

// accountName is 'user'@'host' quoted for account-management statements.
func accountName(user, host string) (string, error) {
	u, err := quoteIdent(user)
	if err != nil {
		return "", fmt.Errorf("user: %w", err)
	}
	h, err := quoteIdent(host)
	if err != nil {
		return "", fmt.Errorf("host: %w", err)
	}
	return u + "@" + h, nil
}
