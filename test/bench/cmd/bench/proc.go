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

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/operator101/operator101/test/bench/benchutil"
)

// manager is one run of the operator101 manager binary.
type manager struct {
	cmd                   *exec.Cmd
	done                  chan struct{}
	metrics, probe, pprof string
	log                   string
	started               time.Time
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startManager runs the manager against the bench's API server, watching namespace ns, and waits until it is
// ready.
func startManager(ctx context.Context, bin, kubeconfig, ns, logPath string, extra, env []string) (*manager, error) {
	m := &manager{done: make(chan struct{}), log: logPath}
	var err error
	for _, a := range []*string{&m.metrics, &m.probe, &m.pprof} {
		if *a, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	args := []string{"--leader-elect=false", "--metrics-secure=false", "--metrics-bind-address=" + m.metrics,
		"--health-probe-bind-address=" + m.probe, "--pprof-bind-address=" + m.pprof}
	args = append(args, extra...)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	m.cmd = exec.Command(bin, args...)
	m.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "WATCH_NAMESPACE="+ns, "POD_NAMESPACE="+ns)
	m.cmd.Env = append(m.cmd.Env, env...)
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	// The manager dies with the bench, even if the bench is killed.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	m.started = time.Now()
	go func() { _ = m.cmd.Wait(); logf.Close(); close(m.done) }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if resp, err := http.Get("http://" + m.probe + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m, nil
			}
		}
		select {
		case <-m.done:
			return nil, fmt.Errorf("the manager exited at start; see %s", logPath)
		case <-ctx.Done():
			m.stop()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			m.stop()
			return nil, fmt.Errorf("the manager was not ready within 2 minutes; see %s", logPath)
		}
	}
}

func (m *manager) pid() int { return m.cmd.Process.Pid }

// stop sends SIGTERM and waits for the manager to end (SIGKILL after 40 s).
func (m *manager) stop() {
	if m == nil {
		return
	}
	select {
	case <-m.done:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(40 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

// cpuMark is the CPU time spent so far by the API server (etcd and kube-apiserver), a contender and the bench
// itself: on the machine's cores these three share, the sum of what they spend in a window, not the
// contender's alone, is what the window waits for.
type cpuMark struct {
	srv                  *apiServer
	pid                  int
	server, proc, itself float64
}

func cpuOf(pid int) float64 {
	p, _ := readProc(pid)
	return p.CPUSeconds
}

func markCPU(srv *apiServer, pid int) cpuMark {
	return cpuMark{srv: srv, pid: pid, server: srv.cpuSeconds(), proc: cpuOf(pid), itself: cpuOf(os.Getpid())}
}

// since is the CPU seconds the API server, the contender and the bench spent since the mark.
func (m cpuMark) since() (server, contender, bench float64) {
	return m.srv.cpuSeconds() - m.server, cpuOf(m.pid) - m.proc, cpuOf(os.Getpid()) - m.itself
}

// procStats is what /proc says of a process: peak and current resident memory, CPU time.
type procStats struct {
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	RSSMiB     float64 `json:"rssMiB"`
	CPUSeconds float64 `json:"cpuSeconds"`
	// AnonMiB and FileMiB split the current RSS (smaps_rollup): the heap and stacks, and mapped files (the
	// binary's code and data).
	AnonMiB float64 `json:"anonMiB"`
	FileMiB float64 `json:"fileMiB"`
	// GoMiB is runtime.MemStats (HeapInuse, HeapIdle, HeapReleased, Sys, ...) from the pprof endpoint.
	GoMiB map[string]float64 `json:"goMiB,omitempty"`
}

func readProc(pid int) (procStats, error) {
	var s procStats
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmHWM:":
			s.PeakRSSMiB = kb / 1024
		case "VmRSS:":
			s.RSSMiB = kb / 1024
		}
	}
	b, err = os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	st := string(b)
	f := strings.Fields(st[strings.LastIndexByte(st, ')')+1:])
	// After the command: state is field 3 of stat, utime 14 and stime 15 (clock ticks, 100 per second).
	if len(f) > 13 {
		ut, _ := strconv.ParseFloat(f[11], 64)
		stm, _ := strconv.ParseFloat(f[12], 64)
		s.CPUSeconds = (ut + stm) / 100
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		var rss, anon float64
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			kb, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "Rss:":
				rss = kb
			case "Anonymous:":
				anon = kb
			}
		}
		s.AnonMiB, s.FileMiB = anon/1024, (rss-anon)/1024
	}
	return s, nil
}

