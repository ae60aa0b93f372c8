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

package release

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/operator101/operator101/test/testenv"
)

// TestDeveloperCatalogServesTheBundle walks the README's development path with podman, in a throwaway clone:
// `make bundle bundle-build bundle-push catalog-build catalog-push` with IMAGE_TAG_BASE naming a registry that
// serves TLS with a CA of its own (REGISTRY_CERT_DIR), for the next version after the newest release. The
// catalog image, read back from that registry by opm (`opm render` of the image: its /configs), holds the
// developer's bundle, by the tag bundle-push pushed, as the head of stable, replacing the newest release and
// skipping all; every released bundle is still there as the committed catalog has it.
func TestDeveloperCatalogServesTheBundle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and pushes images with podman, which -short (make test) does not install; make ci runs this test")
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	runIn(t, root, "hack/install-deps.sh")
	runIn(t, root, "hack/install-deps.sh", "docker-registry")
	testenv.HoldImageStore(t)

	dir := t.TempDir()
	certDir := filepath.Join(dir, "ca")
	addr := tlsRegistry(t, dir, certDir)
	base := addr + "/dev/operator101"

	clone := filepath.Join(dir, "clone")
	runIn(t, root, "git", "clone", "-q", "--no-local", root, clone)
	t.Cleanup(func() {
		out, _ := exec.Command("podman", "images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference="+base+"*").Output()
		for _, img := range strings.Fields(string(out)) {
			_ = exec.Command("podman", "rmi", "--force", img).Run()
		}
	})

	committed := bundles(t, filepath.Join(root, "catalog", "operator101", "index.yaml"))
	var newest semver.Version
	for name := range committed {
		v, err := semver.Parse(strings.TrimPrefix(name, "operator101.v"))
		if err != nil {
			t.Fatalf("released bundle %s: %v", name, err)
		}
		if v.GT(newest) {
			newest = v
		}
	}
	version := fmt.Sprintf("%d.%d.0", newest.Major, newest.Minor+1)
	runIn(t, clone, "make", "--no-print-directory", "bundle", "bundle-build", "bundle-push", "catalog-build", "catalog-push",
		"VERSION="+version, "IMAGE_TAG_BASE="+base, "REGISTRY_CERT_DIR="+certDir, "OCI_RUNTIME=runc")

	// opm reads the pushed catalog image from the registry, trusting the registry's CA besides the system's.
	runIn(t, clone, "make", "--no-print-directory", "opm")
	cas := filepath.Join(dir, "cas.pem")
	system, _ := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	ca, err := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cas, append(system, ca...), 0o600); err != nil {
		t.Fatal(err)
	}
	catalogImg := base + "-catalog:v" + version
	render := exec.Command(filepath.Join(clone, "bin", "opm"), "render", catalogImg, "-o", "yaml")
	render.Env = append(os.Environ(), "SSL_CERT_FILE="+cas, "HOME="+dir)
	out, err := render.Output()
	if err != nil {
		t.Fatalf("opm render %s: %v", catalogImg, err)
	}
	index := filepath.Join(dir, "index.yaml")
	if err := os.WriteFile(index, out, 0o600); err != nil {
		t.Fatal(err)
	}
	served := bundles(t, index)

	name := "operator101.v" + version
	doc, ok := served[name]
	if !ok || len(served) != len(committed)+1 {
		t.Fatalf("the catalog image holds %d bundles, want the %d released and %s", len(served), len(committed), name)
	}
	if !strings.Contains("\n"+doc, "\nimage: "+base+"-bundle:v"+version+"\n") {
		t.Errorf("%s in the catalog is not the bundle image bundle-push pushed, %s-bundle:v%s:\n%.400s", name, base, version, doc)
	}
	for released, d := range committed {
		if served[released] != d {
			t.Errorf("%s in the catalog image is not as the committed catalog has it", released)
		}
	}
	head := regexp.MustCompile(`(?m)^- name: ` + regexp.QuoteMeta(name) + `\n  replaces: operator101\.v` +
		regexp.QuoteMeta(newest.String()) + `\n  skipRange: '>=\S+ <` + regexp.QuoteMeta(version) + `'\n`)
	if !head.Match(out) {
		t.Errorf("the catalog image's stable channel has no entry for %s that replaces %s and skips every release", name, newest)
	}
}
