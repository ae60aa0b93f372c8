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

package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const panicChildEnv = "TESTENV_PANICKING_CHILD"

// TestAPIServerStoppedWhenATestPanics runs this test binary again with a test that starts an Env and panics
// (so that no cleanup runs), then waits for that Env's etcd and kube-apiserver to be gone.
func TestAPIServerStoppedWhenATestPanics(t *testing.T) {
	if os.Getenv(panicChildEnv) != "" {
		env, err := Start()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("testenv-server-pids: %v\n", env.serverPIDs)
		panic("a test that panics")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAPIServerStoppedWhenATestPanics$", "-test.count=1")
	cmd.Env = append(os.Environ(), panicChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the panicking test binary exited 0:\n%s", out)
	}
	m := regexp.MustCompile(`testenv-server-pids: \[([0-9 ]*)\]`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the panicking test binary reported no API server:\n%s", out)
	}
	pids := strings.Fields(string(m[1]))
	if len(pids) != 2 {
		t.Fatalf("want etcd's and kube-apiserver's pids, got %v", pids)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		for running(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d (%s) still runs 30 s after the test binary panicked", pid, procExe(pid))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// running: the process exists and is not a zombie (pid 1 here may not reap the orphans it inherits).
func running(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != "Z"
}
