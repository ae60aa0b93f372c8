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

package mariadbtest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // MySQL's RSA padding (OAEP with SHA-1), to decrypt what the driver sends.
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/operator101/operator101/internal/mysqlaccount"
)

// FakeNonce is the fake's scramble, in its greeting and in every switch request.
const FakeNonce = "abcdefghijklmnopqrst"

// Fake is a fake MySQL server on 127.0.0.1 that speaks just enough of the protocol for a client to log in and
// read SELECT VERSION(). It greets with its plugin, over TLS when it has a TLS config (the client must send an
// SSLRequest first), and then runs its step, which may ask the client for the password in some way; then it
// logs the client in, whatever it sent. It answers SELECT VERSION() with its version and any other query or
// command with an error (1146, table does not exist), so no account can be read or changed through it. It
// records every packet the client sends (decrypted from TLS) and every command after the login, answers each
// request for its RSA public key with its own, and checks the packets' numbers, and the CLIENT_SSL flag under
// TLS, as a server does.
type Fake struct {
	ln  net.Listener
	opt FakeOptions
	key *rsa.PrivateKey

	mu       sync.Mutex
	packets  [][]byte
	commands []string
	logins   int
	keys     int
	protoErr []string
}

// FakeOptions say how a Fake greets and what it asks.
type FakeOptions struct {
	// Version is what SELECT VERSION() answers, and the greeting says (default 10.11.19-MariaDB).
	Version string
	// Plugin is the authentication plugin of the greeting (default mysql_native_password).
	Plugin string
	// TLS, when set, is the fake's TLS: the client must switch to it before its handshake response.
	TLS *tls.Config
	// Step, when set, runs after the handshake response and before the login's OK.
	Step func(*FakeSession) error
}

// FakeSession is one connection to a Fake.
type FakeSession struct {
	f   *Fake
	c   net.Conn
	seq byte
}

// StartFake starts a Fake, closed when the test ends.
func StartFake(t testing.TB, o FakeOptions) *Fake {
	t.Helper()
	if o.Version == "" {
		o.Version = "10.11.19-MariaDB"
	}
	if o.Plugin == "" {
		o.Plugin = "mysql_native_password"
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	f := &Fake{opt: o, key: key}
	f.ln = Serve(t, f.serve)
	return f
}

// Port is the port the fake listens on.
func (f *Fake) Port() int { return f.ln.Addr().(*net.TCPAddr).Port }

// PortString is Port, as an admin Secret holds it.
func (f *Fake) PortString() string { return strconv.Itoa(f.Port()) }

// Target is the fake as a target, with an admin account of password.
func (f *Fake) Target(password string) mysqlaccount.Target {
	return mysqlaccount.Target{Host: "127.0.0.1", Port: f.Port(), User: "operator101admin", Password: password}
}

// PublicKey is the fake's RSA public key.
func (f *Fake) PublicKey() *rsa.PublicKey { return &f.key.PublicKey }

// Received is what the clients sent after logging in: each query's text, or the command's number.
func (f *Fake) Received() (logins int, commands []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logins, append([]string(nil), f.commands...)
}

// Report is how many logins the fake let in, and the protocol errors it saw.
func (f *Fake) Report() (logins int, protoErr []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logins, append([]string(nil), f.protoErr...)
}

// KeysSent is how many times the fake sent its public key.
func (f *Fake) KeysSent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keys
}

// Leaked says how password reached the fake, "" when it did not: in clear in a packet, or encrypted (RSA-OAEP,
// XORed with the nonce, as MySQL's clients do) to the fake's key.
func (f *Fake) Leaked(password string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.packets {
		if bytes.Contains(p, []byte(password)) {
			return "in clear"
		}
		plain, err := rsa.DecryptOAEP(sha1.New(), nil, f.key, p, nil)
		if err != nil {
			continue
		}
		for i := range plain {
			plain[i] ^= FakeNonce[i%len(FakeNonce)]
		}
		if bytes.Contains(plain, []byte(password)) {
			return "encrypted to its RSA key"
		}
	}
	return ""
}

func (f *Fake) protocolError(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.protoErr = append(f.protoErr, fmt.Sprintf(format, args...))
}

// Write sends one packet, numbered in sequence.
func (s *FakeSession) Write(payload []byte) error {
	hdr := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), s.seq}
	s.seq++
	_, err := s.c.Write(append(hdr, payload...))
	return err
}

// Read reads one packet, records it, and checks its number.
func (s *FakeSession) Read() ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(s.c, hdr[:]); err != nil {
		return nil, err
	}
	p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	if _, err := io.ReadFull(s.c, p); err != nil {
		return nil, err
	}
	if hdr[3] != s.seq {
		s.f.protocolError("packet number %d, want %d", hdr[3], s.seq)
	}
	s.seq = hdr[3] + 1
	s.f.mu.Lock()
	s.f.packets = append(s.f.packets, p)
	s.f.mu.Unlock()
	return p, nil
}

