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

// Package mysqlaccount is the DatabaseUser controller's SQL layer: it makes a MariaDB/MySQL account match a desired
// state (password, connection limit, database-level grants) and drops it, with the admin credentials of a
// target, over TLS when the target asks for it. It touches only accounts it recorded as created for their
// claimant (claim.go), and plans statements for the server's flavour (plan.go). It never puts a password into SQL
// text, an error or a log line.
package mysqlaccount

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"sort"
	"strconv"
	"time"

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
	// TLS, when set, secures the connection: the handshake is encrypted before any credential is sent, and
	// a server without TLS is refused rather than spoken to in the clear. nil: no TLS.
	// Without TLS, or with TLS that does not verify the server (InsecureSkipVerify without VerifyConnection:
	// tls.mode Required), the password is sent only as a scramble: an exchange that would send it in clear,
	// or encrypted to a key the server sends, is refused (ErrPasswordExchangeRefused, authguard.go).
	TLS *tls.Config
	// ServerPublicKey, without TLS, is the server's RSA key (pinned), to which the password is encrypted when
	// the server asks for it (caching_sha2_password full authentication, sha256_password). nil: never.
	ServerPublicKey *rsa.PublicKey
}

// Account is the desired state of one account.
type Account struct {
	User string
	Host string
	// Password is the plain password; only a hash of it (the flavour's) is sent to the server.
	Password string
	// MaxUserConnections is the connection limit, 0 for none.
	MaxUserConnections int64
	// MaxQueriesPerHour, MaxUpdatesPerHour and MaxConnectionsPerHour are the hourly limits, 0 for none.
	MaxQueriesPerHour, MaxUpdatesPerHour, MaxConnectionsPerHour int64
	// TLS is what the account requires of its connections (require.go); the zero value requires nothing.
	TLS TLSRequirement
	// Grants maps database names (literal, not patterns) to privilege names (see Privileges).
	Grants map[string][]string
	// Claimant is the DatabaseUser the account is recorded for.
	Claimant Claimant
	// Adopt allows taking over an existing account that has no claim (the target's policy), when every
	// privilege it holds fits AdoptDatabases (adopt.go); any other is refused with KindAdoptionRefused.
	Adopt bool
	// AdoptDatabases are the databases the target's policy allows the claimant, as patterns whose only
	// wildcard is `*` (the DatabaseTarget's databases with ${namespace} replaced). An account is adopted only
	// when its database-level, table, column and routine grants all lie within them; none: no grants at all.
	AdoptDatabases []string
}

// Kind classifies an error so that the controller can say why in a condition.
type Kind int

const (
	KindOther Kind = iota
	KindUnreachable
	KindAccessDenied
	KindInvalidAccount
	KindInvalidGrant
	// KindNotClaimed: the account (or its user name) exists and was not created for this claimant.
	KindNotClaimed
	// KindReserved: root and the server's own accounts: never managed. (The target's admin account is never
	// managed either; it gets KindNotClaimed, the words any account not the claimant's gets.)
	KindReserved
	// KindUnsupportedServer: a flavour or version operator101 does not manage accounts on.
	KindUnsupportedServer
	// KindPasswordTooLong: the password is longer than the server accepts (Server.MaxPasswordLength).
	KindPasswordTooLong
	// KindAdoptionRefused: the account exists without a claim, adoption is allowed, but the account holds
	// privileges beyond the target's policy (adopt.go): it is left as it is.
	KindAdoptionRefused
	// KindInvalidDatabase: the server refuses a database's name, character set or collation (database.go).
	KindInvalidDatabase
)

// Error is an operation that failed, with its kind.
type Error struct {
	Kind Kind
	Op   string
	Err  error
	// Why, when set, is what the server holds behind the error (another host, whose claim it is), which a
	// DatabaseUser's status must not tell: for the operator's log only (Detail), never in Error().
	Why string
}

func (e *Error) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Detail is err's message for the operator's log (which only the cluster admin reads): Error() and, when set,
// the Why of the *Error it wraps.
func Detail(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Why != "" {
		return err.Error() + " (" + e.Why + ")"
	}
	return err.Error()
}

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
	var unknownCA x509.UnknownAuthorityError
	var badName x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &badName) || errors.As(err, &invalid) || errors.As(err, &verify) ||
		errors.Is(err, mysql.ErrNoTLS) || errors.Is(err, ErrPasswordExchangeRefused) {
		return KindUnreachable // the server cannot be reached the way the target requires
	}
	if errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return KindUnreachable
	}
	return KindOther
}

// Client is a connection pool to one target.
type Client struct {
	db     *sql.DB
	server Server
	admin  string
	// claimTableReady: the claim table is known to exist.
	claimTableReady bool
	// claimTableKeyed: the claim table is known to have claimUserKey (created with it, or migrated).
	claimTableKeyed bool
	// sha2CryptRuns counts the SHA-crypts Ensure computed: the tests check when it runs one.
	sha2CryptRuns int
}

