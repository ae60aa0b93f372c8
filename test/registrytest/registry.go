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

// Package registrytest runs container registries for tests that push images: Debian's docker-registry, over
// plain HTTP or over TLS with a CA made for the test, each stopped when its test ends. It also reads the bundles
// of a rendered file-based catalog, which those tests compare.
package registrytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TLS starts a registry (Debian's docker-registry) on a free port of ip (127.0.0.1, an address the local
// cluster made, or MachineAddress) that serves TLS with a certificate for ip from a CA made here, whose certificate it writes to certDir/ca.crt (podman's --cert-dir layout). It returns the
// registry's host:port; the registry stops when the test ends.
func TLS(t *testing.T, dir, certDir, ip string) string {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "operator101 test registry CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: ip},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP(ip)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.MkdirAll(dir, 0o755), os.MkdirAll(certDir, 0o755)); err != nil {
		t.Fatal(err)
	}
	for path, block := range map[string]*pem.Block{
		filepath.Join(certDir, "ca.crt"): {Type: "CERTIFICATE", Bytes: caDER},
		filepath.Join(dir, "tls.crt"):    {Type: "CERTIFICATE", Bytes: der},
		filepath.Join(dir, "tls.key"):    {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return serve(t, ip, dir, fmt.Sprintf(", tls: {certificate: %s, key: %s}", filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")), hc, "https")
}

// Plain starts a registry (Debian's docker-registry) on 127.0.0.1 that serves plain HTTP, as docker's
// daemon and podman accept on this machine without a CA. It returns the registry's host:port; the registry
// stops when the test ends.
func Plain(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return serve(t, "127.0.0.1", dir, "", &http.Client{Timeout: 2 * time.Second}, "http")
}

// MachineAddress is an IPv4 address of this machine that is not loopback, for a registry the docker CLI must
// reach over TLS: the CLI's manifest commands take a registry on a loopback address (127.0.0.0/8, ::1,
// localhost) for one that may speak plain HTTP, as docker does by default, and push to it over HTTP whatever it
// serves. The local cluster's addresses (198.18.0.0/15), which come and go with it, are left out. A registry
// on it is reachable from the machine's network while the test runs.
func MachineAddress(t *testing.T) string {
	t.Helper()
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	_, cluster, _ := net.ParseCIDR("198.18.0.0/15")
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() && !cluster.Contains(n.IP) {
				return n.IP.String()
			}
		}
	}
	t.Fatal("this machine has no IPv4 address but loopback and the local cluster's: the docker CLI pushes to a registry on a loopback address over plain HTTP only")
	return ""
}

// serve runs docker-registry on a free port of ip, storing under dir, with tlsYAML added to its
// http settings, until the test ends; it waits until the registry answers hc on scheme://addr/v2/.
func serve(t *testing.T, ip, dir, tlsYAML string, hc *http.Client, scheme string) string {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	config := filepath.Join(dir, "registry.yml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: %s}}
http: {addr: %s%s}
`, filepath.Join(dir, "data"), addr, tlsYAML)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("docker-registry", "serve", config)
	logf, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := hc.Get(scheme + "://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			return addr
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "registry.log"))
			t.Fatalf("the registry on %s (%s) did not answer: %v\n%s", addr, scheme, err, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// CatalogBundles reads a rendered catalog's olm.bundle documents, by name, as text.
func CatalogBundles(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		if !strings.Contains(doc, "\nschema: olm.bundle") {
			continue
		}
		for _, line := range strings.Split(doc, "\n") {
			if name, ok := strings.CutPrefix(line, "name: "); ok {
				out[name] = doc
				break
			}
		}
	}
	return out
}

// ListPlatforms reads raw, a manifest list or OCI index as `skopeo inspect --raw` prints it: its media type and
// the OS/architecture of each image it names, sorted.
func ListPlatforms(t *testing.T, raw string) (mediaType string, platforms []string) {
	t.Helper()
	var list struct {
		MediaType string `json:"mediaType"`
		Manifests []struct {
			Platform struct{ OS, Architecture string } `json:"platform"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatalf("not a manifest list: %v\n%s", err, raw)
	}
	for _, m := range list.Manifests {
		platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	slices.Sort(platforms)
	return list.MediaType, platforms
}