// PublicKey sends the fake's RSA public key, as a server answers a request for it.
func (s *FakeSession) PublicKey() error {
	der, err := x509.MarshalPKIXPublicKey(&s.f.key.PublicKey)
	if err != nil {
		return err
	}
	s.f.mu.Lock()
	s.f.keys++
	s.f.mu.Unlock()
	return s.Write(append([]byte{0x01}, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...))
}

// AnswerKeyRequests reads the client's packets, sending the public key for each request of it (1 or 2),
// until one is something else.
func (s *FakeSession) AnswerKeyRequests() error {
	for {
		p, err := s.Read()
		if err != nil {
			return err
		}
		if !bytes.Equal(p, []byte{1}) && !bytes.Equal(p, []byte{2}) {
			return nil
		}
		if err := s.PublicKey(); err != nil {
			return err
		}
	}
}

// SwitchTo asks the client to switch to plugin.
func (s *FakeSession) SwitchTo(plugin string) error {
	return s.Write([]byte("\xfe" + plugin + "\x00" + FakeNonce + "\x00"))
}

func (f *Fake) serve(c net.Conn) {
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	s := &FakeSession{f: f, c: c}
	caps := uint32(0x1 | 0x200 | 0x2000 | 0x8000 | 0x80000) // long password, 4.1, transactions, secure conn, plugin auth
	if f.opt.TLS != nil {
		caps |= 0x800 // SSL
	}
	hs := append([]byte{10}, f.opt.Version+"\x00"...)
	hs = append(hs, 1, 0, 0, 0)       // connection id
	hs = append(hs, FakeNonce[:8]...) // scramble, first part
	hs = append(hs, 0)                // filler
	hs = binary.LittleEndian.AppendUint16(hs, uint16(caps))
	hs = append(hs, 45, 2, 0) // utf8mb4_general_ci, autocommit
	hs = binary.LittleEndian.AppendUint16(hs, uint16(caps>>16))
	hs = append(hs, 21)                      // scramble length
	hs = append(hs, make([]byte, 10)...)     // reserved
	hs = append(hs, FakeNonce[8:]+"\x00"...) // scramble, second part
	hs = append(hs, f.opt.Plugin+"\x00"...)
	if s.Write(hs) != nil {
		return
	}
	resp, err := s.Read()
	if err != nil {
		return
	}
	if f.opt.TLS != nil {
		if len(resp) != 32 || binary.LittleEndian.Uint32(resp)&0x800 == 0 {
			f.protocolError("no SSLRequest under TLS: %d bytes", len(resp))
			return
		}
		tc := tls.Server(c, f.opt.TLS)
		if tc.Handshake() != nil {
			return
		}
		s.c = tc
		if resp, err = s.Read(); err != nil {
			return
		}
		if len(resp) < 4 || binary.LittleEndian.Uint32(resp)&0x800 == 0 {
			f.protocolError("a handshake response without CLIENT_SSL under TLS")
		}
	}
	if f.opt.Step != nil {
		if f.opt.Step(s) != nil {
			return
		}
	}
	if s.Write([]byte{0, 0, 0, 2, 0, 0, 0}) != nil { // OK: logged in, whatever was sent
		return
	}
	f.mu.Lock()
	f.logins++
	f.mu.Unlock()
	for {
		s.seq = 0
		p, err := s.Read()
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
			lenenc := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
			column := append(lenenc("def"), 0, 0, 0)
			column = append(column, lenenc("VERSION()")...)
			column = append(column, 0, 0x0c, 45, 0, 0, 1, 0, 0, 0xfd, 0, 0, 0x1f, 0, 0)
			eof := []byte{0xfe, 0, 0, 2, 0}
			for _, pkt := range [][]byte{{1}, column, eof, lenenc(f.opt.Version), eof} {
				if s.Write(pkt) != nil {
					return
				}
			}
		default:
			if s.Write(append([]byte{0xff, 0x7a, 0x04, '#'}, "42S02no such table here"...)) != nil {
				return
			}
		}
	}
}

// ErrorServer is a listener on 127.0.0.1, closed when the test ends, that answers every connection with one
// MySQL error packet (SQL state 28000), as a server refusing a client does before or during its handshake:
// what mysqlaccount.Open gets back is the driver's own *mysql.MySQLError. It returns the port.
func ErrorServer(t testing.TB, number uint16, message string) int {
	t.Helper()
	return Port(Serve(t, func(c net.Conn) {
		p := binary.LittleEndian.AppendUint16([]byte{0xff}, number)
		p = append(append(p, "#28000"...), message...)
		_, _ = c.Write(append([]byte{byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), 0}, p...))
		_ = c.Close()
	}))
}