// Open connects to t, checks that the server answers and accepts the credentials, and finds out which server
// it is. A server operator101 does not support is an error of KindUnsupportedServer.
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
	cfg.AllowCleartextPasswords, cfg.AllowOldPasswords, cfg.AllowNativePasswords = false, false, true
	guard := newAuthGuard(t)
	switch {
	case guard != nil:
		cfg.DialFunc = guard.dial // it does TLS, if any: the driver sees a plain connection
		if guard.pinned {
			// A name of its own, registered only while the connector is configured: concurrent Opens never share one.
			name := "operator101-" + rand.Text()
			mysql.RegisterServerPubKey(name, &rsa.PublicKey{N: new(big.Int).Set(t.ServerPublicKey.N), E: t.ServerPublicKey.E})
			defer mysql.DeregisterServerPubKey(name) // the connector keeps its own copy
			cfg.ServerPubKey = name
		}
	case t.TLS != nil:
		cfg.TLS = t.TLS.Clone()
		cfg.AllowFallbackToPlaintext = false
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, wrap("configuring the connection", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(2)
	db.SetConnMaxLifetime(time.Minute)
	pingCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var version string
	if err := db.QueryRowContext(pingCtx, "SELECT VERSION()").Scan(&version); err != nil {
		_ = db.Close()
		if guard != nil && guard.err() != nil {
			err = guard.err() // the driver says only "invalid connection"
		}
		return nil, wrap(fmt.Sprintf("connecting to %s as %s", cfg.Addr, t.User), err)
	}
	server, err := ParseVersion(version)
	if err != nil {
		_ = db.Close()
		return nil, &Error{Kind: KindUnsupportedServer, Op: "connecting to " + cfg.Addr, Err: err}
	}
	if why := server.supported(); why != "" {
		_ = db.Close()
		return nil, &Error{Kind: KindUnsupportedServer, Op: "connecting to " + cfg.Addr, Err: errors.New(why)}
	}
	return &Client{db: db, server: server, admin: t.User}, nil
}

// Server is the server the client is connected to.
func (c *Client) Server() Server { return c.server }

// Close closes the pool.
func (c *Client) Close() error { return c.db.Close() }

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
	// The hourly limits (max_questions, max_updates, max_connections) and what the account requires of its
	// connections (ssl_type, ssl_cipher, x509_subject, x509_issuer).
	MaxQuestions, MaxUpdates, MaxConnections    int64
	SSLType, SSLCipher, X509Subject, X509Issuer string
	// Grants maps database patterns (as stored in mysql.db) to privilege names.
	Grants map[string][]string
	// Claim is the account's claim, nil when there is none.
	Claim *claim
	// OtherHosts are the hosts the same user name exists with, besides this account's; OtherClaims their
	// claims.
	OtherHosts  []string
	OtherClaims map[string]*claim
	// serverPrivileges are the privileges the server's mysql.db knows (ALL PRIVILEGES expands to them).
	serverPrivileges []string
}

