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
	"fmt"
	"strings"

	"github.com/operator101/operator101/test/bench/benchutil"
)

// Report is the JSON file of one bench run.
type Report struct {
	Date  string `json:"date"`
	Label string `json:"label,omitempty"`
	// Commit is the tree the binaries were built from (-commit), "" when not given.
	Commit      string   `json:"commit,omitempty"`
	Machine     Machine  `json:"machine"`
	ManagerArgs []string `json:"managerArgs"`
	ManagerEnv  []string `json:"managerEnv,omitempty"`
	// NoUpgradeableGate: the run had no OperatorCondition (-no-upgradeable-gate), so the gate was off.
	NoUpgradeableGate bool `json:"noUpgradeableGate,omitempty"`
	// Routes: every MyWeb and AppService had an Ingress, an HTTPRoute and 2 replicas (a PodDisruptionBudget)
	// (-routes; benchutil.Plan.Routes), and the manager ran alone.
	Routes bool         `json:"routes,omitempty"`
	Sizes  []SizeResult `json:"sizes"`
}

// Machine is where the bench ran.
type Machine struct {
	CPUs      int     `json:"cpus"`
	CPU       string  `json:"cpu"`
	MemoryGiB float64 `json:"memoryGiB"`
	Kernel    string  `json:"kernel"`
	Go        string  `json:"go"`
}

// LowerBoundRun is one run of the lower-bound program.
type LowerBoundRun struct {
	Workers  int     `json:"workers"`
	Objects  int     `json:"objects"`
	Requests int64   `json:"requests"`
	Seconds  float64 `json:"seconds"`
	// Done is when each object got its status, in seconds from the start, ascending.
	Done []float64 `json:"done"`
	// ToAvailable is, per object, the time from the start of its create to its last status write (seconds,
	// ascending); ToAvailableP its percentiles.
	ToAvailable  []float64   `json:"toAvailable"`
	ToAvailableP Percentiles `json:"toAvailablePercentiles"`
	// Design: the run made the requests of operator101's design too (lowerbound -design).
	Design bool `json:"design,omitempty"`
	// PeakRSSMiB is the program's peak resident memory (getrusage's ru_maxrss).
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	// ServerCPUSeconds is the CPU etcd and kube-apiserver spent while the program ran; ClientCPUSeconds the
	// program's own (getrusage).
	ServerCPUSeconds float64 `json:"serverCPUSeconds"`
	ClientCPUSeconds float64 `json:"clientCPUSeconds"`
	// EtcdReads are the reads kube-apiserver sent to etcd while the program ran (-1: not counted).
	EtcdReads float64 `json:"etcdReads"`
}

// Percentiles of the time from an object's create to its being Available, in seconds.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

func percentiles(xs []float64) Percentiles {
	return Percentiles{P50: benchutil.Percentile(xs, 50), P99: benchutil.Percentile(xs, 99)}
}

// Contender is the peer contender's run at one size: a controller written the way tutorials write theirs
// (test/bench/cmd/peer), on an API server of its own, between the lower bounds and the manager.
type Contender struct {
	Name               string  `json:"name"`
	ConvergenceSeconds float64 `json:"convergenceSeconds"`
	Ratio              float64 `json:"ratio"`
	// DesignRatio is the convergence over the design's lower bound.
	DesignRatio     float64     `json:"designRatio"`
	ToAvailable     Percentiles `json:"toAvailable"`
	SteadyRate      float64     `json:"steadyObjectsPerSecond"`
	CreationWrites  Writes      `json:"creationWrites"`
	PerObject       float64     `json:"writesPerObject"`
	StatusWritesPer float64     `json:"statusWritesPerObject"`
	// BenchWrites are the bench's own writes in the same window (the creates, the stand-in kubelet's).
	BenchWrites    map[string]int `json:"benchWrites"`
	TrailingWrites Writes         `json:"trailingWrites"`
	// StillWriting: the contender had not stopped writing when the bench gave up waiting (TrailingWrites
	// then ends there, and the at-rest window follows anyway).
	StillWriting     bool      `json:"stillWriting,omitempty"`
	AtRest           Writes    `json:"atRest"`
	Idle             procStats `json:"idle"`
	AfterConvergence procStats `json:"afterConvergence"`
	AvailableSeconds []float64 `json:"availableSeconds"`
	RSS              []Sample  `json:"rss"`
	// ServerCPUSeconds is the CPU etcd and kube-apiserver spent from the first create to convergence;
	// OwnCPUSeconds the contender's, BenchCPUSeconds the bench's (its creates, its stand-in kubelet, its watch).
	ServerCPUSeconds float64 `json:"serverCPUSeconds"`
	OwnCPUSeconds    float64 `json:"ownCPUSeconds"`
	BenchCPUSeconds  float64 `json:"benchCPUSeconds"`
	// EtcdReads are the reads kube-apiserver sent to etcd in the same window: those its watch cache did not
	// answer (-1: not counted).
	EtcdReads float64 `json:"etcdReads"`
	// ServerProfileTop is kube-apiserver's CPU profile from the first create (at -profile-size), by
	// cumulative time.
	ServerProfileTop string `json:"serverCPUProfileTop,omitempty"`
	// Rounds are the contender's convergences (rounds.go): ConvergenceSeconds, Ratio, DesignRatio and the CPU
	// seconds above are their means, everything else is of round 1.
	Rounds []Round `json:"rounds,omitempty"`
}

