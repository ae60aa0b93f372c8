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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// A test that panics ends the test binary at once: TestMain's cleanup never runs, and the etcd and kube-apiserver
// that envtest started would be left running. envtest starts them with no parent-death signal, so a reaper of
// our own does it: a small shell process that waits for the test binary to end and then stops them. Stop ends
// the reaper first, so that it never signals a process after the API server has stopped by itself.

// reapScript: $1 is the test binary's pid, the rest are the pids to stop once it is gone.
const reapScript = `parent=$1; shift
while kill -0 "$parent" 2>/dev/null; do sleep 1; done
kill "$@" 2>/dev/null; sleep 2; kill -9 "$@" 2>/dev/null; exit 0`

// startReaper starts the reaper of this process's children that run the binaries named (etcd, kube-apiserver).
// It returns the pids it watches and a function that ends it.
func startReaper(names ...string) ([]int, func(), error) {
	children, err := Children(os.Getpid())
	if err != nil {
		return nil, nil, err
	}
	args := []string{"-c", reapScript, "reaper", strconv.Itoa(os.Getpid())}
	var pids []int
	for _, p := range children {
		if slices.Contains(names, filepath.Base(procExe(p))) {
			pids = append(pids, p)
			args = append(args, strconv.Itoa(p))
		}
	}
	cmd := exec.Command("sh", args...)
	// Its own process group: a Ctrl-C to the test's group leaves it to do its work once the test binary is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting the reaper of the API server: %w", err)
	}
	return pids, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }, nil
}

// Children lists the processes whose parent is parent (etcd and kube-apiserver once envtest started them).
func Children(parent int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := procStat(pid); ok && ppid == parent {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// procStat reads a process's state (R, S, Z, ...) and parent from /proc/<pid>/stat; ok is false once it is gone.
func procStat(pid int) (state string, ppid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, false
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0], ppid, err == nil
}

// procExe is the path of a process's executable, empty when it cannot be read.
func procExe(pid int) string {
	exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	return exe
}
