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

package images

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"

	"github.com/operator101/operator101/test/testenv"
)

// Release pipelines build the images as the scaffold does, from the repository root: docker build . (the
// operator, online), docker build -f bundle.Dockerfile ., docker build -f catalog.Dockerfile .

// instruction is one COPY or ADD of a Dockerfile: its stage, and its sources in the build context.
type instruction struct {
	stage   string
	sources []string
}

// copies reads a Dockerfile's COPY and ADD instructions that take files from the build context (not --from).
func copies(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	stage := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			stage = fields[len(fields)-1]
		case "COPY", "ADD":
			args := fields[1:]
			if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--from") }) {
				continue
			}
			args = slices.DeleteFunc(args, func(a string) bool { return strings.HasPrefix(a, "--") })
			out = append(out, instruction{stage: stage, sources: args[:len(args)-1]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBuildContexts: every source a root Dockerfile copies is in the repository root's build context, none of
// its files excluded by .dockerignore. (The operator's offline stage is built from a context of its own, the
// manager binary alone: the Makefile's docker-build.)
func TestBuildContexts(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ignore, err := os.Open(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	patterns, err := ignorefile.ReadAll(ignore)
	ignore.Close()
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	for _, dockerfile := range []string{"Dockerfile", "bundle.Dockerfile", "catalog.Dockerfile"} {
		n := 0
		for _, in := range copies(t, filepath.Join(root, dockerfile)) {
			if dockerfile == "Dockerfile" && in.stage == "offline" {
				continue
			}
			for _, src := range in.sources {
				files := 0
				err := filepath.WalkDir(filepath.Join(root, src), func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					rel, _ := filepath.Rel(root, p)
					excluded, err := pm.MatchesOrParentMatches(filepath.ToSlash(rel))
					if err != nil {
						return err
					}
					if excluded {
						t.Errorf("%s copies %s, but .dockerignore leaves %s out of the build context", dockerfile, src, rel)
					}
					files++
					return nil
				})
				if err != nil {
					t.Errorf("%s copies %s: %v", dockerfile, src, err)
				}
				if files == 0 {
					t.Errorf("%s copies %s, which holds no file", dockerfile, src)
				}
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s copies nothing from its context", dockerfile)
		}
	}
}

// TestOnlineStageCopiesEveryPackage: the Dockerfile's builder stage compiles ./cmd from what it copies, so every
// package of this module that the manager needs (go list -deps) lies under a directory it copies, and go.mod
// and go.sum are copied.
func TestOnlineStageCopiesEveryPackage(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var copied []string
	for _, in := range copies(t, filepath.Join(root, "Dockerfile")) {
		if in.stage == "builder" {
			for _, s := range in.sources {
				copied = append(copied, filepath.Clean(s))
			}
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if !slices.Contains(copied, f) {
			t.Errorf("the builder stage does not copy %s (copies %v)", f, copied)
		}
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./cmd")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd: %v", err)
	}
	dirs := strings.Fields(string(out))
	if len(dirs) < 5 {
		t.Fatalf("go list -deps ./cmd found %d packages of this module: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(copied, func(c string) bool { return rel == c || strings.HasPrefix(rel, c+"/") }) {
			t.Errorf("the manager needs package %s, which the builder stage does not copy (copies %v)", rel, copied)
		}
	}
}

// TestScaffoldCommandsParse: what `make -n` prints for the build and push targets, with CONTAINER_TOOL=docker and
// =podman, offline and online, is accepted by that tool's own flag parser. Each command runs for real with its
// context or image swapped for one that does not exist, so it fails after parsing its flags and does nothing
// (docker also has no daemon to reach).
func TestScaffoldCommandsParse(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the docker and podman CLIs, which -short (make test) does not install; make ci runs this test")
	}
	testenv.HoldImageStore(t) // podman looks up the images it is given
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dockerConfig := t.TempDir()
	refused := []string{"unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument",
		"unknown command", "accepts ", "requires at least"}
	for _, tool := range []string{"docker", "podman"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v (hack/install-deps.sh installs podman; the docker CLI comes with the machine)", tool, err)
		}
		for _, offline := range []string{"1", "0"} {
			mk := exec.Command("make", "-n", "--no-print-directory", "CONTAINER_TOOL="+tool, "OFFLINE="+offline,
				"IMAGE_TAG_BASE=localhost:5000/operator101-flagcheck/x",
				"docker-build", "docker-push", "bundle-build", "bundle-push", "catalog-build", "catalog-push")
			mk.Dir = root
			out, err := mk.CombinedOutput()
			if err != nil {
				t.Fatalf("make -n (CONTAINER_TOOL=%s OFFLINE=%s): %v\n%s", tool, offline, err, out)
			}
			// catalog-build renders the committed catalog and BUNDLE_IMG (bundle-push pushed it) into its own
			// directory, the build's context.
			if m := regexp.MustCompile(`(?m)^.*hack/catalog\.sh dev (\S+)/catalog localhost:5000/operator101-flagcheck/x-bundle:v\S+\n` +
				tool + ` build .* -f catalog\.Dockerfile -t \S+ (\S+)$`).FindSubmatch(out); m == nil || string(m[1]) != string(m[2]) {
				t.Errorf("make -n catalog-build (CONTAINER_TOOL=%s OFFLINE=%s) does not build the catalog of the committed one and BUNDLE_IMG:\n%s", tool, offline, out)
			}
			n := 0
			for _, line := range strings.Split(string(out), "\n") {
				args := strings.Fields(line)
				if len(args) < 3 || args[0] != tool {
					continue
				}
				// manifest push (the operator's list) runs too; manifest create and rm would change podman's
				// storage or reach a registry, and are left out.
				switch {
				case args[1] == "build":
					args[len(args)-1] = filepath.Join(t.TempDir(), "no-such-context")
				case args[1] == "push" || args[1] == "manifest" && args[2] == "push" && tool == "docker":
					args[len(args)-1] = "localhost:5000/operator101-flagcheck/none:v0"
				case args[1] == "manifest" && args[2] == "push":
					args[len(args)-2] = "localhost/operator101-flagcheck/no-such-list:v0"
					args[len(args)-1] = "docker://localhost:5000/operator101-flagcheck/none:v0"
				default:
					continue
				}
				run := exec.Command(path, args[1:]...)
				run.Dir = root
				// docker: no daemon, and no files of the user's (docker manifest push looks its list up there).
				run.Env = append(os.Environ(), "DOCKER_HOST=unix:///nonexistent/docker.sock", "DOCKER_CONFIG="+dockerConfig)
				got, err := run.CombinedOutput()
				if err == nil {
					t.Errorf("%s succeeded with a context or image that does not exist", strings.Join(args, " "))
				}
				for _, r := range refused {
					if strings.Contains(string(got), r) {
						t.Errorf("%s does not take the flags make prints (CONTAINER_TOOL=%s OFFLINE=%s):\n  %s\n%s",
							tool, tool, offline, line, got)
						break
					}
				}
				n++
			}
			// bundle and catalog: a build and a push each. The operator, a list for linux/amd64 and linux/arm64:
			// podman builds both into the list offline (one build per platform) or online (one build, two
			// platforms) and pushes it with manifest push; docker builds an image per platform, pushes each and
			// then the list.
			want := map[string]int{"podman1": 7, "podman0": 6, "docker1": 9, "docker0": 9}[tool+offline]
			if n != want {
				t.Errorf("make -n printed %d %s build and push commands (OFFLINE=%s), want %d:\n%s", n, tool, offline, want, out)
			}
		}
	}
}

// TestScaffoldBuildsGiveTheReleaseImages: make docker-build and make bundle-build, from the repository root as a
// release pipeline runs them with podman, give the very images hack/images.sh gives (which releases and the
// e2e use), and make catalog-build a catalog image as TestCatalogImage checks it.
func TestScaffoldBuildsGiveTheReleaseImages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images with podman, which -short (make test) does not install; make ci runs this test")
	}
	testenv.HoldImageStore(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	id := func(img string) string {
		t.Helper()
		out, err := exec.Command("podman", "image", "inspect", "--format", "{{.Id}}", img).Output()
		if err != nil {
			t.Fatalf("podman image inspect %s: %v", img, err)
		}
		return strings.TrimSpace(string(out))
	}
	for _, tc := range []struct{ target, variable, what string }{
		{"docker-build", "IMG", "operator"},
		{"bundle-build", "BUNDLE_IMG", "bundle"},
	} {
		fromMake := prefix + "scaffold-" + tc.what + ":test"
		t.Cleanup(func() { _ = exec.Command("podman", "rmi", "--force", fromMake).Run() })
		// One image (PLATFORMS empty), as hack/images.sh builds it by default; the list is compared below.
		mk := exec.Command("make", "--no-print-directory", tc.target, tc.variable+"="+fromMake, "OCI_RUNTIME=runc", "PLATFORMS=")
		mk.Dir = root
		if out, err := mk.CombinedOutput(); err != nil {
			t.Fatalf("make %s: %v\n%s", tc.target, err, tail(out))
		}
		fromScript := prefix + "script-" + tc.what + ":test"
		build(t, tc.what, fromScript)
		if a, b := id(fromMake), id(fromScript); a != b {
			t.Errorf("make %s gave image %s, hack/images.sh %s gave %s: a pipeline would not build the released image",
				tc.target, a, tc.what, b)
		}
	}
	// The operator's manifest list: make docker-build (PLATFORMS as the Makefile sets it) and hack/images.sh with
	// the same PLATFORMS give lists of the very same images.
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PLATFORMS \?= (.+)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile sets no PLATFORMS ?= default")
	}
	platforms := strings.TrimSpace(string(m[1]))
	instances := func(list string) []string {
		t.Helper()
		out, err := exec.Command("podman", "manifest", "inspect", list).Output()
		if err != nil {
			t.Fatalf("podman manifest inspect %s: %v", list, err)
		}
		var idx ociIndex
		if err := json.Unmarshal(out, &idx); err != nil {
			t.Fatal(err)
		}
		var ds []string
		for _, m := range idx.Manifests {
			ds = append(ds, m.Platform.OS+"/"+m.Platform.Architecture+"="+m.Digest)
		}
		slices.Sort(ds)
		return ds
	}
	lists := map[string][]string{}
	for _, how := range []string{"make", "script"} {
		list := prefix + how + "-operator-list:test"
		t.Cleanup(func() {
			if exec.Command("podman", "manifest", "rm", list).Run() != nil {
				_ = exec.Command("podman", "rmi", "--force", list).Run()
			}
		})
		cmd := exec.Command("make", "--no-print-directory", "docker-build", "IMG="+list, "OCI_RUNTIME=runc")
		if how == "script" {
			cmd = exec.Command(filepath.Join(root, "hack", "images.sh"), "operator", list)
			cmd.Env = append(os.Environ(), "PLATFORMS="+platforms)
		}
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s (PLATFORMS %s): %v\n%s", cmd, platforms, err, tail(out))
		}
		lists[how] = instances(list)
	}
	if len(lists["make"]) != len(strings.Split(platforms, ",")) || !slices.Equal(lists["make"], lists["script"]) {
		t.Errorf("make docker-build gave the list %v, hack/images.sh with PLATFORMS=%s gave %v", lists["make"], platforms, lists["script"])
	}

	catalog := prefix + "scaffold-catalog:test"
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", "--force", catalog).Run() })
	mk := exec.Command("make", "--no-print-directory", "catalog-build", "BUNDLE_IMGS=", "CATALOG_IMG="+catalog, "OCI_RUNTIME=runc")
	mk.Dir = root
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make catalog-build: %v\n%s", err, tail(out))
	}
	out, err := exec.Command("podman", "image", "inspect", "--format", "{{index .Config.Labels \"operators.operatorframework.io.index.configs.v1\"}}", catalog).Output()
	if err != nil || strings.TrimSpace(string(out)) != "/configs" {
		t.Errorf("make catalog-build: label operators.operatorframework.io.index.configs.v1=%q (%v), want /configs", out, err)
	}
}

