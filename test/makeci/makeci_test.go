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

// Package makeci checks how make ci's steps, each run by hack/ci.sh as a make of its own, choose their cluster.
package makeci

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator101/operator101/test/testenv"
)

// TestStepsChooseTheClusterAsTheUserDid: make test-e2e acts on the local cluster unless the user gave
// KUBECONFIG, both when typed and when make runs it (as make ci's steps are run): the default KUBECONFIG that
// the outer make exports is not taken for the user's.
func TestStepsChooseTheClusterAsTheUserDid(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir() // no ~/.kube/config: the default is the local API server's kubeconfig
	nested := []string{"--eval", "nested: ; @$(MAKE) --no-print-directory -n test-e2e", "nested"}
	for _, tc := range []struct {
		name       string
		kubeconfig string
		args       []string
		want       string
	}{
		{"typed, no KUBECONFIG", "", []string{"-n", "test-e2e"}, ""},
		{"typed, KUBECONFIG given", "/tmp/theirs", []string{"-n", "test-e2e"}, "EXISTING_KUBECONFIG='/tmp/theirs'"},
		{"run by make, no KUBECONFIG", "", nested, ""},
		{"run by make, KUBECONFIG given", "/tmp/theirs", nested, "EXISTING_KUBECONFIG='/tmp/theirs'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("make", append([]string{"--no-print-directory", "-C", root}, tc.args...)...)
			var env []string
			for _, e := range os.Environ() {
				if !strings.HasPrefix(e, "KUBECONFIG=") && !strings.HasPrefix(e, "KUBECONFIG_DEFAULT=") &&
					!strings.HasPrefix(e, "HOME=") && !strings.HasPrefix(e, "MAKEFLAGS=") && !strings.HasPrefix(e, "MAKELEVEL=") {
					env = append(env, e)
				}
			}
			env = append(env, "HOME="+home)
			if tc.kubeconfig != "" {
				env = append(env, "KUBECONFIG="+tc.kubeconfig)
			}
			cmd.Env = env
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("make %v: %v", tc.args, err)
			}
			var line string
			for _, l := range strings.Split(string(out), "\n") {
				if strings.Contains(l, filepath.Join("hack", "cluster", "e2e.sh")) {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("make %v ran no hack/cluster/e2e.sh:\n%s", tc.args, out)
			}
			got := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "hack/cluster/e2e.sh"))
			if got != tc.want {
				t.Errorf("make %v runs hack/cluster/e2e.sh with %q; want %q", tc.args, got, tc.want)
			}
		})
	}
}
