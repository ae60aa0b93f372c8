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
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Databases of a tenant's own (the Database kind). They are claimed as accounts are: a row in the claim
// schema's second table, databaseClaimTable, says which Database a database was created for, and operator101
// alters or drops no database without that row. The table is created with CREATE TABLE IF NOT EXISTS the first
// time a database is claimed on a server, beside the accounts' table, which it leaves as it is: a server that
// already holds operator101.accounts (with or without claimUserKey) keeps it unchanged.
//
// The claim comes first, then CREATE DATABASE without IF NOT EXISTS: a database made by hand meanwhile makes
// the CREATE fail, and the claim is taken back. A database that exists without this Database's claim is never
// adopted, altered or dropped.

const databaseClaimTable = "`" + ClaimSchema + "`.`databases`"

// createDatabaseClaimTable creates the databases' claim table, in the claim schema (createClaimTable[0]).
const createDatabaseClaimTable = "CREATE TABLE IF NOT EXISTS " + databaseClaimTable + ` (
	  name            VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	  owner_uid       VARCHAR(64)  NOT NULL,
	  owner_namespace VARCHAR(63)  NOT NULL,
	  owner_name      VARCHAR(253) NOT NULL,
	  PRIMARY KEY (name)
	) ENGINE=InnoDB COMMENT='operator101: databases it created, and for which Database'`

// Database is the desired state of one database.
type Database struct {
	// Name is the database's name, literal.
	Name string
	// CharacterSet and Collation are the database's defaults; "" leaves the server's choice (at creation) and
	// never changes what the database has.
	CharacterSet, Collation string
	// Claimant is the Database the database is recorded for.
	Claimant Claimant
}

// ObservedDatabase is what the server has for a database.
type ObservedDatabase struct {
	Exists                  bool
	CharacterSet, Collation string
	// Claim is the database's claim, nil when there is none.
	Claim *Claimant
}

// charsetName is what a character set or collation name may be: anything else is refused before it reaches a
// statement (the API's schema says the same).
var charsetName = regexp.MustCompile(`^[a-zA-Z0-9_]{1,64}$`)

// checkDatabase refuses a name or character set the server could not take as they are.
func checkDatabase(d Database) error {
	if err := checkName(d.Name); err != nil {
		return &Error{Kind: KindInvalidDatabase, Op: "database name", Err: err}
	}
	if len(d.Name) > 64 || d.Name == "" {
		return &Error{Kind: KindInvalidDatabase, Op: "database name", Err: errors.New("must be 1 to 64 characters")}
	}
	for what, s := range map[string]string{"character set": d.CharacterSet, "collation": d.Collation} {
		if s != "" && !charsetName.MatchString(s) {
			return &Error{Kind: KindInvalidDatabase, Op: what, Err: fmt.Errorf("%q is not a %s name", s, what)}
		}
	}
	return nil
}

