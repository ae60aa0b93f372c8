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
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// rootsHelperEnv makes TestFallbackRootsHelperProcess run: only in the process TestFallbackRootsWithoutSystemRoots
// starts.
const rootsHelperEnv = "OPERATOR101_TEST_FALLBACK_ROOTS_HELPER"

// TestFallbackRootsWithoutSystemRoots: the manager verifies a publicly trusted chain on a system without roots, as
// its image (FROM scratch) is: tls.mode VerifyFull without ca.crt must not fail every handshake there. Go reads
// the system's roots once per process, from SSL_CERT_FILE and SSL_CERT_DIR when set, so the check runs in a
// process of its own (this test binary again, which links what cmd links) whose both point at nothing. There,
// Let's Encrypt's intermediate R11 (testdata, as letsencrypt.org publishes it) must verify against the system's
// pool and chain to ISRG Root X1: only the roots compiled in (golang.org/x/crypto/x509roots/fallback) can
// make it.
func TestFallbackRootsWithoutSystemRoots(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SSL_CERT_FILE and SSL_CERT_DIR empty the system's roots on Linux, the image's OS, only")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFallbackRootsHelperProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), rootsHelperEnv+"=1",
		"SSL_CERT_FILE="+filepath.Join(dir, "no-such-bundle.pem"), "SSL_CERT_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("without system roots: %v\n%s", err, out)
	}
	// A helper that did not run (renamed, filtered out) would pass too: it must have run and passed.
	if !strings.Contains(string(out), "--- PASS: TestFallbackRootsHelperProcess") {
		t.Fatalf("the helper process did not run its test:\n%s", out)
	}
}

// TestFallbackRootsHelperProcess is the process TestFallbackRootsWithoutSystemRoots starts; otherwise it skips.
func TestFallbackRootsHelperProcess(t *testing.T) {
	if os.Getenv(rootsHelperEnv) != "1" {
		t.Skip("run by TestFallbackRootsWithoutSystemRoots, in a process without system roots")
	}
	for _, v := range []string{"SSL_CERT_FILE", "SSL_CERT_DIR"} {
		if p := os.Getenv(v); p == "" {
			t.Fatalf("%s is not set: the system's roots would be read", v)
		}
	}
	if entries, err := os.ReadDir(os.Getenv("SSL_CERT_DIR")); err != nil || len(entries) != 0 {
		t.Fatalf("SSL_CERT_DIR must be an empty directory: %d entries, %v", len(entries), err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "lets-encrypt-r11.pem"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatal("testdata/lets-encrypt-r11.pem holds no PEM block")
	}
	r11, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	// Roots unset: the system's pool, as crypto/tls takes it for a tls.Config without RootCAs (VerifyFull
	// without ca.crt). A fixed time inside R11's validity (2024-03-13 to 2027-03-12), so that the test does not
	// expire with it.
	chains, err := r11.Verify(x509.VerifyOptions{CurrentTime: time.Date(2025, time.June, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatalf("Let's Encrypt R11 does not verify without system roots: %v (are the fallback roots linked? "+
			"cmd/main.go imports golang.org/x/crypto/x509roots/fallback)", err)
	}
	root := chains[0][len(chains[0])-1]
	if root.Subject.CommonName != "ISRG Root X1" {
		t.Errorf("R11 chains to %q, want ISRG Root X1", root.Subject)
	}
}
