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
// plain HTTP or over TLS with a CA made for the test, each stopped when its test ends, on 127.0.0.1 or on an
// address the test makes for itself (OwnAddress), deleted when it ends. It also reads the bundles of a rendered
// file-based catalog, which those tests compare.
package registrytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TLS starts a registry (Debian's docker-registry) on a free port of ip (127.0.0.1, an address the local
// cluster made, or OwnAddress's) that serves TLS with a certificate for ip from a CA made here, whose certificate it writes to certDir/ca.crt (podman's --cert-dir layout). It returns the
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

// OwnAddresses is the range OwnAddress takes addresses from: a part of 198.18.0.0/15, the range the local cluster
// makes its addresses in (hack/cluster/lib.sh), that the cluster never uses.
const OwnAddresses = "198.18.64.0/18"

// ownAddressLock serializes OwnAddress's choice of a free address across test processes.
const ownAddressLock = "/run/operator101-own-address.lock"

var (
	ownMu    sync.Mutex
	ownLinks = map[string]bool{} // the links this process made and has not deleted yet
	ownSeq   int
	ownName  = regexp.MustCompile(`^o101-([0-9]+)-[0-9]+$`)
)

// OwnAddress makes an IPv4 address of the test's own on this machine, as the local cluster makes its node
// address, and returns it: a free address of OwnAddresses, chosen from this process's pid, on a link of the
// test's own, o101-PID-N, which carries that address only (a bridge without ports, as this kernel has no dummy
// driver; no IPv6 link-local address either). The link, and the address with it, is deleted when the test ends,
// and checked gone. Links of OwnAddress's whose process is gone (a killed test) are deleted first.
//
// It is for a registry the docker CLI must reach over TLS: the CLI's manifest commands take a registry on a
// loopback address (127.0.0.0/8, ::1, localhost) for one that may speak plain HTTP, as docker does by default,
// and push to it over HTTP whatever it serves. It needs root and iproute2's ip (hack/install-deps.sh iproute2);
// without them the test fails.
func OwnAddress(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatalf("making an address of the test's own needs iproute2's ip (hack/install-deps.sh iproute2): %v", err)
	}
	ownMu.Lock()
	defer ownMu.Unlock()
	ownSeq++
	name := fmt.Sprintf("o101-%d-%d", os.Getpid(), ownSeq)

	// One process at a time: the address it picks is on its link before another looks.
	lock, err := os.OpenFile(ownAddressLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("making an address of the test's own needs root: %v", err)
	}
	defer lock.Close() // which releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, iface := range ifaces {
		m := ownName.FindStringSubmatch(iface.Name)
		if m == nil || ownLinks[iface.Name] {
			continue
		}
		if _, err := os.Stat("/proc/" + m[1]); m[1] != strconv.Itoa(os.Getpid()) && err == nil {
			continue // another test process's
		}
		t.Logf("deleting %s, which a test process that is gone left", iface.Name)
		ipCommand(t, "link", "delete", iface.Name)
	}

	addr := freeOwnAddress(t)
	ipCommand(t, "link", "add", name, "type", "bridge")
	ownLinks[name] = true
	t.Cleanup(func() {
		ownMu.Lock()
		defer ownMu.Unlock()
		delete(ownLinks, name)
		if out, err := exec.Command("ip", "link", "delete", name).CombinedOutput(); err != nil {
			t.Errorf("ip link delete %s: %v\n%s", name, err, out)
		}
		if _, err := net.InterfaceByName(name); err == nil {
			t.Errorf("the link %s is still there after the test", name)
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && n.IP.String() == addr {
					t.Errorf("the address %s is still on this machine after the test", addr)
				}
			}
		}
	})
	ipCommand(t, "link", "set", name, "addrgenmode", "none")
	ipCommand(t, "addr", "add", addr+"/32", "dev", name)
	ipCommand(t, "link", "set", name, "up")
	return addr
}

// freeOwnAddress is the first address of OwnAddresses from an offset of the pid's on that no link of this
// machine carries.
func freeOwnAddress(t *testing.T) string {
	t.Helper()
	_, cidr, _ := net.ParseCIDR(OwnAddresses)
	ones, bits := cidr.Mask.Size()
	size := 1 << (bits - ones)
	taken := map[string]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			taken[n.IP.String()] = true
		}
	}
	base := binary.BigEndian.Uint32(cidr.IP.To4())
	for i := range size {
		// Neither the range's first address nor its last.
		offset := 1 + (os.Getpid()+i)%(size-2)
		ip := make(net.IP, 4)
		binary.BigEndian.PutUint32(ip, base+uint32(offset))
		if !taken[ip.String()] {
			return ip.String()
		}
	}
	t.Fatalf("every address of %s is on a link of this machine", OwnAddresses)
	return ""
}

// ipCommand runs iproute2's ip with args, failing the test with what it printed.
func ipCommand(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("making an address of the test's own (needs root): ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
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
