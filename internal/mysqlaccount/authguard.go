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
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"github.com/go-sql-driver/mysql"
)

// ErrPasswordExchangeRefused: a server that is not verified (tls.mode Disabled or Required) asked for an
// exchange that would hand it the admin password, and the operator refused it.
var ErrPasswordExchangeRefused = errors.New("refused to send the admin password to a server that is not verified")

// The login's exchange, as far as the guard reads it.
const (
	capSSL         = 0x800 // CLIENT_SSL
	pktOK          = 0x00
	pktMoreData    = 0x01
	pktAuthSwitch  = 0xfe
	pktErr         = 0xff
	fastAuthOK     = 0x03 // caching_sha2_password: the scramble matched
	fullAuthNeeded = 0x04 // caching_sha2_password: send the password itself (clear over TLS, else RSA)
)

// scramblePlugins answer with a proof computed from the password and the server's nonce, never the password.
var scramblePlugins = map[string]bool{"mysql_native_password": true, "caching_sha2_password": true, "client_ed25519": true}

// authGuard watches the login to a server that is not verified. The driver gives such a server the password
// itself, with no hook to stop it: in clear over TLS for caching_sha2_password's full authentication and for
// sha256_password (from the start or after a switch), and without TLS encrypted to an RSA key the server
// sends. So the guard, not the driver, does TLS (the driver sees a plain connection, whose packets the guard
// reads and numbers as they would be after an SSLRequest), and it ends the login before the driver sees a
// request for any of those: the password is then only sent as a scramble, or, without TLS, encrypted to the
// key pinned in the admin Secret.
type authGuard struct {
	tls    *tls.Config // Required: the TLS the guard sets up; nil: Disabled
	pinned bool        // without TLS, the driver encrypts a full authentication to a pinned key

	mu    sync.Mutex
	cause error // why the guard ended the last login it ended
}

// newAuthGuard is the guard of t, nil when t verifies the server (VerifyCA, VerifyFull): the driver then does
// TLS itself, and sending the password inside it is what such a server is trusted with.
func newAuthGuard(t Target) *authGuard {
	if t.TLS != nil && (!t.TLS.InsecureSkipVerify || t.TLS.VerifyConnection != nil || t.TLS.VerifyPeerCertificate != nil) {
		return nil
	}
	g := &authGuard{}
	if t.TLS != nil {
		g.tls = t.TLS.Clone()
	} else {
		g.pinned = t.ServerPublicKey != nil
	}
	return g
}

func (g *authGuard) mode() TLSMode {
	if g.tls != nil {
		return TLSRequired
	}
	return TLSDisabled
}

// err is why the guard ended the last login it ended (the driver reports only "invalid connection").
func (g *authGuard) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cause
}

func (g *authGuard) refuse(err error) error {
	g.mu.Lock()
	g.cause = err
	g.mu.Unlock()
	return err
}

// refuseExchange is the refusal of what: what the server asked, why it is refused, and what to do.
func (g *authGuard) refuseExchange(what string) error {
	how := "in clear inside TLS that does not verify the server"
	fix := "use tls.mode VerifyCA or VerifyFull, or an admin account with mysql_native_password or ed25519"
	if g.tls == nil {
		how = "encrypted to a key the server itself sends"
		fix = "add the server's RSA public key to the admin Secret as server-public-key.pem, " +
			"or use tls.mode VerifyCA or VerifyFull"
	}
	return g.refuse(fmt.Errorf("%w: the server asked for %s, which sends the password %s (tls.mode %s): "+
		"an impostor could be asking; %s", ErrPasswordExchangeRefused, what, how, g.mode(), fix))
}

// dial is the driver's DialFunc.
func (g *authGuard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &guardedConn{Conn: c, rw: c, g: g}, nil
}

// guardedConn is the connection the driver sees: the TCP connection (deadlines, Close, the driver's liveness
// check) with reads and writes through rw, which is TLS over it once the guard set TLS up.
type guardedConn struct {
	net.Conn
	rw io.ReadWriter
	g  *authGuard

	started bool   // the server's greeting was read
	done    bool   // the login ended (OK or error): from then on bytes pass as they are
	shift   byte   // 1 under TLS: the guard's SSLRequest is one packet the driver does not count
	pending []byte // the server's packets the guard let through, not yet read by the driver
	out     []byte // what the driver wrote, not yet a whole packet
}

