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

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// mysqlConfig is how an application connects with what a DatabaseUser's connection Secret holds, mounted as
// files in dir: the uri key (mysql://user:password@host:port/database?ssl-mode=...) and ca.crt. Only
// ssl-mode=VERIFY_IDENTITY is taken: the server's certificate must chain to ca.crt and name the uri's host.
func mysqlConfig(dir string) (*mysql.Config, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "uri"))
	if err != nil {
		return nil, fmt.Errorf("read the uri: %w", err)
	}
	u, err := url.Parse(strings.TrimSpace(string(raw)))
	if err != nil || u.Scheme != "mysql" || u.User == nil {
		return nil, fmt.Errorf("the uri is not mysql://user:password@host:port/database")
	}
	if mode := u.Query().Get("ssl-mode"); mode != "VERIFY_IDENTITY" {
		return nil, fmt.Errorf("the uri's ssl-mode is %q; this probe connects with VERIFY_IDENTITY only", mode)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("read ca.crt: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in ca.crt")
	}
	const tlsName = "connection-secret"
	if err := mysql.RegisterTLSConfig(tlsName, &tls.Config{RootCAs: pool, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}); err != nil {
		return nil, fmt.Errorf("register the TLS configuration: %w", err)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr, cfg.DBName, cfg.TLSConfig = "tcp", u.Host, strings.TrimPrefix(u.Path, "/"), tlsName
	return cfg, nil
}

// mysqlWrite logs in with the connection Secret in dir, over TLS that verifies the server, writes a row to a
// table of the Secret's database and reads the count back.
func mysqlWrite(ctx context.Context, dir string) error {
	cfg, err := mysqlConfig(dir)
	if err != nil {
		return err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("mysql: %w", err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var cipher string
	if err := db.QueryRowContext(ctx, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_cipher'").Scan(&cipher); err != nil {
		return fmt.Errorf("log in as %s to %s: %w", cfg.User, cfg.Addr, err)
	}
	if cipher == "" {
		return fmt.Errorf("logged in as %s without TLS", cfg.User)
	}
	for _, stmt := range []string{"CREATE TABLE IF NOT EXISTS probe (n INT)", "INSERT INTO probe VALUES (1)"} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM probe").Scan(&n); err != nil {
		return fmt.Errorf("count the rows: %w", err)
	}
	fmt.Printf("mysql %s@%s/%s over TLS (%s), server verified: %d rows in probe\n", cfg.User, cfg.Addr, cfg.DBName, cipher, n)
	return nil
}
