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

package makeci

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/operator101/operator101/test/testenv"
)

// TestStepsBesideStartWhenTheFirstSaysSo: in hack/ci.sh's step A+B, B starts once A creates the file
// CI_START_BESIDE names, while A goes on; and when A never does, once A ends. A step that fails fails the run,
// and the table ends with the total.
func TestStepsBesideStartWhenTheFirstSaysSo(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "hack", "ci.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// A copy of hack/ci.sh in a tree of its own, whose Makefile's steps log when they run: "A says", "A ends"
	// around a marker only B's start writes.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "hack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hack", "ci.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	makefile := `
log = echo $(1) >> ` + dir + `/order
says: ; @$(call log,A-starts); touch "$$CI_START_BESIDE"; $(call log,A-says); while [ ! -e ` + dir + `/b-ran ]; do sleep 0.1; done; $(call log,A-ends)
silent: ; @$(call log,A-starts); sleep 1; $(call log,A-ends)
side: ; @$(call log,B-runs); touch ` + dir + `/b-ran
fails: ; @$(call log,C-fails); exit 3
`
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(makefile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		step, want string
		rc         int
	}{
		// A waits for B: B ran while A still ran, after A said so.
		{"says+side", "A-starts A-says B-runs A-ends", 0},
		// A never says: B once A ended.
		{"silent+side", "A-starts A-ends B-runs", 0},
		{"silent+fails", "A-starts A-ends C-fails", 2}, // make exits 2 when a recipe fails
	} {
		_ = os.Remove(filepath.Join(dir, "order"))
		_ = os.Remove(filepath.Join(dir, "b-ran"))
		cmd := exec.Command("bash", filepath.Join(dir, "hack", "ci.sh"), tc.step)
		cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MAKELEVEL=")
		out, err := cmd.CombinedOutput()
		rc := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			rc = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		order, _ := os.ReadFile(filepath.Join(dir, "order"))
		if got := strings.Join(strings.Fields(string(order)), " "); got != tc.want || rc != tc.rc {
			t.Errorf("%s: ran %q, exit %d; want %q, exit %d\n%s", tc.step, got, rc, tc.want, tc.rc, out)
		}
		if !strings.Contains(string(out), "    total ") {
			t.Errorf("%s: no total in the table:\n%s", tc.step, out)
		}
	}
}
