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

package databaseuser_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/databaseuser"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/testenv"
)

// fakeMySQL is a listener on 127.0.0.1 that speaks just enough of the MySQL protocol, without TLS, for the
// operator to log in (any credentials) and read SELECT VERSION(), which it answers with version. It records
// every command it receives after the login; any other query or command is answered with an error (1146,
// table does not exist), so no account can be read or changed through it.
type fakeMySQL struct {
	ln      net.Listener
	version string

	mu       sync.Mutex
	logins   int
	commands []string
}

func startFakeMySQL(t *testing.T, version string) *fakeMySQL {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeMySQL{ln: ln, version: version}
	var conns sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed
			}
			conns.Go(func() { f.serve(c) })
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		conns.Wait()
	})
	return f
}

func (f *fakeMySQL) port() string { return strconv.Itoa(f.ln.Addr().(*net.TCPAddr).Port) }

// received is what the clients sent after logging in: each query's text, or the command's number.
func (f *fakeMySQL) received() (logins int, commands []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logins, append([]string(nil), f.commands...)
}

func (f *fakeMySQL) serve(c net.Conn) {
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	write := func(seq byte, payload []byte) error {
		hdr := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), seq}
		_, err := c.Write(append(hdr, payload...))
		return err
	}
	read := func() ([]byte, error) {
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return nil, err
		}
		p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
		_, err := io.ReadFull(c, p)
		return p, err
	}
	lenenc := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	const (
		capabilities     = 0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000 // long password, 4.1, transactions, secure conn, plugin auth
		statusAutocommit = 0x2
	)
	ok := []byte{0x00, 0x00, 0x00, statusAutocommit, 0, 0, 0}
	eof := []byte{0xfe, 0, 0, statusAutocommit, 0}

	// Handshake v10, mysql_native_password; whatever the client answers, it is logged in.
	hs := append([]byte{10}, f.version...)
	hs = append(hs, 0, 1, 0, 0, 0) // end of version, connection id
	hs = append(hs, "abcdefgh"...) // scramble, first part
	hs = append(hs, 0)             // filler
	hs = binary.LittleEndian.AppendUint16(hs, capabilities&0xffff)
	hs = append(hs, 45) // utf8mb4_general_ci
	hs = binary.LittleEndian.AppendUint16(hs, statusAutocommit)
	hs = binary.LittleEndian.AppendUint16(hs, capabilities>>16)
	hs = append(hs, 21)                    // scramble length
	hs = append(hs, make([]byte, 10)...)   // reserved
	hs = append(hs, "ijklmnopqrst\x00"...) // scramble, second part
	hs = append(hs, "mysql_native_password\x00"...)
	if write(0, hs) != nil {
		return
	}
	if _, err := read(); err != nil {
		return
	}
	if write(2, ok) != nil {
		return
	}
	f.mu.Lock()
	f.logins++
	f.mu.Unlock()

	for {
		p, err := read()
		if err != nil || len(p) == 0 {
			return
		}
		cmd := fmt.Sprintf("command %#x", p[0])
		if p[0] == 0x03 { // COM_QUERY
			cmd = string(p[1:])
		}
		f.mu.Lock()
		f.commands = append(f.commands, cmd)
		f.mu.Unlock()
		switch {
		case p[0] == 0x01: // COM_QUIT
			return
		case cmd == "SELECT VERSION()":
			column := append(lenenc("def"), 0, 0, 0)
			column = append(column, lenenc("VERSION()")...)
			column = append(column, 0, 0x0c, 45, 0, 0, 1, 0, 0, 0xfd, 0, 0, 0x1f, 0, 0)
			for i, pkt := range [][]byte{{1}, column, eof, lenenc(f.version), eof} {
				if write(byte(i+1), pkt) != nil {
					return
				}
			}
		default:
			msg := append([]byte{0xff, 0x7a, 0x04, '#'}, "42S02no such table here"...)
			if write(1, msg) != nil {
				return
			}
		}
	}
}

