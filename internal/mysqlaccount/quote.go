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
	"crypto/sha1" //nolint:gosec // mysql_native_password is defined on SHA-1.
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

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

// escapeDatabasePattern makes a database name literal in GRANT ... ON `db`.*, where `_` and `%` are
// wildcards and backslash escapes them.
func escapeDatabasePattern(db string) string {
	r := strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`)
	return r.Replace(db)
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

// NativePasswordHash is the mysql_native_password hash of password: '*' + HEX(SHA1(SHA1(password))).
func NativePasswordHash(password string) string {
	// SHA-1 is the format's own, not a choice: the server stores and compares exactly this.
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}