// Writes are the manager's writes in a window, by "verb resource[/subresource]".
type Writes struct {
	Seconds float64        `json:"seconds"`
	Total   int            `json:"total"`
	ByKey   map[string]int `json:"byKey"`
}

// AtResult is the At phase: N Ats due at the same second.
type AtResult struct {
	N        int    `json:"n"`
	Schedule string `json:"schedule"`
	// LeadSeconds is how far ahead of the last At's creation the schedule was (negative: created late).
	LeadSeconds float64 `json:"leadSeconds"`
	Pods        int     `json:"pods"`
	// Delays from the schedule to the API server's receipt of each pod's POST (audit log, microseconds).
	P50Seconds float64 `json:"p50Seconds"`
	P99Seconds float64 `json:"p99Seconds"`
	MaxSeconds float64 `json:"maxSeconds"`
	// FloorSeconds is N pod creates at the lower bound's request rate in this run: no operator gets the
	// last pod out sooner than this after the schedule on this API server.
	FloorSeconds float64 `json:"floorSeconds"`
	// Watch-based: schedule to the bench seeing the pod (includes watch delivery), for comparison.
	WatchP99Seconds float64 `json:"watchP99Seconds"`
	Writes          Writes  `json:"writes"`
	// Upgradeable is the At controller's Upgradeable gate once every At pod runs.
	Upgradeable *GateResult `json:"upgradeable,omitempty"`
	// WatchersClosed are the watches kube-apiserver closed during the At phase because their client fell
	// behind, by resource (nil: not counted).
	WatchersClosed map[string]float64 `json:"watchersClosed"`
}

// GateResult is the OperatorCondition's Upgradeable condition after the At phase, with the manager's writes
// of it during the phase.
type GateResult struct {
	Status      string `json:"status"`
	Reason      string `json:"reason"`
	Message     string `json:"message"`
	RunningPods int    `json:"runningPods"`
	Writes      int    `json:"writes"`
}

