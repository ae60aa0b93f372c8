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

// Command bench measures the operator101 manager at scale on a local API server (etcd + kube-apiserver):
// convergence of N MyWebs and N AppServices against a plain client-go lower bound, the writes the manager
// makes (from the API server's audit log) at creation, at rest and on restart, the delay of N Ats due at the
// same second, and the manager's peak memory and CPU. hack/bench.sh builds and runs it; docs/contributing/performance.md
// explains the method and keeps the results.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/operator101/operator101/test/testenv"
)

type options struct {
	sizes          []int
	assets, crds   string
	managerBin     string
	lowerboundBin  string
	peerBin        string
	skipPeer       bool
	out            string
	workers        []int
	managerArgs    []string
	managerEnv     []string
	label          string
	commit         string
	settle, quiet  time.Duration
	restarts       int
	profileSize    int
	profileSeconds int
	timeout        time.Duration
	pidfile        string
	skipLower      bool
	watchLower     bool
	noGate         bool
	pageBytes      int
	rounds         int
	// routes: every MyWeb and AppService with an Ingress, an HTTPRoute and 2 replicas (benchutil.Plan.Routes),
	// on API servers that serve the Gateway API's CRDs too (extraCRDs); the manager alone (withRoutes).
	routes    bool
	extraCRDs []string
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive number", p)
		}
		out = append(out, v)
	}
	return out, nil
}

