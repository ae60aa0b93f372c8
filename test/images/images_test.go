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
	"regexp"
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

// TestImagesBuildInAStoreOfTheirOwn: the podman and buildah that these tests and every command they start run
// use the image tests' own store (hack/image-store.sh), not podman's default one, where the e2e builds images of
// the same IDs beside them: its storage.conf, a graphroot in the store's directory, a runroot of its own, and
// podman's per-boot files (tmp_dir) and locks (lock_type "file") beside that runroot.
func TestImagesBuildInAStoreOfTheirOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs podman and buildah, which -short (make test) does not install; make ci runs this test")
	}
	testenv.HoldImageStore(t)
	store := os.Getenv("OPERATOR101_IMAGE_STORE")
	podman := exec.Command("podman", "--log-level=debug", "info", "--format", "json")
	var debug strings.Builder
	podman.Stderr = &debug
	out, err := podman.Output()
	if err != nil {
		t.Fatalf("podman info: %v\n%s", err, debug.String())
	}
	var info struct {
		Store struct {
			ConfigFile string `json:"configFile"`
			GraphRoot  string `json:"graphRoot"`
			RunRoot    string `json:"runRoot"`
			VolumePath string `json:"volumePath"`
		} `json:"store"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatalf("podman info: %v\n%s", err, out)
	}
	s := info.Store
	if s.ConfigFile != filepath.Join(store, "storage.conf") || s.GraphRoot != filepath.Join(store, "storage") ||
		s.VolumePath != filepath.Join(store, "storage", "volumes") {
		t.Errorf("podman uses storage.conf %s, graphroot %s, volumes %s: want those of the store %s", s.ConfigFile, s.GraphRoot, s.VolumePath, store)
	}
	run := filepath.Dir(s.RunRoot)
	if !strings.HasPrefix(filepath.Base(run), "operator101-image-store-") {
		t.Errorf("podman's runroot is %s: want one of the store's own (hack/image-store.sh)", s.RunRoot)
	}
	m := regexp.MustCompile(`Using tmp dir (\S+?)"`).FindStringSubmatch(debug.String())
	if m == nil || m[1] != filepath.Join(run, "libpod") {
		t.Errorf("podman's tmp_dir is %v: want %s, beside the store's runroot", m, filepath.Join(run, "libpod"))
	} else if _, err := os.Stat(filepath.Join(m[1], "locks")); err != nil {
		t.Errorf("podman keeps no file locks in its tmp_dir (lock_type \"file\"): %v", err)
	}
	out, err = exec.Command("buildah", "info").Output()
	if err != nil {
		t.Fatalf("buildah info: %v", err)
	}
	var binfo struct {
		Store struct{ GraphRoot, RunRoot string } `json:"store"`
	}
	if err := json.Unmarshal(out, &binfo); err != nil {
		t.Fatalf("buildah info: %v\n%s", err, out)
	}
	if binfo.Store.GraphRoot != s.GraphRoot || binfo.Store.RunRoot != s.RunRoot {
		t.Errorf("buildah uses graphroot %s and runroot %s, podman %s and %s", binfo.Store.GraphRoot, binfo.Store.RunRoot, s.GraphRoot, s.RunRoot)
	}
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
