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

// Package images builds every image of the project offline (hack/images.sh: podman build --network none,
// FROM scratch) and checks what each carries with `podman inspect`: labels, entrypoint, user. Nothing is run
// with podman (its default rlimits need CAP_SYS_RESOURCE, which this machine does not grant).
package images

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/operator101/operator101/test/testenv"
)

const prefix = "localhost/operator101-test/"

type imageConfig struct {
	User       string            `json:"User"`
	Entrypoint []string          `json:"Entrypoint"`
	Cmd        []string          `json:"Cmd"`
	Labels     map[string]string `json:"Labels"`
	Env        []string          `json:"Env"`
}

// build runs hack/images.sh and returns the image's config as podman inspect reports it. The image is
// removed when the test ends.
func build(t *testing.T, args ...string) imageConfig {
	t.Helper()
	if testing.Short() {
		t.Skip("builds images with podman, which -short (make test) does not install; make ci runs this test")
	}
	testenv.HoldImageStore(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "hack", "images.sh"), args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/images.sh %s: %v\n%s", strings.Join(args, " "), err, tail(out))
	}
	img := args[1]
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", "--force", img).Run() })
	out, err := exec.Command("podman", "image", "inspect", "--format", "{{json .Config}}", img).Output()
	if err != nil {
		t.Fatalf("podman image inspect %s: %v", img, err)
	}
	var c imageConfig
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("podman image inspect %s: %v: %s", img, err, out)
	}
	return c
}

func tail(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

func TestOperatorImage(t *testing.T) {
	c := build(t, "operator", prefix+"operator101:test")
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (non-root, as the Deployment's securityContext expects)", c.User)
	}
	if err := numericNonRoot(c.User); err != nil {
		t.Errorf("user %q: %v: the Deployment sets runAsNonRoot and no runAsUser", c.User, err)
	}
	if !reflect.DeepEqual(c.Entrypoint, []string{"/manager"}) {
		t.Errorf("entrypoint %q, want [/manager]", c.Entrypoint)
	}
	if c.Labels["org.opencontainers.image.source"] == "" || c.Labels["org.opencontainers.image.title"] != "operator101" {
		t.Errorf("labels %v: want the org.opencontainers.image title and source", c.Labels)
	}
}

// TestBundleImage builds the bundle image and checks that its labels are exactly bundle/metadata/annotations.yaml.
func TestBundleImage(t *testing.T) {
	root, _ := testenv.RepoRoot()
	raw, err := os.ReadFile(filepath.Join(root, "bundle", "metadata", "annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ann struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &ann); err != nil {
		t.Fatal(err)
	}
	c := build(t, "bundle", prefix+"operator101-bundle:test")
	for k, v := range ann.Annotations {
		if c.Labels[k] != v {
			t.Errorf("label %s=%q, annotations.yaml says %q", k, c.Labels[k], v)
		}
	}
	for k := range c.Labels {
		if _, ok := ann.Annotations[k]; !ok && !strings.HasPrefix(k, "io.buildah.") {
			t.Errorf("label %s is not in annotations.yaml", k)
		}
	}
}

func TestCatalogImage(t *testing.T) {
	c := build(t, "catalog", prefix+"operator101-catalog:test")
	if c.Labels["operators.operatorframework.io.index.configs.v1"] != "/configs" {
		t.Errorf("labels %v: want operators.operatorframework.io.index.configs.v1=/configs", c.Labels)
	}
	if !reflect.DeepEqual(c.Entrypoint, []string{"/bin/opm"}) {
		t.Errorf("entrypoint %q, want [/bin/opm]", c.Entrypoint)
	}
	if want := []string{"serve", "/configs", "--cache-dir=/tmp/cache"}; !reflect.DeepEqual(c.Cmd, want) {
		t.Errorf("cmd %q, want %q", c.Cmd, want)
	}
	if c.User != "1001" {
		t.Errorf("user %q, want 1001 (non-root, from the opm image)", c.User)
	}
}

func TestScorecardImage(t *testing.T) {
	c := build(t, "scorecard", prefix+"operator101-scorecard:test")
	if !reflect.DeepEqual(c.Entrypoint, []string{"/usr/local/bin/operator101-scorecard"}) {
		t.Errorf("entrypoint %q", c.Entrypoint)
	}
	// scorecard runs the test's entrypoint by name: PATH must find it.
	found := false
	for _, e := range c.Env {
		if strings.HasPrefix(e, "PATH=") && strings.Contains(e, "/usr/local/bin") {
			found = true
		}
	}
	if !found || c.User != "65532:65532" {
		t.Errorf("env %v, user %q: want PATH with /usr/local/bin and user 65532:65532", c.Env, c.User)
	}
}