func run() error {
	var o options
	sizes := flag.String("sizes", "1000", "bench sizes N, comma separated (the full scaling set: 100,1000,3000)")
	n := flag.Int("n", 0, "one size N (overrides -sizes)")
	workers := flag.String("workers", "4,8,16", "worker counts of the lower bound (the best is reported)")
	menv := flag.String("manager-env", "", "extra environment of the manager, space separated (e.g. \"GOMEMLIMIT=40MiB\")")
	margs := flag.String("manager-args", "", "extra manager flags, space separated (e.g. \"--kube-api-qps=500\")")
	flag.StringVar(&o.assets, "assets", "bin/k8s", "directory with etcd and kube-apiserver")
	flag.StringVar(&o.crds, "crds", "config/crd/bases", "CRD directory")
	flag.StringVar(&o.managerBin, "manager", "bin/bench/manager", "manager binary")
	flag.StringVar(&o.lowerboundBin, "lowerbound", "bin/bench/lowerbound", "lower-bound binary")
	flag.StringVar(&o.peerBin, "peer", "bin/bench/peer", "peer contender binary (a tutorial-style controller)")
	flag.BoolVar(&o.skipPeer, "skip-peer", false, "do not run the peer contender")
	flag.IntVar(&o.rounds, "rounds", 2, "convergences of the peer and the manager each, alternating (the mean is compared)")
	flag.StringVar(&o.out, "out", "bin/bench", "output directory")
	flag.StringVar(&o.label, "label", "", "label of this run in the results (e.g. before, after)")
	flag.StringVar(&o.commit, "commit", "", "the commit the binaries were built from, +dirty for uncommitted changes (hack/bench.sh passes git's)")
	flag.DurationVar(&o.settle, "settle", 5*time.Second, "wait after convergence before the at-rest window")
	flag.DurationVar(&o.quiet, "quiet", 30*time.Second, "at-rest window with the manager running")
	flag.IntVar(&o.restarts, "restarts", 2, "manager restarts at rest (each reconciles every object again)")
	flag.IntVar(&o.profileSize, "profile-size", 1000, "size at which pprof CPU and heap profiles are taken")
	flag.IntVar(&o.profileSeconds, "profile-seconds", 20, "length of the CPU profile from the first create")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "limit of each phase")
	flag.StringVar(&o.pidfile, "pidfile", "", "file to list the pids of started processes in (for hack/bench.sh)")
	flag.BoolVar(&o.skipLower, "skip-lowerbound", false, "do not run the lower bound")
	flag.BoolVar(&o.watchLower, "watch-lowerbound", false,
		"watch the lower bounds' objects as the bench watches the peer's and the manager's (to measure what a watch costs)")
	flag.IntVar(&o.pageBytes, "page-bytes", 0,
		"size of every MyWeb's page in bytes (0: a small page; 524288: the largest the schema allows)")
	history := flag.Bool("server-history", false,
		"instead of the sizes: the same Service creates on fresh API servers and on servers that served other objects "+
			"before (why each contender gets an API server of its own)")
	flag.BoolVar(&o.noGate, "no-upgradeable-gate", false,
		"no OperatorCondition: the At controller's Upgradeable gate stays off, as outside OLM (to compare with the default)")
	junk := flag.Int("tenant-junk", 0,
		"instead of the sizes: the manager's memory at rest without and with this many objects of each of "+
			"-tenant-junk-kinds that a tenant labelled as operator101's, with 250 KiB of annotations each "+
			"(at rest: -quiet, 2m unless given, long enough for Go to return the memory of decoding them)")
	flag.BoolVar(&o.routes, "routes", false,
		"every MyWeb and AppService with an Ingress, an HTTPRoute (the Gateway API's CRDs installed) and 2 replicas "+
			"(a PodDisruptionBudget): the manager alone, since the lower bounds and the peer make none of these")
	junkKindList := flag.String("tenant-junk-kinds", "ConfigMap", "kinds of -tenant-junk, comma separated: "+strings.Join(junkKinds, ","))
	flag.Parse()
	var err error
	if o.sizes, err = parseInts(*sizes); err != nil {
		return fmt.Errorf("-sizes: %w", err)
	}
	if *n > 0 {
		o.sizes = []int{*n}
	}
	if o.workers, err = parseInts(*workers); err != nil {
		return fmt.Errorf("-workers: %w", err)
	}
	o.managerArgs = strings.Fields(*margs)
	o.managerEnv = strings.Fields(*menv)
	if o.routes {
		if err := withRoutes(&o, testenv.GatewayAPICRDs); err != nil {
			return fmt.Errorf("-routes: %w", err)
		}
	}

	ctrllog.SetLogger(logr.Discard()) // the bench's cache logs nothing worth reading
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	stamp := time.Now().UTC().Format("20060102-150405")
	if *history {
		p := historyPlan{Servers: 3, Rounds: 3, Services: 4000, Filler: 15000}
		servers, err := serverHistory(ctx, o, p, filepath.Join(o.out, "history-"+stamp))
		table := historyMarkdown(p, servers)
		path := filepath.Join(o.out, "history-"+stamp+".md")
		_ = os.WriteFile(path, []byte(table), 0o644)
		fmt.Printf("\nresults: %s\n\n%s", path, table)
		return err
	}
	if *junk > 0 {
		quietGiven := false
		flag.Visit(func(f *flag.Flag) { quietGiven = quietGiven || f.Name == "quiet" })
		if !quietGiven {
			o.quiet = junkQuiet
		}
		kinds, err := parseKinds(*junkKindList)
		if err != nil {
			return fmt.Errorf("-tenant-junk-kinds: %w", err)
		}
		res, err := tenantJunk(ctx, o, *junk, kinds, filepath.Join(o.out, "junk-"+stamp))
		b, _ := json.MarshalIndent(res, "", "  ")
		path := filepath.Join(o.out, "junk-"+stamp+".json")
		_ = os.WriteFile(path, append(b, '\n'), 0o644)
		table := junkMarkdown(res)
		_ = os.WriteFile(filepath.Join(o.out, "junk-"+stamp+".md"), []byte(table), 0o644)
		fmt.Printf("\nresults: %s\n\n%s", path, table)
		return err
	}
	report := Report{Date: time.Now().UTC().Format(time.RFC3339), Label: o.label, Commit: o.commit, Machine: machine(),
		Routes:      o.routes,
		ManagerArgs: o.managerArgs, ManagerEnv: o.managerEnv,
		NoUpgradeableGate: o.noGate, Sizes: []SizeResult{}}
	jsonPath := filepath.Join(o.out, "bench-"+stamp+".json")
	save := func() {
		b, _ := json.MarshalIndent(report, "", "  ")
		_ = os.WriteFile(jsonPath, append(b, '\n'), 0o644)
	}
	var runErr error
	for _, size := range o.sizes {
		dir := filepath.Join(o.out, "run-"+stamp, fmt.Sprintf("n%d", size))
		load := loadAverage()
		res, err := runSize(ctx, o, size, dir)
		if err == nil {
			err = runRounds(ctx, o, res, dir)
		}
		if res != nil {
			res.LoadAverage = [2]float64{load, loadAverage()}
			res.HeapBase = heapBase(*res, report.Sizes)
			res.Goals = res.goals()
			report.Sizes = append(report.Sizes, *res)
			save()
		}
		if err != nil {
			runErr = fmt.Errorf("N=%d: %w", size, err)
			break
		}
	}
	save()
	table := report.Markdown()
	_ = os.WriteFile(filepath.Join(o.out, "bench-"+stamp+".md"), []byte(table), 0o644)
	fmt.Printf("\nresults: %s\n\n%s", jsonPath, table)
	return runErr
}

// withRoutes sets o up for -routes: the Gateway API's CRDs (from gatewayCRDs) on every API server, and the
// manager alone. The lower bounds and the peer make no Ingress, HTTPRoute or PodDisruptionBudget: measured
// beside a manager that makes them, their comparison would say nothing; the default run keeps it.
func withRoutes(o *options, gatewayCRDs func() ([]string, error)) error {
	files, err := gatewayCRDs()
	if err != nil {
		return fmt.Errorf("the Gateway API's CRDs: %w", err)
	}
	o.extraCRDs = append(o.extraCRDs, files...)
	o.skipLower, o.skipPeer = true, true
	return nil
}

func loadAverage() float64 {
	var l float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if _, err := fmt.Sscanf(string(b), "%f", &l); err != nil {
			return 0 // unparsable: no load average, as when /proc/loadavg is missing
		}
	}
	return l
}

// machine describes where the bench ran.
func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "MemTotal:"), "%f", &kb); err == nil {
			m.MemoryGiB = kb / 1024 / 1024
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				_, m.CPU, _ = strings.Cut(line, ": ")
				break
			}
		}
	}
	return m
}
