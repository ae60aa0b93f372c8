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
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// How Ensure writes what it planned: the claim first (claimed before anything is done to the account), then
// the statements, then what the claim keeps of the password. DropAccount claims the same way.

// apply runs a plan of Ensure: the claim first when recordFirst, then the statements, then, when they set
// the password (digest, what the claim keeps of it, is not ""), the digest and the string the server stored.
// It returns how many statements that write ran.
func (c *Client) apply(ctx context.Context, a Account, notClaimed refusal, recordFirst bool, stmts []string, digest string) (int, error) {
	n := 0
	if recordFirst {
		if err := c.record(ctx, a, notClaimed); err != nil {
			return 0, err
		}
		n++
	}
	for i, s := range stmts {
		if _, err := c.db.ExecContext(ctx, s); err != nil {
			// The statement is not part of the error: it holds the password hash.
			return n + i, wrap(fmt.Sprintf("statement %d of %d (%s)", i+1, len(stmts), verb(s)), err)
		}
	}
	n += len(stmts)
	if digest != "" {
		// What the server stored, and a digest of the password: how the next check knows, where the hash is
		// salted, whether either changed.
		var auth string
		if err := c.db.QueryRowContext(ctx, "SELECT authentication_string FROM mysql.user WHERE User = ? AND Host = ?",
			a.User, a.Host).Scan(&auth); err != nil {
			return n, wrap("reading mysql.user", err)
		}
		if _, err := c.db.ExecContext(ctx, "UPDATE "+claimTable+" SET password_digest = ?, auth_string = ? WHERE user = ? AND host = ?",
			digest, auth, a.User, a.Host); err != nil {
			return n, wrap("updating the claims", err)
		}
		n++
	}
	return n, nil
}

// ensureClaimTable creates the schema and the table, and adds claimUserKey to a table created without it.
// Both are idempotent: several operator installs may run them at once on one server.
func (c *Client) ensureClaimTable(ctx context.Context) error {
	if c.claimTableKeyed {
		return nil
	}
	for _, stmt := range createClaimTable {
		if _, err := c.db.ExecContext(ctx, stmt); err != nil {
			return wrap("creating the claims", err)
		}
	}
	c.claimTableReady = true
	var n int
	if err := c.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.STATISTICS "+
		"WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'accounts' AND INDEX_NAME = ?", ClaimSchema, claimUserKey).Scan(&n); err != nil {
		return wrap("looking for the claims' key", err)
	}
	if n == 0 {
		_, err := c.db.ExecContext(ctx, addClaimUserKey)
		switch mysqlErrorNumber(err) {
		case 0, 1061: // added, or added meanwhile by another client (duplicate key name)
		case 1062:
			return &Error{Kind: KindOther, Op: "adding a unique key on user to " + ClaimSchema + ".accounts",
				Err: errors.New("a user name is recorded more than once (with several hosts): the server's admin keeps one " +
					"row per user (SELECT user FROM " + ClaimSchema + ".accounts GROUP BY user HAVING COUNT(*) > 1)")}
		default:
			return wrap("adding a unique key on user to the claims", err)
		}
	}
	c.claimTableKeyed = true
	return nil
}

// mysqlErrorNumber is the server's error number of err, 0 when err is nil or not the server's.
func mysqlErrorNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// record writes the claim of a (creating the table on first use). The INSERT is the claim: it fails when the
// user name is already recorded, with any host, for anyone (claimUserKey), and then a is refused (KindNotClaimed),
// whatever Observe read before: another claimant recorded it in between.
func (c *Client) record(ctx context.Context, a Account, notClaimed refusal) error {
	if err := c.ensureClaimTable(ctx); err != nil {
		return err
	}
	// Racing INSERTs of one user name with different hosts can deadlock on the table's two unique keys; InnoDB
	// then rolls one back (1213), and MySQL's manual says to run it again: that run succeeds or finds the name
	// taken (1062). The bound only guards against a server that keeps choosing this statement as the victim.
	var err error
	for range claimInsertAttempts {
		_, err = c.db.ExecContext(ctx, "INSERT INTO "+claimTable+
			" (user, host, owner_uid, owner_namespace, owner_name, password_digest, auth_string) VALUES (?, ?, ?, ?, ?, '', '')",
			a.User, a.Host, a.Claimant.UID, a.Claimant.Namespace, a.Claimant.Name)
		if mysqlErrorNumber(err) != 1213 { // deadlock found when trying to get lock
			break
		}
	}
	if mysqlErrorNumber(err) == 1062 { // duplicate entry
		return notClaimed("its user name was recorded meanwhile for another DatabaseUser, or with another host")
	}
	return wrap("recording the account's claim", err)
}

// claimInsertAttempts is how many times record runs its INSERT when InnoDB picks it as a deadlock's victim.
const claimInsertAttempts = 5

// verb names a statement without its arguments, for errors.
func verb(stmt string) string {
	f := strings.Fields(stmt)
	if len(f) >= 2 && (f[0] == "CREATE" || f[0] == "ALTER" || f[0] == "DROP") {
		return f[0] + " " + f[1]
	}
	if len(f) > 0 {
		return f[0]
	}
	return ""
}