// TestImageUsersAreNumericNonRoot: every stage of the operator's Dockerfile that is an image the project ships
// (offline, online) ends with a USER that is a numeric UID (and GID) other than 0. The Deployment sets
// runAsNonRoot and no runAsUser; the kubelet can check runAsNonRoot only against a numeric USER (a name it
// refuses: "non-numeric user"), and a UID of 0 it refuses outright.
func TestImageUsersAreNumericNonRoot(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	users, err := stageUsers(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"offline", "online"} {
		u, ok := users[stage]
		if !ok {
			t.Errorf("Dockerfile stage %s sets no USER: it would run as root", stage)
			continue
		}
		if err := numericNonRoot(u); err != nil {
			t.Errorf("Dockerfile stage %s: USER %s: %v", stage, u, err)
		}
	}
}

// stageUsers reads the last USER of each stage of a Dockerfile, by stage name.
func stageUsers(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	users := map[string]string{}
	stage := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			stage = fields[len(fields)-1]
		case "USER":
			users[stage] = fields[1]
		}
	}
	return users, sc.Err()
}

// numericNonRoot says why user (USER's "uid[:gid]") is not a numeric UID other than 0, or nil.
func numericNonRoot(user string) error {
	uid, gid, hasGID := strings.Cut(user, ":")
	n, err := strconv.ParseUint(uid, 10, 32)
	if err != nil {
		return fmt.Errorf("the UID is not numeric: the kubelet cannot check runAsNonRoot: %w", err)
	}
	if n == 0 {
		return errors.New("UID 0 is root")
	}
	if hasGID {
		if _, err := strconv.ParseUint(gid, 10, 32); err != nil {
			return fmt.Errorf("the GID is not numeric: %w", err)
		}
	}
	return nil
}

func TestNumericNonRoot(t *testing.T) {
	for user, ok := range map[string]bool{"65532:65532": true, "65532": true, "1001": true, "0": false,
		"0:0": false, "nonroot": false, "nonroot:nonroot": false, "65532:nonroot": false, "": false} {
		if err := numericNonRoot(user); (err == nil) != ok {
			t.Errorf("numericNonRoot(%q) = %v, want ok=%v", user, err, ok)
		}
	}
}
