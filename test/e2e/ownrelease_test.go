//go:build e2e

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

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/operator101/operator101/test/registrytest"
)

// releaseUnderOwnName releases the newest release again as a user whose cluster cannot pull quay.io/operator101
// does, by the README's release block (<!-- e2e:release -->) as written, in a throwaway clone checked out at the
// release's commit (config/catalog/releases): into a registry that is neither the lab's nor quay.io, on the node
// address, serving TLS with a CA of its own, which the cluster's nodes are told to trust (containerd's
// certs.d/HOST/hosts.toml, as a cluster admin configures their nodes). It checks what that release is:
//
//   - the catalog keeps every earlier release byte for byte as the committed catalog has it (nothing of theirs is
//     rebuilt or read: a user off the lab has none of them), and the release is the head of stable, replacing
//     the one before, with its bundle by digest under the user's name;
//   - its operator is one OCI index of linux/amd64 and linux/arm64, by the index's digest;
//   - TLS is verified, not skipped: the same `make catalog-build` with another CA is refused.
//
// It returns the catalog image the block pushed and the user's IMAGE_TAG_BASE. On a cluster of your own (no
// E2E_CONTAINERD_CERTS_D) it releases nothing and returns "": the quick start then installs the catalog it names
// by default.
func releaseUnderOwnName(t *testing.T) (catalog, base string) {
	t.Helper()
	certsD := os.Getenv("E2E_CONTAINERD_CERTS_D")
	if certsD == "" {
		t.Log("a cluster of your own: the quick start installs the catalog it names by default, released as published")
		return "", ""
	}
	start := time.Now()
	run(t, nil, "hack/install-deps.sh", "docker-registry")
	dir := t.TempDir()
	certDir := filepath.Join(dir, "ca")
	addr := registrytest.TLS(t, filepath.Join(dir, "registry"), certDir, f.nodeIP)
	hosts := filepath.Join(certsD, addr)
	if err := os.MkdirAll(hosts, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(hosts) })
	if err := os.WriteFile(filepath.Join(hosts, "hosts.toml"), []byte(`server = "https://`+addr+`"

[host."https://`+addr+`"]
  capabilities = ["pull", "resolve"]
  ca = "`+filepath.Join(certDir, "ca.crt")+`"
`), 0o644); err != nil {
		t.Fatal(err)
	}

	var commit string
	for _, r := range releases(t) {
		if r.version == headVersion {
			commit = r.commit
		}
	}
	clone := filepath.Join(dir, "clone")
	run(t, nil, "git", "clone", "-q", "--no-local", f.root, clone)
	run(t, nil, "git", "-C", clone, "checkout", "-q", commit)
	registry := addr + "/me"
	base = registry + "/operator101"
	t.Cleanup(func() {
		out, _ := tryRun(nil, "podman", "images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference="+base+"*")
		for _, img := range strings.Fields(out) {
			_, _ = tryRun(nil, "podman", "rmi", "--force", img)
		}
	})
	// UNPINNED_DEFAULTS: this machine reads no docker.io digest (packaging.md, "Releasing").
	runBlocksIn(t, clone, "README.md release", readBlocks(t, "README.md", "release"),
		"REGISTRY="+registry, "VERSION="+headVersion, "REGISTRY_CERT_DIR="+certDir, "UNPINNED_DEFAULTS=1")
	t.Logf("%s released under %s in %s", headVersion, base, time.Since(start).Round(time.Second))
	var op, bundle string
	recorded, err := readReleases(clone)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recorded {
		if r.version == headVersion {
			op, bundle = r.operator, r.bundle
		}
	}

	// catalog-build's catalog (CATALOG_DIR): the release's commit's committed catalog and the release.
	built := filepath.Join(clone, "bin", "catalog-build", "catalog", "operator101", "index.yaml")
	committed := registrytest.CatalogBundles(t, filepath.Join(f.root, "catalog", "operator101", "index.yaml"))
	rendered := registrytest.CatalogBundles(t, built)
	if len(rendered) != len(committed) {
		t.Errorf("the catalog released under %s holds %d bundles, the committed one %d", base, len(rendered), len(committed))
	}
	for name, doc := range rendered {
		if name == headCSV {
			if !strings.Contains("\n"+doc, "\nimage: "+base+"-bundle@sha256:") {
				t.Errorf("%s's bundle in the catalog is not %s-bundle by digest:\n%.400s", headVersion, base, doc)
			}
		} else if committed[name] != doc {
			t.Errorf("%s is not byte-identical to the committed catalog's after the release under %s", name, base)
		}
	}
	index, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^- name: ` + regexp.QuoteMeta(headCSV) + `\n  replaces: operator101\.v`).Match(index) {
		t.Errorf("the stable channel has no entry for %s that replaces a release", headVersion)
	}

	// The operator, released as one manifest list of the platforms the Makefile names, by the list's digest.
	if !strings.HasPrefix(op, base+"@sha256:") {
		t.Fatalf("config/catalog/releases records %s's operator as %q, want %s by digest", headVersion, op, base)
	}
	raw := run(t, nil, "skopeo", "inspect", "--raw", "--cert-dir", certDir, "docker://"+op)
	mediaType, platforms := registrytest.ListPlatforms(t, raw)
	if want := []string{"linux/amd64", "linux/arm64"}; mediaType != "application/vnd.oci.image.index.v1+json" || !slices.Equal(platforms, want) {
		t.Errorf("the released operator %s is a %s of %v, want an OCI index of %v", op, mediaType, platforms, want)
	}

	// TLS is verified: with a CA that did not sign the registry's certificate, opm cannot read the new bundle.
	otherCA := filepath.Join(dir, "other-ca")
	registrytest.TLS(t, filepath.Join(dir, "other"), otherCA, "127.0.0.1")
	out, err := tryRun([]string{"REGISTRY_CERT_DIR=" + otherCA}, "make", "-C", clone, "--no-print-directory", "catalog-build",
		"IMAGE_TAG_BASE="+base, "BUNDLE_IMGS="+bundle, "CATALOG_IMG="+base+"-catalog:refused")
	if err == nil || !strings.Contains(out, "certificate") {
		t.Errorf("make catalog-build with a CA that did not sign %s: %v, want a refused certificate:\n%s", addr, err, out)
	}
	return base + "-catalog:v" + headVersion, base
}