// SizeResult is everything measured at one size.
type SizeResult struct {
	Plan benchutil.Plan `json:"plan"`

	LowerBound     []LowerBoundRun `json:"lowerBound"`
	LowerBoundBest float64         `json:"lowerBoundBestSeconds"`
	LowerBoundW    int             `json:"lowerBoundBestWorkers"`
	// DesignBound is the design's lower bound (lowerbound -design): the plain one plus the requests
	// operator101's design makes per object (the read of the object whole past the cache, the Event).
	DesignBound     []LowerBoundRun `json:"designBound"`
	DesignBoundBest float64         `json:"designBoundBestSeconds"`
	DesignBoundW    int             `json:"designBoundBestWorkers"`
	// LowerBoundRounds and DesignBoundRounds are each bound's runs at its best worker count, one a round
	// (round 1: the best of the sweep); the ratios are to their means.
	LowerBoundRounds  []Round `json:"lowerBoundRounds,omitempty"`
	DesignBoundRounds []Round `json:"designBoundRounds,omitempty"`
	// Peer is the tutorial-style controller's run (nil with -skip-peer).
	Peer *Contender `json:"peer,omitempty"`
	// Idle is the manager started, its caches synced, before the first object exists.
	Idle procStats `json:"managerIdle"`
	// AvailableSeconds is when each object became Available, in seconds from the first create, ascending.
	AvailableSeconds []float64 `json:"availableSeconds"`
	// RSS is the manager's resident memory from its start to the end of the at-rest window, in seconds from
	// the first create.
	RSS []Sample `json:"rss"`

	// Convergence: from the first create to the last object reporting Available.
	ConvergenceSeconds float64 `json:"convergenceSeconds"`
	CreateSeconds      float64 `json:"createSeconds"`
	// ServerCPUSeconds is the CPU etcd and kube-apiserver spent from the first create to convergence;
	// OwnCPUSeconds the manager's, BenchCPUSeconds the bench's (its creates, its stand-in kubelet, its watch).
	ServerCPUSeconds float64 `json:"serverCPUSeconds"`
	OwnCPUSeconds    float64 `json:"ownCPUSeconds"`
	BenchCPUSeconds  float64 `json:"benchCPUSeconds"`
	// EtcdReads are the reads kube-apiserver sent to etcd in the same window (-1: not counted).
	EtcdReads float64 `json:"etcdReads"`
	// WatchersClosed are the watches kube-apiserver closed in the same window because their client (the
	// manager, or the bench's watch) fell behind, by resource (nil: not counted).
	WatchersClosed map[string]float64 `json:"watchersClosed"`

	Ratio       float64 `json:"ratio"`
	DesignRatio float64 `json:"designRatio"`
	// ToAvailable: from the start of each object's create to its being seen Available.
	ToAvailable Percentiles `json:"toAvailable"`
	SteadyRate  float64     `json:"steadyObjectsPerSecond"`
	// CreationWrites are the manager's writes from the first create to convergence + settle.
	CreationWrites  Writes             `json:"creationWrites"`
	PerObject       float64            `json:"writesPerObject"`
	PerKind         map[string]float64 `json:"writesPerObjectByKind"`
	StatusWritesPer float64            `json:"statusWritesPerObject"`
	BenchWrites     map[string]int     `json:"benchWrites"`
	// TrailingWrites: after convergence + settle, until the manager's last write (queued Events).
	TrailingWrites   Writes    `json:"trailingWrites"`
	TrailingSeconds  float64   `json:"trailingSeconds"`
	AtRest           Writes    `json:"atRest"`
	Restarts         []Writes  `json:"restarts"`
	At               *AtResult `json:"at,omitempty"`
	AfterConvergence procStats `json:"managerAfterConvergence"`
	AfterAt          procStats `json:"managerAfterAt"`
	AfterRestart     procStats `json:"managerAfterRestart"`
	// IdleLiveHeapMiB is the Go heap of the idle manager (caches synced, no object) after a forced collection.
	IdleLiveHeapMiB float64 `json:"idleLiveHeapMiB"`
	// LiveHeapMiB is the Go heap at rest after a forced collection: what the caches really hold.
	LiveHeapMiB float64 `json:"liveHeapMiB"`
	// HeapBase is what the live heap goal measures LiveHeapMiB's growth from (heapBase).
	HeapBase HeapPoint `json:"heapBase"`
	// LiveHeapAfterRestartMiB is the same of the manager after the last restart, whose peak RSS
	// (AfterRestart.PeakRSSMiB) is that of a start-up with every object present: the initial lists.
	LiveHeapAfterRestartMiB float64 `json:"liveHeapAfterRestartMiB"`
	HeapProfileTop          string  `json:"heapProfileTop,omitempty"`
	CPUProfileTop           string  `json:"cpuProfileTop,omitempty"`
	// ServerProfileTop is kube-apiserver's CPU profile in the same window as CPUProfileTop.
	ServerProfileTop string `json:"serverCPUProfileTop,omitempty"`
	// Rounds are the manager's convergences (rounds.go): ConvergenceSeconds, Ratio, DesignRatio and the CPU
	// seconds of the convergence are their means, everything else is of round 1.
	Rounds []Round `json:"rounds,omitempty"`
	// LoadAverage is /proc/loadavg's 1-minute figure at the start and at the end of the size: the machine
	// is shared, and the numbers are only as good as it was quiet.
	LoadAverage [2]float64 `json:"loadAverage"`
	// Goals are the goals at this size, as the table prints them.
	Goals  []Goal   `json:"goals,omitempty"`
	Errors []string `json:"errors,omitempty"`
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

// safeRatio is a/b, or 0 (no ratio) when b is not positive.
func safeRatio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// readsPerObject is reads over objects, or "–" when the reads were not counted (negative).
func readsPerObject(reads float64, objects int) string {
	if reads < 0 || objects <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", reads/float64(objects))
}

func ratioText(r float64) string {
	if r <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", r)
}

// Markdown is the results table.
func (r Report) Markdown() string {
	var b strings.Builder
	commit := r.Commit
	if commit == "" {
		commit = "not given"
	}
	fmt.Fprintf(&b, "bench %s %s; commit %s; %d CPUs, %.1f GiB, kernel %s, %s; manager args: %q, env: %q\n\n", r.Date,
		r.Label, commit, r.Machine.CPUs, r.Machine.MemoryGiB, r.Machine.Kernel, r.Machine.Go,
		strings.Join(r.ManagerArgs, " "), strings.Join(r.ManagerEnv, " "))
	if r.Routes {
		b.WriteString("Every MyWeb and AppService with an Ingress, an HTTPRoute and 2 replicas (a PodDisruptionBudget): " +
			"all six children (-routes); the manager alone.\n\n")
	}
	b.WriteString("| N | MyWeb+AppService | converge s | lower bound s | ratio | objects/s steady | manager writes/object at creation | status writes/object | writes after convergence: queued (s) / at rest | writes per restart | At N | At p50/p99/max s | peak RSS MiB (conv / +At) | CPU s (conv / +At) | load avg (start/end) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Sizes {
		lb := "-"
		if b := s.bounds()[0]; s.LowerBoundBest > 0 {
			lb = fmt.Sprintf("%s, %d workers", convergeText(b.mean().ConvergenceSeconds, b.rounds), s.LowerBoundW)
		}
		ratio := "-"
		if s.Ratio > 0 {
			ratio = fmt.Sprintf("%.2f", s.Ratio)
		}
		restarts := make([]string, 0, len(s.Restarts))
		for _, w := range s.Restarts {
			restarts = append(restarts, fmt.Sprint(w.Total))
		}
		at, atN := "-", "-"
		if s.At != nil {
			atN = fmt.Sprint(s.At.N)
			at = fmt.Sprintf("%.2f / %.2f / %.2f (floor %.1f)", s.At.P50Seconds, s.At.P99Seconds, s.At.MaxSeconds, s.At.FloorSeconds)
		}
		fmt.Fprintf(&b, "| %d | %d+%d | %s | %s | %s | %.0f | %.2f | %.2f | %d (%.0fs) / %d in %.0fs | %s | %s | %s | %s / %s | %s / %s | %.1f / %.1f |\n",
			s.Plan.N, s.Plan.MyWebs, s.Plan.AppServices, convergeText(s.ConvergenceSeconds, s.Rounds), lb, ratio, s.SteadyRate,
			s.PerObject, s.StatusWritesPer, s.TrailingWrites.Total, s.TrailingSeconds, s.AtRest.Total, s.AtRest.Seconds, strings.Join(restarts, ", "), atN, at,
			f1(s.AfterConvergence.PeakRSSMiB), f1(s.AfterAt.PeakRSSMiB), f1(s.AfterConvergence.CPUSeconds), f1(s.AfterAt.CPUSeconds),
			s.LoadAverage[0], s.LoadAverage[1])
	}
	if r.NoUpgradeableGate {
		b.WriteString("\nThe At controller's Upgradeable gate: off (-no-upgradeable-gate: no OperatorCondition; every At pod still marked Running).\n")
	} else {
		b.WriteString("\nThe At controller's Upgradeable gate (an OperatorCondition as OLM makes it; every At pod marked Running):\n\n")
	}
	for _, s := range r.Sizes {
		if s.At != nil && s.At.Upgradeable != nil {
			u := s.At.Upgradeable
			fmt.Fprintf(&b, "- N=%d: Upgradeable=%s (%s) with %d pods running, %d OperatorCondition writes in the At phase: %q\n",
				s.Plan.N, u.Status, u.Reason, u.RunningPods, u.Writes, u.Message)
		}
	}
	b.WriteString("\nWatches kube-apiserver closed on the manager's API server because their client fell behind " +
		"(apiserver_terminated_watchers_total; the manager watches every kind it owns, the bench MyWebs, AppServices, " +
		"Deployments and pods):\n\n")
	for _, s := range r.Sizes {
		at := map[string]float64(nil)
		if s.At != nil {
			at = s.At.WatchersClosed
		}
		fmt.Fprintf(&b, "- N=%d: in the convergence %s; in the At phase %s\n", s.Plan.N, closedText(s.WatchersClosed),
			closedText(at))
	}
	b.WriteString("\nSide by side: the lower bound (plain client-go, best of its worker counts), the design's lower bound " +
		"(the same with the requests operator101's design adds: the read of a new object whole past the cache, the Event), the peer (a controller written " +
		"the way tutorials write theirs: CreateOrUpdate of each child and a status update on every reconcile, " +
		"controller-runtime's defaults) and operator101's manager. Writes per object count the contender's own writes " +
		"at creation (the lower bound's include the create and the Deployment status, which the bench writes for the " +
		"others). At rest: the contender's writes in the at-rest window after it stopped writing; the lower bound " +
		"exits. Idle RSS: started, caches synced, no objects. With rounds, the peer's and operator101's convergence " +
		"(each round's in brackets, in the order peer, operator101, operator101, peer, ...), its ratios and the " +
		"API server's CPU are means over the rounds; the other figures are of round 1. Each lower bound runs again " +
		"at its best worker count in every later round, before the contenders, and its convergence and CPU are the " +
		"means too (round 1's is the best of the worker counts, so the mean leans low).\n\n")
	b.WriteString("| N | contender | converge s | × lower bound | × design's lower bound | Available p50 s from the first create | to Available p50 / p99 s from its own create | requests or own writes per object (with the bench's) | reads sent to etcd per object | writes after convergence / at rest | CPU ms per object | API server + etcd CPU ms per object | peak RSS MiB | idle RSS MiB |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Sizes {
		objects := s.Plan.Objects()
		lbs, dbs := s.boundSeconds()
		for _, runs := range s.bounds() {
			if lb := bestRun(runs.runs, runs.workers); lb.Objects > 0 {
				per := requestsPerObject(runs.runs, runs.workers)
				m := runs.mean()
				fmt.Fprintf(&b, "| %d | %s (%d workers) | %s | %s | %s | %s | %.2f / %.2f | %.2f (%.2f) | %s | – | – | %s | %s | – |\n", s.Plan.N,
					runs.name, lb.Workers, convergeText(m.ConvergenceSeconds, runs.rounds),
					ratioText(safeRatio(m.ConvergenceSeconds, lbs)), ratioText(safeRatio(m.ConvergenceSeconds, dbs)),
					f1(benchutil.Percentile(lb.Done, 50)), lb.ToAvailableP.P50, lb.ToAvailableP.P99, per, per,
					readsPerObject(lb.EtcdReads, lb.Objects), f1(msPerObject(m.ServerCPUSeconds, lb.Objects)),
					f1(lb.PeakRSSMiB))
			}
		}
		if p := s.Peer; p != nil {
			still := ""
			if p.StillWriting {
				still = " (still writing)"
			}
			fmt.Fprintf(&b, "| %d | peer (tutorial style) | %s | %s | %s | %s | %.2f / %.2f | %.2f (%.2f) | %s | %d%s / %d in %.0fs | %.2f | %s | %s | %s |\n", s.Plan.N,
				convergeText(p.ConvergenceSeconds, p.Rounds), ratioText(p.Ratio), ratioText(p.DesignRatio), f1(benchutil.Percentile(p.AvailableSeconds, 50)),
				p.ToAvailable.P50, p.ToAvailable.P99, p.PerObject,
				p.PerObject+float64(benchutil.Total(p.BenchWrites))/float64(objects), readsPerObject(p.EtcdReads, objects),
				p.TrailingWrites.Total, still, p.AtRest.Total,
				p.AtRest.Seconds, cpuPerObjectMs(p.Idle, p.AfterConvergence, objects),
				f1(msPerObject(p.ServerCPUSeconds, objects)), f1(p.AfterConvergence.PeakRSSMiB), f1(p.Idle.RSSMiB))
		}
		fmt.Fprintf(&b, "| %d | operator101 | %s | %s | %s | %s | %.2f / %.2f | %.2f (%.2f) | %s | %d / %d in %.0fs | %.2f | %s | %s | %s |\n", s.Plan.N,
			convergeText(s.ConvergenceSeconds, s.Rounds), ratioText(s.Ratio), ratioText(s.DesignRatio), f1(benchutil.Percentile(s.AvailableSeconds, 50)),
			s.ToAvailable.P50, s.ToAvailable.P99, s.PerObject,
			s.PerObject+float64(benchutil.Total(s.BenchWrites))/float64(objects), readsPerObject(s.EtcdReads, objects),
			s.TrailingWrites.Total, s.AtRest.Total,
			s.AtRest.Seconds, cpuPerObjectMs(s.Idle, s.AfterConvergence, objects),
			f1(msPerObject(s.ServerCPUSeconds, objects)), f1(s.AfterConvergence.PeakRSSMiB), f1(s.Idle.RSSMiB))
	}
	b.WriteString("\nThe machine's CPU from the first create to convergence, per object: on its cores the API server, " +
		"the contender and the bench share, so the sum over the cores bounds the convergence from below.\n\n")
	b.WriteString("| N | contender | API server + etcd ms | contender ms | bench ms | all ms | all × objects / cores s | converge s |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Sizes {
		objects := s.Plan.Objects()
		row := func(name string, server, own, bench, converge float64, rounds []Round) {
			all := server + own + bench
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", s.Plan.N, name, f1(msPerObject(server, objects)),
				f1(msPerObject(own, objects)), f1(msPerObject(bench, objects)), f1(msPerObject(all, objects)),
				f1(all/float64(max(r.Machine.CPUs, 1))), convergeText(converge, rounds))
		}
		for _, runs := range s.bounds() {
			if lb := bestRun(runs.runs, runs.workers); lb.Objects > 0 {
				m := runs.mean()
				row(fmt.Sprintf("%s (%d workers)", runs.name, lb.Workers), m.ServerCPUSeconds, m.OwnCPUSeconds, 0,
					m.ConvergenceSeconds, runs.rounds)
			}
		}
		if p := s.Peer; p != nil {
			row("peer (tutorial style)", p.ServerCPUSeconds, p.OwnCPUSeconds, p.BenchCPUSeconds, p.ConvergenceSeconds, p.Rounds)
		}
		row("operator101", s.ServerCPUSeconds, s.OwnCPUSeconds, s.BenchCPUSeconds, s.ConvergenceSeconds, s.Rounds)
	}
	for _, s := range r.Sizes {
		if p := s.Peer; p != nil {
			fmt.Fprintf(&b, "\nPeer writes per object at creation, N=%d: %s\n", s.Plan.N,
				benchutil.FormatCounts(p.CreationWrites.ByKey, s.Plan.Objects()))
		}
	}
	b.WriteString("\nManager writes per object at creation, by verb and resource:\n\n")
	for _, s := range r.Sizes {
		fmt.Fprintf(&b, "- N=%d: %s\n", s.Plan.N, benchutil.FormatCounts(s.CreationWrites.ByKey, s.Plan.Objects()))
	}
	b.WriteString("\nGoals (docs/contributing/performance.md \"Targets and measurements\"):\n\n")
	b.WriteString(goalsMarkdown(r.Sizes))
	return b.String()
}

// closedText is a count of closed watches by resource: "ats 3, pods 1", "none", or "not counted" (nil).
func closedText(closed map[string]float64) string {
	if closed == nil {
		return "not counted"
	}
	counts := make(map[string]int, len(closed))
	for r, n := range closed {
		counts[r] = int(n)
	}
	return benchutil.FormatCounts(counts, 0)
}
