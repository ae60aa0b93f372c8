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

// Package release releases operator101 as a user who publishes to a registry of their own does, in a
// throwaway clone: make release with their IMAGE_TAG_BASE, then make catalog.
package release

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
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/operator101/operator101/test/testenv"
)

// TestReleaseToATLSRegistry: in a throwaway clone, `make release` of the version bundle/ holds, with
// IMAGE_TAG_BASE naming a registry that serves TLS with a CA of its own (run here on 127.0.0.1, with a
// certificate made here, given as REGISTRY_CERT_DIR), then `make catalog`: one catalog with the published
// releases, read from the lab's mirror over plain HTTP, and the new one, read over TLS verified against that
// CA (and refused against another CA). The earlier releases' entries stay byte for byte as the committed catalog has them, and the new one is
// the head of the channel, by digest, under the user's name.
func TestReleaseToATLSRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and pushes release images with podman and skopeo, which -short (make test) does not install; make ci runs this test")
	}
	root, dir, clone := cloneWithImageTools(t)
	certDir := filepath.Join(dir, "ca")
	addr := tlsRegistry(t, dir, certDir)
	base := addr + "/me/operator101"
	t.Cleanup(func() {
		out, _ := exec.Command("podman", "images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference="+base+"*").Output()
		for _, img := range strings.Fields(string(out)) {
			_ = exec.Command("podman", "rmi", "--force", img).Run()
		}
	})
	version := strings.TrimSpace(runIn(t, clone, "bash", "-c",
		`sed -n 's/^  version: //p' bundle/manifests/operator101.clusterserviceversion.yaml`))
	vars := []string{"IMAGE_TAG_BASE=" + base, "REGISTRY_CERT_DIR=" + certDir}
	runIn(t, clone, "make", append([]string{"release", "VERSION=" + version, "UNPINNED_DEFAULTS=1"}, vars...)...)
	// TLS is verified, not skipped: with another CA in REGISTRY_CERT_DIR, the registry's certificate is refused.
	otherCA := filepath.Join(dir, "other-ca")
	tlsRegistry(t, filepath.Join(dir, "other"), otherCA)
	refused := exec.Command("make", "catalog", "IMAGE_TAG_BASE="+base, "REGISTRY_CERT_DIR="+otherCA)
	refused.Dir = clone
	if out, err := refused.CombinedOutput(); err == nil || !strings.Contains(string(out), "certificate") {
		t.Errorf("make catalog with a CA that did not sign %s: %v, want a refused certificate:\n%s", addr, err, out)
	}
	runIn(t, clone, "make", append([]string{"catalog"}, vars...)...)

	committed := bundles(t, filepath.Join(root, "catalog", "operator101", "index.yaml"))
	rendered := bundles(t, filepath.Join(clone, "catalog", "operator101", "index.yaml"))
	for name, doc := range committed {
		if rendered[name] != doc {
			t.Errorf("%s is not byte-identical in the catalog after the release of %s", name, version)
		}
	}
	doc, ok := rendered["operator101.v"+version]
	if !ok || len(rendered) != len(committed)+1 {
		t.Fatalf("the catalog holds %d bundles after the release of %s, want the %d released and it", len(rendered), version, len(committed))
	}
	if !strings.Contains("\n"+doc, "\nimage: "+base+"-bundle@sha256:") {
		t.Errorf("%s's bundle in the catalog is not %s-bundle by digest:\n%.400s", version, base, doc)
	}
	index := runIn(t, clone, "cat", "catalog/operator101/index.yaml")
	if !regexp.MustCompile(`(?m)^- name: operator101\.v` + regexp.QuoteMeta(version) + `\n  replaces: operator101\.v`).MatchString(index) {
		t.Errorf("the stable channel has no entry for %s that replaces a release", version)
	}
	records := runIn(t, clone, "cat", "config/catalog/releases")
	if !strings.Contains(records, "\n"+version+" ") || !strings.Contains(records, base+"@sha256:") {
		t.Errorf("config/catalog/releases does not record %s under %s:\n%s", version, base, records)
	}
	// The operator image is released as one manifest list of the platforms the Makefile names, by the list's
	// digest.
	var op string
	for _, line := range strings.Split(records, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == version {
			op = f[2]
		}
	}
	raw := runIn(t, clone, "skopeo", "inspect", "--raw", "--cert-dir", certDir, "docker://"+op)
	var list struct {
		MediaType string `json:"mediaType"`
		Manifests []struct {
			Platform struct{ OS, Architecture string } `json:"platform"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatalf("the released operator %s: %v\n%s", op, err, raw)
	}
	var platforms []string
	for _, m := range list.Manifests {
		platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	slices.Sort(platforms)
	if want := []string{"linux/amd64", "linux/arm64"}; list.MediaType != "application/vnd.oci.image.index.v1+json" || !slices.Equal(platforms, want) {
		t.Errorf("the released operator %s is a %s of %v, want an OCI index of %v", op, list.MediaType, platforms, want)
	}
}

// bundles reads a rendered catalog's olm.bundle documents, by name, as text.
func bundles(t *testing.T, path string) map[string]string {
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

func runIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) > 60 {
			lines = lines[len(lines)-60:]
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, strings.Join(lines, "\n"))
	}
	return string(out)
}

// tlsRegistry starts a registry (Debian's docker-registry) on 127.0.0.1 that serves TLS with a certificate from a
// CA made here, whose certificate it writes to certDir/ca.crt (podman's --cert-dir layout). It returns the
// registry's host:port; the registry stops when the test ends.
func tlsRegistry(t *testing.T, dir, certDir string) string {
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
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
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
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig(pool)}}
	return serveRegistry(t, dir, fmt.Sprintf(", tls: {certificate: %s, key: %s}", filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")), hc, "https")
}

// plainRegistry starts a registry (Debian's docker-registry) on 127.0.0.1 that serves plain HTTP, as docker's
// daemon and podman accept on this machine without a CA. It returns the registry's host:port; the registry
// stops when the test ends.
func plainRegistry(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return serveRegistry(t, dir, "", &http.Client{Timeout: 2 * time.Second}, "http")
}

// serveRegistry runs docker-registry on a free port of 127.0.0.1, storing under dir, with tlsYAML added to its
// http settings, until the test ends; it waits until the registry answers hc on scheme://addr/v2/.
func serveRegistry(t *testing.T, dir, tlsYAML string, hc *http.Client, scheme string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
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

func tlsConfig(pool *x509.CertPool) *tls.Config {
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// cloneWithImageTools prepares a test that builds and pushes images: podman, skopeo and a registry installed,
// podman's image store held (testenv.HoldImageStore), and a throwaway clone of the repository at HEAD. It
// returns the repository's root, the test's temporary directory and the clone in it.
func cloneWithImageTools(t *testing.T) (root, dir, clone string) {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	runIn(t, root, "hack/install-deps.sh")
	runIn(t, root, "hack/install-deps.sh", "docker-registry")
	testenv.HoldImageStore(t)
	dir = t.TempDir()
	clone = filepath.Join(dir, "clone")
	runIn(t, root, "git", "clone", "-q", "--no-local", root, clone)
	return root, dir, clone
}