func (c *guardedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

func (c *guardedConn) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		if c.done {
			return c.rw.Read(p)
		}
		var hdr [4]byte
		if _, err := io.ReadFull(c.rw, hdr[:]); err != nil {
			return 0, err
		}
		payload := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
		if _, err := io.ReadFull(c.rw, payload); err != nil {
			return 0, err
		}
		if err := c.inspect(payload); err != nil {
			return 0, err
		}
		hdr[3] -= c.shift
		c.pending = append(append(c.pending, hdr[:]...), payload...)
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// inspect lets a packet of the server's through, or refuses it before the driver can answer it.
func (c *guardedConn) inspect(p []byte) error {
	if len(p) == 0 {
		return c.g.refuse(errors.New("the server sent an empty packet during the login"))
	}
	if !c.started {
		c.started = true
		if p[0] == pktErr {
			c.done = true
			return nil
		}
		caps, plugin := greeting(p)
		if c.g.tls != nil && caps&capSSL == 0 {
			return c.g.refuse(fmt.Errorf("%w: the server offers no TLS (tls.mode Required)", mysql.ErrNoTLS))
		}
		if plugin == "sha256_password" && !c.g.pinned {
			return c.g.refuseExchange("sha256_password")
		}
		return nil
	}
	switch p[0] {
	case pktOK, pktErr:
		c.done = true
	case pktAuthSwitch:
		plugin := "mysql_old_password" // a bare switch request
		if len(p) > 1 {
			plugin, _, _ = cutZero(p[1:])
		}
		if !scramblePlugins[plugin] && (plugin != "sha256_password" || !c.g.pinned) {
			return c.g.refuseExchange("a switch to " + plugin)
		}
	case pktMoreData:
		switch {
		case len(p) == 2 && p[1] == fastAuthOK:
		case len(p) == 2 && p[1] == fullAuthNeeded && c.g.pinned:
		case len(p) == 2 && p[1] == fullAuthNeeded:
			return c.g.refuseExchange("caching_sha2_password full authentication")
		default:
			return c.g.refuseExchange("its RSA public key to be used")
		}
	}
	return nil
}

// greeting reads the capabilities and the authentication plugin of the server's handshake packet, as the
// driver does; what it cannot read is 0 and "".
func greeting(p []byte) (caps uint32, plugin string) {
	_, rest, ok := cutZero(p[1:]) // protocol version, server version
	if !ok || len(rest) < 4+8+1+2 {
		return 0, ""
	}
	rest = rest[4+8+1:] // connection id, scramble (first part), filler
	caps = uint32(binary.LittleEndian.Uint16(rest))
	rest = rest[2:]
	if len(rest) < 1+2+2+1+10+13 {
		return caps, ""
	}
	caps |= uint32(binary.LittleEndian.Uint16(rest[3:])) << 16
	plugin, _, _ = cutZero(rest[1+2+2+1+10+13:])
	return caps, plugin
}

// cutZero splits b at its first NUL; without one, all of b is the string.
func cutZero(b []byte) (string, []byte, bool) {
	for i, x := range b {
		if x == 0 {
			return string(b[:i]), b[i+1:], true
		}
	}
	return string(b), nil, false
}

func (c *guardedConn) Write(p []byte) (int, error) {
	if c.done && len(c.out) == 0 {
		return c.rw.Write(p)
	}
	c.out = append(c.out, p...)
	for len(c.out) >= 4 {
		n := 4 + (int(c.out[0]) | int(c.out[1])<<8 | int(c.out[2])<<16)
		if len(c.out) < n {
			break
		}
		pkt := c.out[:n:n]
		c.out = c.out[n:]
		if err := c.forward(pkt); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// forward sends one packet of the driver's: the first, the handshake response, under TLS after an SSLRequest
// (its first 32 bytes, as the driver would have sent them) and the TLS handshake.
func (c *guardedConn) forward(pkt []byte) error {
	if c.g.tls != nil && c.shift == 0 && !c.done {
		if len(pkt) < 4+32 {
			return c.g.refuse(errors.New("the driver's handshake response is too short"))
		}
		flags := binary.LittleEndian.Uint32(pkt[4:]) | capSSL
		binary.LittleEndian.PutUint32(pkt[4:], flags)
		sslRequest := append([]byte{32, 0, 0, pkt[3]}, pkt[4:4+32]...)
		if _, err := c.rw.Write(sslRequest); err != nil {
			return c.g.refuse(err)
		}
		tc := tls.Client(c.Conn, c.g.tls)
		if err := tc.Handshake(); err != nil {
			return c.g.refuse(err)
		}
		c.rw, c.shift = tc, 1
	}
	if !c.done {
		pkt[3] += c.shift
	}
	_, err := c.rw.Write(pkt)
	return err
}