// stats reads /proc and the Go runtime's memory statistics of the manager.
func (m *manager) stats() (procStats, error) {
	s, err := readProc(m.pid())
	if err != nil {
		return s, err
	}
	if b, err := httpGet("http://"+m.pprof+"/debug/pprof/heap?debug=1", 30*time.Second); err == nil {
		s.GoMiB = benchutil.MemStats(string(b))
	}
	return s, nil
}

// liveHeap is the manager's Go heap right after a forced collection (HeapAlloc), in MiB: what it holds.
func (m *manager) liveHeap() (float64, error) {
	b, err := httpGet("http://"+m.pprof+"/debug/pprof/heap?gc=1&debug=1", time.Minute)
	if err != nil {
		return 0, fmt.Errorf("reading the manager's live heap: %w", err)
	}
	return benchutil.MemStats(string(b))["HeapAlloc"], nil
}

func httpGet(url string, timeout time.Duration) ([]byte, error) {
	c := &http.Client{Timeout: timeout}
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// profile saves a pprof profile of the manager (e.g. "heap", "profile?seconds=20") and its top entries as text.
func (m *manager) profile(what, dir, name, bin string) (string, error) {
	b, err := httpGet("http://"+m.pprof+"/debug/pprof/"+what, 10*time.Minute)
	if err != nil {
		return "", err
	}
	args := []string{"-top", "-nodecount=25"}
	if strings.HasPrefix(what, "heap") {
		args = append(args, "-sample_index=inuse_space")
	}
	return saveProfile(b, dir, name, bin, args...)
}

// saveProfile writes a pprof profile as <name>.pb.gz in dir, and what `go tool pprof` with args says of it
// (with bin, the profiled binary) as <name>.txt, which it returns.
func saveProfile(b []byte, dir, name, bin string, args ...string) (string, error) {
	path := filepath.Join(dir, name+".pb.gz")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", err
	}
	args = append([]string{"tool", "pprof"}, args...)
	out, err := exec.Command("go", append(args, bin, path)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %w: %s", err, out)
	}
	txt := filepath.Join(dir, name+".txt")
	return string(out), os.WriteFile(txt, out, 0o644)
}

// Sample is a process's resident memory at a moment, in seconds from the first create of its phase.
type Sample struct {
	T   float64 `json:"t"`
	MiB float64 `json:"mib"`
}

// rssSampler reads a process's VmRSS every interval until stopped: the memory curve of the charts.
type rssSampler struct {
	mu      sync.Mutex
	at      []time.Time
	mib     []float64
	stopped chan struct{}
	wg      sync.WaitGroup
}

func sampleRSS(pid int, every time.Duration) *rssSampler {
	s := &rssSampler{stopped: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if p, err := readProc(pid); err == nil {
				s.mu.Lock()
				s.at, s.mib = append(s.at, time.Now()), append(s.mib, p.RSSMiB)
				s.mu.Unlock()
			}
			select {
			case <-s.stopped:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the samples, in seconds from t0 (negative before it).
func (s *rssSampler) stop(t0 time.Time) []Sample {
	if s == nil {
		return nil
	}
	select {
	case <-s.stopped:
	default:
		close(s.stopped)
	}
	s.wg.Wait()
	out := make([]Sample, len(s.at))
	for i := range s.at {
		out[i] = Sample{T: s.at[i].Sub(t0).Seconds(), MiB: s.mib[i]}
	}
	return out
}
