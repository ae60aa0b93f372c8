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

package mysqlaccount

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// What Ensure refuses before it reads anything from the server, or hashes anything: pure functions of the
// desired account, the server's flavour and the admin account's name, table-tested without a server.

// refuse returns the error for an account Ensure must not touch whatever the server holds: a name the server
// cannot store, a reserved account, the target's admin account, a grant on a system schema, a password longer
// than s accepts (KindInvalidAccount, KindReserved, KindNotClaimed, KindInvalidGrant, KindPasswordTooLong).
func refuse(a Account, s Server, admin string) error {
	if err := checkAccount(a.User, a.Host); err != nil {
		return err
	}
	if Reserved(a.User) {
		return &Error{Kind: KindReserved, Op: "account " + a.User + "@" + a.Host,
			Err: errors.New("it is reserved (root, the server's own accounts): never managed by operator101")}
	}
	if a.User == admin {
		return notOwned(a.User, a.Host, "it is the target's admin account: never managed")
	}
	for db := range a.Grants {
		if SystemSchema(db) {
			return &Error{Kind: KindInvalidGrant, Op: "grants", Err: fmt.Errorf("database %q is a system schema", db)}
		}
	}
	return checkPassword(a.Password, s)
}

// MaxUserLength is the longest user name MariaDB documents (80 characters).
const MaxUserLength = 80

// checkAccount refuses, before any SQL, an account MariaDB could not store as it is.
func checkAccount(user, host string) error {
	if _, err := accountName(user, host); err != nil {
		return &Error{Kind: KindInvalidAccount, Op: "account name", Err: err}
	}
	if n := utf8.RuneCountInString(user); n > MaxUserLength {
		return &Error{Kind: KindInvalidAccount, Op: "account name",
			Err: fmt.Errorf("%w: user is %d characters long, at most %d are allowed", ErrInvalidName, n, MaxUserLength)}
	}
	return nil
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
