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
	"crypto/sha1" //nolint:gosec // mysql_native_password is defined on SHA-1.
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MariaDB does not accept placeholders in account-management statements (CREATE USER ?@? fails with a
// syntax error, and so do IDENTIFIED BY ? and GRANT ... TO ?@?). Those statements are built from:
//   - QuoteIdent for user names, hosts and database names: backtick quoting, whose only special character is
//     the backtick itself (doubled), whatever sql_mode says (unlike '...' literals, where backslash escapes
//     depend on NO_BACKSLASH_ESCAPES);
//   - NativePasswordHash for passwords: the statement carries the mysql_native_password hash, whose text is
//     '*' and 40 upper-case hex digits, so no password byte ever reaches the SQL text;
//   - integers formatted by strconv and privilege names from a fixed table.
// Queries that read (mysql.user, mysql.db) use server-side placeholders.

// ErrInvalidName is returned for names MariaDB cannot store: NUL bytes, invalid UTF-8, characters outside the
// Basic Multilingual Plane (the privilege tables are utf8mb3), or trailing spaces (CHAR columns drop them).
var ErrInvalidName = errors.New("invalid name")

// CheckName returns ErrInvalidName (wrapped with the reason) when MariaDB could not store s as it is.
func CheckName(s string) error {
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

// QuoteIdent quotes s as a backtick identifier. It fails for names CheckName rejects.
func QuoteIdent(s string) (string, error) {
	if err := CheckName(s); err != nil {
		return "", err
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`", nil
}

// UnquoteIdent reverses QuoteIdent. It is the test oracle of the fuzz test.
func UnquoteIdent(q string) (string, bool) {
	if len(q) < 2 || q[0] != '`' || q[len(q)-1] != '`' {
		return "", false
	}
	body := q[1 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '`' {
			if i+1 >= len(body) || body[i+1] != '`' {
				return "", false // a lone backtick would end the identifier early
			}
			i++
		}
		b.WriteByte(body[i])
	}
	return b.String(), true
}

// EscapeDatabasePattern makes a database name literal in GRANT ... ON `db`.*, where `_` and `%` are
// wildcards and backslash escapes them.
func EscapeDatabasePattern(db string) string {
	r := strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`)
	return r.Replace(db)
}

// AccountName is 'user'@'host' quoted for account-management statements.
func AccountName(user, host string) (string, error) {
	u, err := QuoteIdent(user)
	if err != nil {
		return "", fmt.Errorf("user: %w", err)
	}
	h, err := QuoteIdent(host)
	if err != nil {
		return "", fmt.Errorf("host: %w", err)
	}
	return u + "@" + h, nil
}

// NativePasswordHash is the mysql_native_password hash of password: '*' + HEX(SHA1(SHA1(password))).
func NativePasswordHash(password string) string {
	h1 := sha1.Sum([]byte(password)) //nolint:gosec
	h2 := sha1.Sum(h1[:])            //nolint:gosec
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}