// TestPasswordTooLongRefused: against a MySQL 8.4 server (a fake one that logs the operator in and answers
// SELECT VERSION()), a DatabaseUser whose Secret holds a password one byte longer than caching_sha2_password
// accepts (257 bytes) is refused: Ready=False, reason PasswordTooLong, a message naming the Secret, the key,
// both lengths and the server, and exactly one Warning Event over several resyncs. The server receives nothing
// but SELECT VERSION(): the account is neither read nor changed, and nothing was hashed. The password appears
// in no log line, Event or status. Shortened to 256 bytes (the limit), it is accepted: the operator goes on to
// read the account, which the fake refuses. Needs no MariaDB.
func TestPasswordTooLongRefused(t *testing.T) {
	ctx := context.Background()
	fake := startFakeMySQL(t, "8.4.3")
	opNS := env.NewNamespace(t, "dbu-pwlen")
	adminPw := randomPassword(t, "admin")
	mkSecret(t, opNS, "fake-mysql", map[string]string{"host": "127.0.0.1", "port": fake.port(),
		"username": "operator101admin", "password": adminPw})
	mkTarget(t, "fake-mysql84", opNS, "fake-mysql", nil)
	log := captureLog(t)
	mgr := env.StartManager(t, nil, func(mgr ctrl.Manager) error {
		return databaseuser.Setup(mgr, reconciler.Options{Workers: 2}, databaseuser.Config{
			OperatorNamespace: opNS, ResyncPeriod: resync, ConnectTimeout: 2 * time.Second})
	}, func(opts *ctrl.Options) {
		opts.Logger = zap.New(zap.WriteTo(log), zap.UseDevMode(true), zap.Level(zapLevel(-10)))
	})
	targetReady(t, "fake-mysql84", mygroupv1alpha1.ReasonConnected)

	limit := mysqlaccount.MaxCachingSHA2PasswordLength
	pad := func(prefix string, n int) string { return prefix + strings.Repeat("x", n-len(prefix)) }
	tooLong, atLimit := pad(randomPassword(t, "long"), limit+1), pad(randomPassword(t, "limit"), limit)
	tenant := env.NewNamespace(t, "tenant")
	mkSecret(t, tenant, "s", map[string]string{"pw": tooLong})
	dbu := newDBU(tenant, "app", uniqueUser("app"), "s", "pw")
	dbu.Labels = map[string]string{mygroupv1alpha1.TargetLabel: "fake-mysql84"}
	dbu.Spec.CleanupPolicy = mygroupv1alpha1.CleanupSkip // the fake holds no account to drop
	key := testenv.Create(t, env.Client, dbu)

	got := waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonPasswordTooLong)
	c := meta.FindStatusCondition(got.Status.Conditions, mygroupv1alpha1.ConditionReady)
	t.Logf("%s: %s", c.Reason, c.Message)
	for _, want := range []string{`Secret "s"`, `key "pw"`, fmt.Sprintf("%d bytes long", limit+1),
		fmt.Sprintf("the %d bytes MySQL 8.4.3 accepts", limit), "caching_sha2_password", "Shorten it"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("the condition's message does not say %q: %s", want, c.Message)
		}
	}

	// Several resyncs later: still refused, the same single Event, nothing sent but SELECT VERSION().
	n := mgr.Reconciles.Get(key)
	poll(t, timeout, "3 more checks of the DatabaseUser", func() error {
		if got := mgr.Reconciles.Get(key); got < n+3 {
			return fmt.Errorf("%d checks", got)
		}
		return nil
	})
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonPasswordTooLong)
	evs := testenv.EventsOfReason(t, env.Client, tenant, "app", mygroupv1alpha1.ReasonPasswordTooLong)
	if len(evs) != 1 || evs[0].Type != corev1.EventTypeWarning || evs[0].Series != nil {
		t.Errorf("want one Warning Event %s, got %+v", mygroupv1alpha1.ReasonPasswordTooLong, evs)
	}
	logins, commands := fake.received()
	t.Logf("%d checks, %d logins to the server, commands %q", mgr.Reconciles.Get(key), logins, commands)
	if logins == 0 {
		t.Fatal("no login to the fake server: the test would prove nothing")
	}
	for _, cmd := range commands {
		if cmd != "SELECT VERSION()" && cmd != "command 0x1" { // COM_QUIT
			t.Errorf("the server received %q for a password it cannot take", cmd)
		}
	}
	assertNoSecrets(t, &operator{ns: opNS, log: log, mgr: mgr}, tenant, tooLong, adminPw)

	// At the limit: accepted, and the operator reads the account (which the fake refuses).
	setSecret(t, tenant, "s", map[string]string{"pw": atLimit})
	poll(t, timeout, "the account read once the password is 256 bytes", func() error {
		_, commands := fake.received()
		for _, cmd := range commands {
			if cmd != "SELECT VERSION()" && cmd != "command 0x1" {
				return nil
			}
		}
		return errors.New("nothing but SELECT VERSION() yet")
	})
	waitReady(t, key, metav1.ConditionFalse, mygroupv1alpha1.ReasonDatabaseError)
	assertNoSecrets(t, &operator{ns: opNS, log: log, mgr: mgr}, tenant, tooLong, atLimit, adminPw)

	if err := env.Client.Delete(ctx, mustGet(t, tenant, "app")); err != nil {
		t.Fatal(err)
	}
	waitGone(t, key)
}