// Observe reads the account user@host, the same user's other hosts, and their claims.
func (c *Client) Observe(ctx context.Context, user, host string) (*Observed, error) {
	o := &Observed{Grants: map[string][]string{}, OtherClaims: map[string]*claim{}}
	row := c.db.QueryRowContext(ctx,
		"SELECT plugin, authentication_string, max_user_connections, max_questions, max_updates, max_connections, "+
			"ssl_type, ssl_cipher, x509_subject, x509_issuer FROM mysql.user WHERE User = ? AND Host = ?",
		user, host)
	var sslType, cipher, subject, issuer []byte // ENUM and BLOBs
	err := row.Scan(&o.Plugin, &o.AuthString, &o.MaxUserConnections, &o.MaxQuestions, &o.MaxUpdates, &o.MaxConnections,
		&sslType, &cipher, &subject, &issuer)
	o.SSLType, o.SSLCipher, o.X509Subject, o.X509Issuer = string(sslType), string(cipher), string(subject), string(issuer)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, wrap("reading mysql.user", err)
	default:
		o.Exists = true
	}
	hosts, err := c.db.QueryContext(ctx, "SELECT Host FROM mysql.user WHERE User = ? AND Host <> ? ORDER BY Host", user, host)
	if err != nil {
		return nil, wrap("reading mysql.user", err)
	}
	for hosts.Next() {
		var h string
		if err := hosts.Scan(&h); err != nil {
			_ = hosts.Close()
			return nil, wrap("reading mysql.user", err)
		}
		o.OtherHosts = append(o.OtherHosts, h)
	}
	_ = hosts.Close()
	if err := hosts.Err(); err != nil {
		return nil, wrap("reading mysql.user", err)
	}
	if err := c.observeRecords(ctx, o, user, host); err != nil {
		return nil, err
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

// observeRecords reads the claims of user (none while the table does not exist: nothing was
// recorded on this server yet).
func (c *Client) observeRecords(ctx context.Context, o *Observed, user, host string) error {
	if !c.claimTableReady {
		var n int
		if err := c.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'accounts'",
			ClaimSchema).Scan(&n); err != nil {
			return wrap("looking for the claims", err)
		}
		if n == 0 {
			return nil
		}
		c.claimTableReady = true
	}
	rows, err := c.db.QueryContext(ctx, "SELECT host, owner_uid, owner_namespace, owner_name, password_digest, auth_string FROM "+
		claimTable+" WHERE user = ?", user)
	if err != nil {
		return wrap("reading the claims", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var h string
		r := &claim{}
		if err := rows.Scan(&h, &r.UID, &r.Namespace, &r.Name, &r.PasswordDigest, &r.AuthString); err != nil {
			return wrap("reading the claims", err)
		}
		if h == host {
			o.Claim = r
		} else {
			o.OtherClaims[h] = r
		}
	}
	return wrap("reading the claims", rows.Err())
}

// Release deletes the claim of user@host when it names claimant, and leaves the account: it is then as
// if made by hand, and a DatabaseTarget that allows adoption can give it to another DatabaseUser. It reports
// whether there was such a record.
func (c *Client) Release(ctx context.Context, user, host string, claimant Claimant) (bool, error) {
	o, err := c.Observe(ctx, user, host)
	if err != nil || o.Claim == nil || o.Claim.UID != claimant.UID {
		return false, err
	}
	if _, err := c.db.ExecContext(ctx, "DELETE FROM "+claimTable+" WHERE user = ? AND host = ?", user, host); err != nil {
		return false, wrap("deleting the claims", err)
	}
	return true, nil
}

// DropResult says what Drop did.
type DropResult struct {
	// Dropped: the claimant's account existed and was dropped.
	Dropped bool
	// NotClaimed: the account is not recorded as the claimant's, whether or not it exists (which the claimant
	// must not learn from it); nothing was done.
	NotClaimed bool
}

// Drop drops user@host, and its claim, when the claim names claimant. Any other account is left
// as it is.
func (c *Client) Drop(ctx context.Context, user, host string, claimant Claimant) (DropResult, error) {
	return c.DropAccount(ctx, Account{User: user, Host: host, Claimant: claimant})
}

// DropAccount is Drop for a.User@a.Host and a.Claimant, which also drops an account that has no claim when a
// allows adoption (a.Adopt) and Ensure would adopt it (every privilege within a.AdoptDatabases): a
// DatabaseUser deleted before it took over such an account (one an earlier operator101 made without a claim,
// or made by hand) drops what it would have owned. The claim is recorded first, as Ensure does, so that a
// DatabaseUser claiming the name meanwhile keeps it. Any other account is left as it is.
func (c *Client) DropAccount(ctx context.Context, a Account) (DropResult, error) {
	user, host := a.User, a.Host
	acct, err := checkAccount(user, host)
	if err != nil {
		return DropResult{}, err
	}
	if Reserved(user) {
		return DropResult{}, &Error{Kind: KindReserved, Op: "account " + user + "@" + host,
			Err: errors.New("it is reserved: never dropped by operator101")}
	}
	if user == c.admin { // what any account not the claimant's gives: nothing tells it is the admin's
		return DropResult{NotClaimed: true}, nil
	}
	o, err := c.Observe(ctx, user, host)
	if err != nil {
		return DropResult{}, err
	}
	if o.Claim == nil && o.Exists && a.Adopt {
		if d, err := decide(a, o, notOwned(user, host)); err != nil || d != adopt {
			return DropResult{NotClaimed: true}, nil
		}
		switch err := c.checkAdoptable(ctx, a, acct); {
		case KindOf(err) == KindAdoptionRefused:
			return DropResult{NotClaimed: true}, nil
		case err != nil:
			return DropResult{}, err
		}
		if err := c.record(ctx, a, notOwned(user, host)); err != nil {
			if KindOf(err) == KindNotClaimed {
				return DropResult{NotClaimed: true}, nil
			}
			return DropResult{}, err
		}
		o.Claim = &claim{Claimant: a.Claimant}
	}
	if o.Claim == nil || o.Claim.UID != a.Claimant.UID {
		return DropResult{NotClaimed: true}, nil
	}
	if o.Exists || len(o.Grants) > 0 {
		if _, err := c.db.ExecContext(ctx, "DROP USER IF EXISTS "+acct); err != nil {
			return DropResult{}, wrap("DROP USER", err)
		}
	}
	// After the account: a record without its account is harmless (its claimant's drop removes it on retry),
	// an account without its record could not be dropped again.
	if _, err := c.db.ExecContext(ctx, "DELETE FROM "+claimTable+" WHERE user = ? AND host = ?", user, host); err != nil {
		return DropResult{}, wrap("deleting the claims", err)
	}
	return DropResult{Dropped: o.Exists}, nil
}
