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

// Package release walks the README's development path with podman and docker in a throwaway clone
// (TestDeveloperCatalogServesTheBundle). A release under a user's own name, and the quick start installing it, is
// the e2e's TestQuickStartFromTheREADME: it needs a cluster to install it on.
package release

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator101/operator101/test/testenv"
)

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

// cloneWithImageTools prepares a test that builds and pushes images: podman, skopeo and a registry installed,
// the image tests' store held (testenv.HoldImageStore), and a throwaway clone of the repository at HEAD. It
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
