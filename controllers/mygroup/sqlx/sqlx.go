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

// Package sqlx is the DatabaseUser controller's SQL layer: it makes a MariaDB/MySQL account match a desired
// state (password, connection limit, database-level grants) and drops it, with the admin credentials of a
// target. It never puts a password into SQL text, an error or a log line.
package sqlx

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
)

func init() {
	// The driver's own logger prints connection noise to stderr; errors reach us as values anyway.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
}

// Target is where to connect and as whom: the operator's admin account of one database server.
type Target struct {
	Host     string
	Port     int
	User     string
	Password string
}

// Account is the desired state of one account.
type Account struct {
	User string
	Host string
	// Password is the plain password; only its mysql_native_password hash is sent to the server.
	Password string
	// MaxUserConnections is the connection limit, 0 for none.
	MaxUserConnections int64
	// Grants maps database names (literal, not patterns) to privilege names (see Privileges).
	Grants map[string][]string
}

// Kind classifies an error so that the controller can say why in a condition.
type Kind int

const (
	KindOther Kind = iota
	KindUnreachable
	KindAccessDenied
	KindInvalidAccount
	KindInvalidGrant
)

// Error is an operation that failed, with its kind.
type Error struct {
	Kind Kind
	Op   string
	Err  error
}

func (e *Error) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of err (KindOther when it is not an *Error).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindOther
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: classify(err), Op: op, Err: err}
}

func classify(err error) Kind {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1044, 1045, 1142, 1227, 1410, 1698:
			return KindAccessDenied
		case 1470, 1300, 1396, 1064, 1059, 1166, 1267:
			return KindInvalidAccount
		case 1102, 1103, 1049:
			return KindInvalidGrant
		case 1040, 1203, 1226, 2002, 2003, 2006, 2013:
			return KindUnreachable
		}
		return KindOther
	}
	if errors.Is(err, ErrInvalidName) {
		return KindInvalidAccount
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return KindUnreachable
	}
	return KindOther
}

// Client is a connection pool to one target.
type Client struct {
	db *sql.DB
}

// Open connects to t and checks that the server answers and accepts the credentials.
func Open(ctx context.Context, t Target, timeout time.Duration) (*Client, error) {
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
	cfg.User = t.User
	cfg.Passwd = t.Password
	cfg.Timeout = timeout
	cfg.ReadTimeout = 2 * timeout
	cfg.WriteTimeout = 2 * timeout
	cfg.InterpolateParams = false // placeholders are bound by the server
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, wrap("configuring the connection", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(2)
	db.SetConnMaxLifetime(time.Minute)
	pingCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		_ = db.Close()
		return nil, wrap(fmt.Sprintf("connecting to %s as %s", cfg.Addr, t.User), err)
	}
	return &Client{db: db}, nil
}

// Close closes the pool.
func (c *Client) Close() error { return c.db.Close() }

// DB exposes the pool, for tests.
func (c *Client) DB() *sql.DB { return c.db }

// privilegeColumns maps the privilege columns of mysql.db to privilege names. GRANT OPTION is never
// desired; it is listed so that a grant option given by hand is revoked.
var privilegeColumns = map[string]string{
	"Select_priv":           "SELECT",
	"Insert_priv":           "INSERT",
	"Update_priv":           "UPDATE",
	"Delete_priv":           "DELETE",
	"Create_priv":           "CREATE",
	"Drop_priv":             "DROP",
	"Grant_priv":            "GRANT OPTION",
	"References_priv":       "REFERENCES",
	"Index_priv":            "INDEX",
	"Alter_priv":            "ALTER",
	"Create_tmp_table_priv": "CREATE TEMPORARY TABLES",
	"Lock_tables_priv":      "LOCK TABLES",
	"Create_view_priv":      "CREATE VIEW",
	"Show_view_priv":        "SHOW VIEW",
	"Create_routine_priv":   "CREATE ROUTINE",
	"Alter_routine_priv":    "ALTER ROUTINE",
	"Execute_priv":          "EXECUTE",
	"Event_priv":            "EVENT",
	"Trigger_priv":          "TRIGGER",
	"Delete_history_priv":   "DELETE HISTORY",
}

// AllPrivileges is the name that stands for every database-level privilege of the server.
const AllPrivileges = "ALL PRIVILEGES"

// Privileges is the set of privilege names an Account may ask for.
func Privileges() []string {
	var out []string
	for _, p := range privilegeColumns {
		if p != "GRANT OPTION" {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return append([]string{AllPrivileges}, out...)
}

// Observed is what the server has for an account.
type Observed struct {
	Exists             bool
	Plugin             string
	AuthString         string
	MaxUserConnections int64
	// Grants maps database patterns (as stored in mysql.db) to privilege names.
	Grants map[string][]string
	// serverPrivileges are the privileges the server's mysql.db knows (ALL PRIVILEGES expands to them).
	serverPrivileges []string
}

// Observe reads the account user@host.
func (c *Client) Observe(ctx context.Context, user, host string) (*Observed, error) {
	o := &Observed{Grants: map[string][]string{}}
	row := c.db.QueryRowContext(ctx,
		"SELECT plugin, authentication_string, max_user_connections FROM mysql.user WHERE User = ? AND Host = ?",
		user, host)
	switch err := row.Scan(&o.Plugin, &o.AuthString, &o.MaxUserConnections); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, wrap("reading mysql.user", err)
	default:
		o.Exists = true
	}
	rows, err := c.db.QueryContext(ctx, "SELECT * FROM mysql.db WHERE User = ? AND Host = ?", user, host)
	if err != nil {
		return nil, wrap("reading mysql.db", err)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		return nil, wrap("reading mysql.db", err)
	}
	for _, col := range cols {
		if p, ok := privilegeColumns[col]; ok && p != "GRANT OPTION" {
			o.serverPrivileges = append(o.serverPrivileges, p)
		}
	}
	sort.Strings(o.serverPrivileges)
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, wrap("reading mysql.db", err)
		}
		var db string
		var privs []string
		for i, col := range cols {
			switch {
			case col == "Db":
				db = string(vals[i])
			case privilegeColumns[col] != "" && string(vals[i]) == "Y":
				privs = append(privs, privilegeColumns[col])
			}
		}
		sort.Strings(privs)
		o.Grants[db] = privs
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("reading mysql.db", err)
	}
	return o, nil
}