// ObserveDatabase reads the database name and its claim. It only reads: a server without the claim table
// has no claim.
func (c *Client) ObserveDatabase(ctx context.Context, name string) (*ObservedDatabase, error) {
	o := &ObservedDatabase{}
	// information_schema compares names case-insensitively: the exact name is picked here.
	rows, err := c.db.QueryContext(ctx, "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME "+
		"FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name)
	if err != nil {
		return nil, wrap("reading the database", err)
	}
	defer func() { _ = rows.Close() }()
	var folded *ObservedDatabase // a name that differs only in case
	for rows.Next() {
		var n, cs, coll string
		if err := rows.Scan(&n, &cs, &coll); err != nil {
			return nil, wrap("reading the database", err)
		}
		switch {
		case n == name:
			o.Exists, o.CharacterSet, o.Collation = true, cs, coll
		case strings.EqualFold(n, name):
			folded = &ObservedDatabase{Exists: true, CharacterSet: cs, Collation: coll}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("reading the database", err)
	}
	if !o.Exists && folded != nil {
		// A server with lower_case_table_names (Windows, macOS; never the default on Linux) stores names in
		// lower case: there, that database is this one.
		var lower int
		if err := c.db.QueryRowContext(ctx, "SELECT @@lower_case_table_names").Scan(&lower); err != nil {
			return nil, wrap("reading lower_case_table_names", err)
		}
		if lower != 0 {
			o.Exists, o.CharacterSet, o.Collation = true, folded.CharacterSet, folded.Collation
		}
	}
	var cl Claimant
	err = c.db.QueryRowContext(ctx, "SELECT owner_uid, owner_namespace, owner_name FROM "+databaseClaimTable+
		" WHERE name = ?", name).Scan(&cl.UID, &cl.Namespace, &cl.Name)
	switch {
	case errors.Is(err, sql.ErrNoRows), mysqlErrorNumber(err) == 1146, mysqlErrorNumber(err) == 1049:
		// no claim, no claim table yet, no claim schema yet
	case err != nil:
		return nil, wrap("reading the database's claim", err)
	default:
		o.Claim = &cl
	}
	return o, nil
}

// notOwnedDatabase is the refusal of a database that is not the claimant's: the same words whether it
// exists or is only recorded for another, so that a tenant cannot learn which.
func notOwnedDatabase(name, why string) error {
	return &Error{Kind: KindNotClaimed, Op: "database " + name,
		Err: errors.New("it is not this Database's to manage: operator101 holds no claim on it for this Database; " +
			"it is left as it is"), Why: why}
}

// EnsureDatabase makes d exist as it says: it creates the database (its claim first) when it does not exist
// and nobody claims its name, and alters its character set and collation only when it is d.Claimant's. A
// database that exists without d.Claimant's claim, or a name another claims, is refused (KindNotClaimed)
// and left as it is. It returns how many statements that write ran: 0 when the database is as d says.
func (c *Client) EnsureDatabase(ctx context.Context, d Database) (int, error) {
	if err := checkDatabase(d); err != nil {
		return 0, err
	}
	o, err := c.ObserveDatabase(ctx, d.Name)
	if err != nil {
		return 0, err
	}
	switch {
	case o.Claim != nil && o.Claim.UID != d.Claimant.UID:
		return 0, notOwnedDatabase(d.Name, fmt.Sprintf("recorded as %s's (UID %s)", o.Claim, o.Claim.UID))
	case o.Claim == nil && o.Exists:
		return 0, notOwnedDatabase(d.Name, "it exists and operator101 did not create it")
	case o.Claim == nil:
		if err := c.recordDatabase(ctx, d); err != nil {
			return 0, err
		}
		if err := c.createDatabase(ctx, d); err != nil {
			if KindOf(err) == KindNotClaimed || KindOf(err) == KindInvalidDatabase {
				// Not made: the claim goes too, so that the name stays free for whoever may have it.
				if _, rerr := c.ReleaseDatabase(ctx, d.Name, d.Claimant); rerr != nil {
					return 1, errors.Join(err, rerr)
				}
			}
			return 1, err
		}
		return 2, nil
	case !o.Exists: // claimed by d's claimant and dropped by hand: made again
		return 1, c.createDatabase(ctx, d)
	}
	if !DatabaseDiffers(d, o) {
		return 0, nil
	}
	stmt := "ALTER DATABASE " + quoteDatabase(d.Name) + charsetClause(d)
	if _, err := c.db.ExecContext(ctx, stmt); err != nil {
		return 0, wrapDatabase("ALTER DATABASE", err)
	}
	return 1, nil
}

// DatabaseDiffers: the character set or the collation d asks for is not the one o has. Names compare case-
// insensitively, and utf8 stands for utf8mb3, as MariaDB 10.6 and later print it.
func DatabaseDiffers(d Database, o *ObservedDatabase) bool {
	return d.CharacterSet != "" && charsetKey(d.CharacterSet) != charsetKey(o.CharacterSet) ||
		d.Collation != "" && charsetKey(d.Collation) != charsetKey(o.Collation)
}

func charsetKey(s string) string {
	s = strings.ToLower(s)
	if s == "utf8" || strings.HasPrefix(s, "utf8_") {
		return "utf8mb3" + strings.TrimPrefix(s, "utf8")
	}
	return s
}

func quoteDatabase(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// charsetClause is the CHARACTER SET and COLLATE of d, each when set (checkDatabase has checked both).
func charsetClause(d Database) string {
	s := ""
	if d.CharacterSet != "" {
		s += " CHARACTER SET " + d.CharacterSet
	}
	if d.Collation != "" {
		s += " COLLATE " + d.Collation
	}
	return s
}

// createDatabase runs CREATE DATABASE, without IF NOT EXISTS: a database made meanwhile is not d's.
func (c *Client) createDatabase(ctx context.Context, d Database) error {
	_, err := c.db.ExecContext(ctx, "CREATE DATABASE "+quoteDatabase(d.Name)+charsetClause(d))
	if mysqlErrorNumber(err) == 1007 { // database exists
		return notOwnedDatabase(d.Name, "it was made meanwhile, not by operator101 for this Database")
	}
	return wrapDatabase("CREATE DATABASE", err)
}

// wrapDatabase is wrap, with the server's refusals of a name, a character set or a collation as
// KindInvalidDatabase.
func wrapDatabase(op string, err error) error {
	switch mysqlErrorNumber(err) {
	case 1102, 1115, 1253, 1273, 1300: // incorrect database name, unknown character set or collation, mismatch
		return &Error{Kind: KindInvalidDatabase, Op: op, Err: err}
	}
	return wrap(op, err)
}

// recordDatabase writes the claim of d (creating the table on first use). The INSERT is the claim: it fails
// when the name is recorded for anyone, and then d is refused (KindNotClaimed).
func (c *Client) recordDatabase(ctx context.Context, d Database) error {
	for _, stmt := range []string{createClaimTable[0], createDatabaseClaimTable} {
		if _, err := c.db.ExecContext(ctx, stmt); err != nil {
			return wrap("creating the database claims", err)
		}
	}
	_, err := c.db.ExecContext(ctx, "INSERT INTO "+databaseClaimTable+
		" (name, owner_uid, owner_namespace, owner_name) VALUES (?, ?, ?, ?)",
		d.Name, d.Claimant.UID, d.Claimant.Namespace, d.Claimant.Name)
	if mysqlErrorNumber(err) == 1062 { // duplicate entry
		return notOwnedDatabase(d.Name, "its name was recorded meanwhile for another Database")
	}
	return wrap("recording the database's claim", err)
}

// ReleaseDatabase deletes the claim of the database name when it is claimant's, and leaves the database:
// cleanupPolicy Skip. It reports whether there was such a claim.
func (c *Client) ReleaseDatabase(ctx context.Context, name string, claimant Claimant) (bool, error) {
	res, err := c.db.ExecContext(ctx, "DELETE FROM "+databaseClaimTable+" WHERE name = ? AND owner_uid = ?",
		name, claimant.UID)
	switch mysqlErrorNumber(err) {
	case 1146, 1049: // no claim table, no claim schema: no claim
		return false, nil
	}
	if err != nil {
		return false, wrap("deleting the database's claim", err)
	}
	n, err := res.RowsAffected()
	return n > 0, wrap("deleting the database's claim", err)
}

// DropDatabase drops the database name, with all its data, and then its claim, when the claim names
// claimant; any other database is left as it is (NotClaimed, whether or not it exists).
func (c *Client) DropDatabase(ctx context.Context, name string, claimant Claimant) (DropResult, error) {
	o, err := c.ObserveDatabase(ctx, name)
	if err != nil {
		return DropResult{}, err
	}
	if o.Claim == nil || o.Claim.UID != claimant.UID || SystemSchema(name) {
		return DropResult{NotClaimed: true}, nil
	}
	if o.Exists {
		if _, err := c.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteDatabase(name)); err != nil {
			return DropResult{}, wrap("DROP DATABASE", err)
		}
	}
	// After the database: a claim without its database is harmless (dropped again on retry), a database
	// without its claim could not be dropped again.
	if _, err := c.ReleaseDatabase(ctx, name, claimant); err != nil {
		return DropResult{}, err
	}
	return DropResult{Dropped: o.Exists}, nil
}
