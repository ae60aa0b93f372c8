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
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// TLSMode says how a connection to the server is secured.
type TLSMode string

// Disabled and Required do not verify the server: whoever is on the network path can pass for it, or relay the
// admin login to it. Under them Open sends the password only as a scramble, or encrypted to a pinned key
// (Target.ServerPublicKey, without TLS), never in clear or to a key the server sends (authguard.go).
const (
	// TLSDisabled: no TLS.
	TLSDisabled TLSMode = "Disabled"
	// TLSRequired: TLS, without checking the server's certificate.
	TLSRequired TLSMode = "Required"
	// TLSVerifyCA: TLS, the server's chain checked against the CA given (required); not its name.
	TLSVerifyCA TLSMode = "VerifyCA"
	// TLSVerifyFull: TLS, the chain and that the certificate names serverName.
	TLSVerifyFull TLSMode = "VerifyFull"
)

// ErrVerifyCANeedsCA: VerifyCA was asked for without a CA. It checks no name, so with the system's roots any
// publicly trusted certificate, issued for any name, would pass for the server's.
var ErrVerifyCANeedsCA = errors.New("tls.mode VerifyCA needs ca.crt, the CA that signed the server's certificate: " +
	"without it any publicly trusted certificate, for any name, would pass; add ca.crt to the admin Secret, " +
	"or use tls.mode VerifyFull, which also checks the server's name")

// TLSConfig builds the configuration of mode from PEM: caPEM, and a client certificate (certPEM and keyPEM,
// both or neither). VerifyFull without caPEM uses the system's roots; VerifyCA requires caPEM
// (ErrVerifyCANeedsCA). Disabled gives nil. Errors carry no key material.
// With a non-nil configuration Open never falls back to plaintext: no credential crosses an unencrypted
// connection.
func TLSConfig(mode TLSMode, serverName string, caPEM, certPEM, keyPEM []byte) (*tls.Config, error) {
	if mode == TLSDisabled {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case len(certPEM) > 0 && len(keyPEM) > 0:
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, errors.New("tls.crt and tls.key are not a certificate and its key")
		}
		cfg.Certificates = []tls.Certificate{cert}
	case len(certPEM) > 0 || len(keyPEM) > 0:
		return nil, errors.New("a client certificate needs both tls.crt and tls.key")
	}
	var roots *x509.CertPool
	if len(caPEM) > 0 {
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("ca.crt holds no PEM certificate")
		}
	}
	switch mode {
	case TLSRequired:
		cfg.InsecureSkipVerify = true //nolint:gosec // Required means encrypt without verifying; the target chose it.
	case TLSVerifyCA:
		if roots == nil {
			return nil, ErrVerifyCANeedsCA
		}
		// crypto/tls checks the chain and the name together; VerifyCA checks the chain only.
		cfg.InsecureSkipVerify = true //nolint:gosec // the chain is verified below, the name on purpose not.
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the server sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	case TLSVerifyFull:
		cfg.RootCAs, cfg.ServerName = roots, serverName
	default:
		return nil, fmt.Errorf("unknown TLS mode %q", mode)
	}
	return cfg, nil
}

// ParseServerPublicKey reads the server's RSA public key (PEM, "PUBLIC KEY" as MySQL writes public_key.pem, or
// "RSA PUBLIC KEY"): the key Target.ServerPublicKey pins.
func ParseServerPublicKey(keyPEM []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("not a PEM public key")
	}
	switch block.Type {
	case "PUBLIC KEY":
		key, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, errors.New("not a public key")
		}
		if rsaKey, ok := key.(*rsa.PublicKey); ok {
			return rsaKey, nil
		}
		return nil, errors.New("not an RSA public key")
	case "RSA PUBLIC KEY":
		key, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, errors.New("not an RSA public key")
		}
		return key, nil
	}
	return nil, fmt.Errorf("a PEM %q block, not a public key", block.Type)
}