// plan returns the statements that make the observed account match a. It is a pure function, tested without
// a server. The statements carry no password, only its hash.
func plan(a Account, o *Observed) ([]string, error) {
	acct, err := accountName(a.User, a.Host)
	if err != nil {
		return nil, err
	}
	hash := NativePasswordHash(a.Password)
	var stmts []string
	if !o.Exists {
		stmts = append(stmts, fmt.Sprintf("CREATE USER %s IDENTIFIED BY PASSWORD '%s' WITH MAX_USER_CONNECTIONS %d",
			acct, hash, a.MaxUserConnections))
	} else {
		if o.AuthString != hash || o.Plugin != "mysql_native_password" {
			stmts = append(stmts, fmt.Sprintf("ALTER USER %s IDENTIFIED BY PASSWORD '%s'", acct, hash))
		}
		if o.MaxUserConnections != a.MaxUserConnections {
			stmts = append(stmts, fmt.Sprintf("ALTER USER %s WITH MAX_USER_CONNECTIONS %d", acct, a.MaxUserConnections))
		}
	}

	desired := map[string][]string{}
	for db, privs := range a.Grants {
		if err := checkName(db); err != nil {
			return nil, &Error{Kind: KindInvalidGrant, Op: "database name", Err: err}
		}
		set, err := expand(privs, o.serverPrivileges)
		if err != nil {
			return nil, err
		}
		desired[escapeDatabasePattern(db)] = set
	}
	patterns := map[string]bool{}
	for p := range desired {
		patterns[p] = true
	}
	if o.Exists {
		for p := range o.Grants {
			patterns[p] = true
		}
	}
	ordered := make([]string, 0, len(patterns))
	for p := range patterns {
		ordered = append(ordered, p)
	}
	sort.Strings(ordered)
	for _, p := range ordered {
		var have []string
		if o.Exists {
			have = o.Grants[p]
		}
		want := desired[p]
		revoke, grant := diff(have, want), diff(want, have)
		q, err := quoteIdent(p)
		if err != nil {
			return nil, &Error{Kind: KindInvalidGrant, Op: "database name", Err: err}
		}
		if len(revoke) > 0 {
			stmts = append(stmts, fmt.Sprintf("REVOKE %s ON %s.* FROM %s", strings.Join(revoke, ", "), q, acct))
		}
		if len(grant) > 0 {
			stmts = append(stmts, fmt.Sprintf("GRANT %s ON %s.* TO %s", strings.Join(grant, ", "), q, acct))
		}
	}
	return stmts, nil
}

// expand validates privilege names and replaces ALL PRIVILEGES with the server's database-level privileges.
func expand(privs, server []string) ([]string, error) {
	if len(server) == 0 {
		server = Privileges()[1:]
	}
	set := map[string]bool{}
	for _, p := range privs {
		switch {
		case p == AllPrivileges:
			for _, s := range server {
				set[s] = true
			}
		case slices.Contains(Privileges(), p):
			set[p] = true
		default:
			return nil, &Error{Kind: KindInvalidGrant, Op: "privileges", Err: fmt.Errorf("%q is not an allowed privilege", p)}
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// diff is a minus b, sorted.
func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// Ensure makes the account match a and returns how many statements it ran (0 when it already did).
func (c *Client) Ensure(ctx context.Context, a Account) (int, error) {
	if err := checkAccount(a.User, a.Host); err != nil {
		return 0, err
	}
	o, err := c.Observe(ctx, a.User, a.Host)
	if err != nil {
		return 0, err
	}
	stmts, err := plan(a, o)
	if err != nil {
		return 0, err
	}
	for i, s := range stmts {
		if _, err := c.db.ExecContext(ctx, s); err != nil {
			// The statement is not part of the error: it holds the password hash.
			return i, wrap(fmt.Sprintf("statement %d of %d (%s)", i+1, len(stmts), verb(s)), err)
		}
	}
	return len(stmts), nil
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

// Drop drops user@host if it exists; it reports whether it did.
func (c *Client) Drop(ctx context.Context, user, host string) (bool, error) {
	if err := checkAccount(user, host); err != nil {
		return false, err
	}
	o, err := c.Observe(ctx, user, host)
	if err != nil {
		return false, err
	}
	acct, err := accountName(user, host)
	if err != nil {
		return false, &Error{Kind: KindInvalidAccount, Op: "account name", Err: err}
	}
	if !o.Exists && len(o.Grants) == 0 {
		return false, nil
	}
	if _, err := c.db.ExecContext(ctx, "DROP USER IF EXISTS "+acct); err != nil {
		return false, wrap("DROP USER", err)
	}
	return true, nil
}
