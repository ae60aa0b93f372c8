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

package bundle

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPushesVerifyTLSExceptOnThisMachine reads the commands `make docker-push bundle-push catalog-push` would
// run (make -n) for registries on this machine and elsewhere: TLS is skipped only for the former, and only when
// no CA is given for them (the scripts' rule, TestScriptsVerifyTLSExceptOnThisMachine).
func TestPushesVerifyTLSExceptOnThisMachine(t *testing.T) {
	root := repoRoot(t)
	for _, c := range []struct {
		base, certDir, want string
	}{
		{"localhost:5000/operator101/operator101", "", "--tls-verify=false"},
		{"127.0.0.1:5000/operator101/operator101", "", "--tls-verify=false"},
		{"198.18.255.254:5000/operator101/operator101", "", "--tls-verify=false"},
		{"quay.io/someone/operator101", "", "--tls-verify=true"},
		{"registry.example.com:5000/team/operator101", "/etc/registry-ca", "--tls-verify=true --cert-dir /etc/registry-ca"},
		{"localhost.example.com/team/operator101", "", "--tls-verify=true"},
		{"198.18.255.254:5000/operator101/operator101", "/etc/cluster-ca", "--tls-verify=true --cert-dir /etc/cluster-ca"},
	} {
		args := []string{"-s", "-n", "docker-push", "bundle-push", "catalog-push", "IMAGE_TAG_BASE=" + c.base, "VERSION=9.9.9"}
		if c.certDir != "" {
			args = append(args, "REGISTRY_CERT_DIR="+c.certDir)
		}
		cmd := exec.Command("make", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 3 {
			t.Fatalf("%s: want 3 push commands, got:\n%s", c.base, out)
		}
		for i, suffix := range []string{":v9.9.9", "-bundle:v9.9.9", "-catalog:v9.9.9"} {
			want := "podman push " + c.want + " " + c.base + suffix
			if i == 0 { // the operator: its manifest list, with every image in it
				want = "podman manifest push --all " + c.want + " " + c.base + suffix + " docker://" + c.base + suffix
			}
			if lines[i] != want {
				t.Errorf("push %d for %s:\n got %s\nwant %s", i, c.base, lines[i], want)
			}
		}
	}
}

// TestScriptsVerifyTLSExceptOnThisMachine runs hack/registry.sh's tls_flags, which every script that pushes or
// pulls (release, cluster images, e2e, demo) takes its TLS flags from: verified against the system's CAs, or
// against REGISTRY_CERT_DIR for IMAGE_TAG_BASE's registry (on this machine too); skipped only for a registry on
// this machine that is given no CA.
func TestScriptsVerifyTLSExceptOnThisMachine(t *testing.T) {
	root := repoRoot(t)
	for _, c := range []struct {
		base, certDir, ref, want string
	}{
		{"", "", "localhost:5000/operator101/operator101:v1", "--dest-tls-verify=false"},
		{"", "", "127.0.0.1:5000/operator101/opm:v1", "--dest-tls-verify=false"},
		{"", "", "198.18.255.254:5000/operator101/operator101-bundle@sha256:1", "--dest-tls-verify=false"},
		{"", "", "quay.io/someone/operator101:v1", "--dest-tls-verify=true"},
		{"", "", "localhost.example.com/team/operator101:v1", "--dest-tls-verify=true"},
		{"registry.example.com:5000/team/operator101", "/etc/registry-ca", "registry.example.com:5000/team/operator101-bundle:v1",
			"--dest-tls-verify=true --dest-cert-dir /etc/registry-ca"},
		{"registry.example.com:5000/team/operator101", "/etc/registry-ca", "quay.io/someone/x:v1", "--dest-tls-verify=true"},
		{"198.18.255.254:5000/operator101/operator101", "/etc/cluster-ca", "198.18.255.254:5000/operator101/opm:v1",
			"--dest-tls-verify=true --dest-cert-dir /etc/cluster-ca"},
		{"198.18.255.254:5000/operator101/operator101", "/etc/cluster-ca", "localhost:5000/operator101/operator101:v1",
			"--dest-tls-verify=false"},
	} {
		cmd := exec.Command("bash", "-c", `set -eu; source hack/registry.sh; tls_flags dest "$1"`, "-", c.ref)
		cmd.Dir = root
		cmd.Env = []string{"PATH=/usr/bin:/bin", "IMAGE_TAG_BASE=" + c.base, "REGISTRY_CERT_DIR=" + c.certDir}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tls_flags %s: %v\n%s", c.ref, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("IMAGE_TAG_BASE=%q REGISTRY_CERT_DIR=%q: tls_flags dest %s = %q, want %q", c.base, c.certDir, c.ref, got, c.want)
		}
	}
}
