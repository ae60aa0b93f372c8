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

// Package mariadbtest runs a private MariaDB (hack/mariadb.sh) for tests: its own data directory under a
// temporary directory, on 127.0.0.1 and a free port, with a random admin password.
package mariadbtest

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/testenv"
)

// Server is a running private MariaDB.
type Server struct {
	// Admin is the admin account's target (without TLS).
	Admin mysqlaccount.Target
	// CAFile is the CA that signed the server's certificate, when it was started with TLS.
	CAFile string
	dir    string
	root   string
	env    []string
}

// Option changes how Start starts the server.
type Option func(*Server)

// WithTLS starts the server with the certificates in dir (ca.pem, server-cert.pem, server-key.pem); with
// require, it refuses unencrypted connections.
func WithTLS(dir string, require bool) Option {
	return func(s *Server) {
		s.env = append(s.env, "MARIADB_TLS_DIR="+dir)
		if require {
			s.env = append(s.env, "MARIADB_REQUIRE_TLS=1")
		}
	}
}

// Start installs MariaDB when missing (as root, with apt-get) and starts a private instance.
func Start(opts ...Option) (*Server, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "operator101-mariadb-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, root: root}
	for _, o := range opts {
		o(s)
	}
	if err := s.run("start"); err != nil {
		_ = s.Stop() // a server may have started before the script failed
		_ = os.RemoveAll(dir)
		return nil, err
	}
	env, err := readEnv(filepath.Join(dir, "env"))
	if err != nil {
		_ = s.Stop()
		return nil, err
	}
	port, err := strconv.Atoi(env["MARIADB_PORT"])
	if err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("MARIADB_PORT: %w", err)
	}
	s.Admin = mysqlaccount.Target{Host: env["MARIADB_HOST"], Port: port, User: env["MARIADB_ADMIN_USER"],
		Password: env["MARIADB_ADMIN_PASSWORD"]}
	s.CAFile = env["MARIADB_CA_FILE"]
	return s, nil
}

// SQL is a pool of the admin account, closed when the test ends: for a test to look at the server, or change
// it behind the operator's back.
func (s *Server) SQL(t testing.TB) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = s.Admin.User, s.Admin.Password
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(s.Admin.Host, strconv.Itoa(s.Admin.Port))
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatalf("opening the admin pool: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Halt stops the server and keeps its data; Resume starts it again on the same port.
func (s *Server) Halt() error { return s.run("halt") }

// Resume starts a halted server again.
func (s *Server) Resume() error { return s.run("start") }

// Stop stops the server and removes its directory.
func (s *Server) Stop() error { return s.run("stop") }

func (s *Server) run(cmd string) error {
	c := exec.Command(filepath.Join(s.root, "hack", "mariadb.sh"), cmd)
	c.Env = append(append(os.Environ(), s.env...), "MARIADB_DIR="+s.dir)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		return fmt.Errorf("hack/mariadb.sh %s: %w\n%s", cmd, err, out.String())
	}
	return nil
}

func readEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env, sc.Err()
}

// CanLogin connects as the account of t and disconnects: the way a test proves a password works.
func CanLogin(ctx context.Context, t mysqlaccount.Target, timeout time.Duration) error {
	c, err := mysqlaccount.Open(ctx, t, timeout)
	if err != nil {
		return err
	}
	return c.Close()
}

// Require skips t when s was not started: a TestMain starts no MariaDB in -short mode (make test), since
// installing it needs root and Debian's packages. make ci runs every such test.
func Require(t testing.TB, s *Server) {
	t.Helper()
	if s == nil {
		t.Skip("needs MariaDB, which -short (make test) does not start; make ci runs this test")
	}
}
