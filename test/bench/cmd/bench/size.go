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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	apiv2 "github.com/operator-framework/api/pkg/operators/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/test/bench/benchutil"
)

const (
	benchNamespace = "bench"
	// peerNamespace is the peer contender's: the manager does not watch it.
	peerNamespace = "peer"
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// addPids appends pids to the pidfile hack/bench.sh kills on exit, should the bench itself die.
func addPids(path string, pids ...int) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	for _, p := range pids {
		fmt.Fprintln(f, p)
	}
}

// createAll creates the plan's MyWebs and AppServices in ns, 16 at a time, as a user's scripts would, and
// tells t when each create started.
func createAll(ctx context.Context, c client.Client, plan benchutil.Plan, ns string, t *tracker) error {
	return parallel(ctx, max(plan.MyWebs, plan.AppServices), 16, func(ctx context.Context, i int) error {
		if i < plan.MyWebs {
			w := plan.MyWeb(ns, i)
			t.created("web/"+w.Name, time.Now())
			if err := c.Create(ctx, w); err != nil {
				return fmt.Errorf("creating MyWeb %d: %w", i, err)
			}
		}
		if i < plan.AppServices {
			a := plan.AppService(ns, i)
			t.created("app/"+a.Name, time.Now())
			if err := c.Create(ctx, a); err != nil {
				return fmt.Errorf("creating AppService %d: %w", i, err)
			}
		}
		return nil
	})
}

// parallel runs f(0..n-1) on w goroutines and returns the first error.
func parallel(ctx context.Context, n, w int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idx := make(chan int)
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		}()
	}
loop:
	for i := range n {
		select {
		case idx <- i:
		case <-ctx.Done():
			break loop
		}
	}
	close(idx)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

// tracker records when each object is first seen in a wanted state, and when its create started.
type tracker struct {
	mu    sync.Mutex
	start time.Time
	want  int
	seen  map[string]time.Duration
	born  map[string]time.Duration
	last  time.Time
	done  chan struct{}
}

func newTracker(want int) *tracker {
	return &tracker{want: want, seen: map[string]time.Duration{}, born: map[string]time.Duration{}, done: make(chan struct{})}
}

func (t *tracker) reset(start time.Time, want int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start, t.want, t.seen, t.born, t.done = start, want, map[string]time.Duration{}, map[string]time.Duration{}, make(chan struct{})
}

// created records that the create of key started at at.
func (t *tracker) created(key string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.born[key] = at.Sub(t.start)
}

// toAvailable is, per object seen, the time from the start of its create to its being seen (seconds,
// ascending).
func (t *tracker) toAvailable() []float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]float64, 0, len(t.seen))
	for k, d := range t.seen {
		if b, ok := t.born[k]; ok {
			out = append(out, (d - b).Seconds())
		}
	}
	sort.Float64s(out)
	return out
}

func (t *tracker) mark(key string) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.seen[key]; ok || t.start.IsZero() {
		return
	}
	t.seen[key] = now.Sub(t.start)
	t.last = now
	if len(t.seen) == t.want {
		close(t.done)
	}
}

// await waits until every tracked object is Available (or timeout), saying how many are as it goes, with
// prefix; it returns what snapshot returns then.
func (t *tracker) await(ctx context.Context, timeout time.Duration, prefix string) (map[string]time.Duration, time.Time, error) {
	t.mu.Lock()
	want := t.want
	t.mu.Unlock()
	_, _, done := t.snapshot()
	if err := waitFor(ctx, done, timeout, func() string {
		seen, _, _ := t.snapshot()
		return fmt.Sprintf("%s%d of %d Available", prefix, len(seen), want)
	}); err != nil {
		return nil, time.Time{}, fmt.Errorf("convergence: %w", err)
	}
	seen, t1, _ := t.snapshot()
	return seen, t1, nil
}

func (t *tracker) snapshot() (map[string]time.Duration, time.Time, chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]time.Duration, len(t.seen))
	for k, v := range t.seen {
		out[k] = v
	}
	return out, t.last, t.done
}

func handler(f func(obj any)) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{AddFunc: f, UpdateFunc: func(_, obj any) { f(obj) }}
}

func available(conds []metav1.Condition, gen, observed int64) bool {
	return observed == gen && meta.IsStatusConditionTrue(conds, "Available")
}

func runSize(ctx context.Context, o options, n int, dir string) (*SizeResult, error) {
	plan := benchutil.PlanFor(n)
	plan.PageBytes = o.pageBytes
	plan.Routes = o.routes
	res := &SizeResult{Plan: plan}
	logf("N=%d: %d MyWebs, %d AppServices (%d with a Service); each contender on an API server of its own in %s",
		n, plan.MyWebs, plan.AppServices, plan.AppServicesWithPort, dir)

	// --- The lower bound, first; then the design's lower bound: the same, with the requests operator101's
	// design adds per object. ---
	if !o.skipLower {
		for _, b := range []struct {
			design      bool
			name        string
			runs        *[]LowerBoundRun
			best        *float64
			bestWorkers *int
		}{
			{false, "lower bound", &res.LowerBound, &res.LowerBoundBest, &res.LowerBoundW},
			{true, "design lower bound", &res.DesignBound, &res.DesignBoundBest, &res.DesignBoundW},
		} {
			for _, w := range o.workers {
				ns := boundNamespace(b.design, w)
				r, err := runLowerBoundOnServer(ctx, o, n, w, b.design, ns, filepath.Join(dir, "server-"+ns))
				if err != nil {
					return res, err
				}
				logf("N=%d: %s with %d workers: %.2f s (%d requests); API server and etcd CPU %.1f s", n, b.name, w,
					r.Seconds, r.Requests, r.ServerCPUSeconds)
				*b.runs = append(*b.runs, r)
				if *b.best == 0 || r.Seconds < *b.best {
					*b.best, *b.bestWorkers = r.Seconds, r.Workers
				}
			}
		}
	}

	// --- The peer contender: a tutorial-style controller, on an API server of its own. ---
	if !o.skipPeer {
		peer, err := runPeerOnServer(ctx, o, plan, dir)
		if peer != nil {
			if res.LowerBoundBest > 0 {
				peer.Ratio = peer.ConvergenceSeconds / res.LowerBoundBest
			}
			if res.DesignBoundBest > 0 {
				peer.DesignRatio = peer.ConvergenceSeconds / res.DesignBoundBest
			}
			res.Peer = peer
		}
		if err != nil {
			return res, fmt.Errorf("peer: %w", err)
		}
	}

	// --- operator101's manager, on an API server of its own. ---
	srv, c, err := startServer(o, filepath.Join(dir, "server-manager"))
	if err != nil {
		return res, err
	}
	defer srv.stop()

	ns := benchNamespace
	oc, managerEnv, err := managerNamespace(ctx, o, c)
	if err != nil {
		return res, err
	}
	bw, err := startBenchWatch(ctx, srv, c, ns, plan)
	if err != nil {
		return res, err
	}
	defer bw.stop()
	ready, pods := bw.ready, bw.pods

	mgrs := 0
	var mgr *manager
	start := func() error {
		m, err := startManager(ctx, o.managerBin, srv.managerKC, ns, filepath.Join(dir, fmt.Sprintf("manager-%d.log", mgrs)), o.managerArgs, managerEnv)
		if err != nil {
			return err
		}
		mgrs++
		mgr = m
		addPids(o.pidfile, m.pid())
		return nil
	}
	if err := start(); err != nil {
		return res, err
	}
	defer func() { mgr.stop() }()
	rss := sampleRSS(mgr.pid(), 250*time.Millisecond)
	// Idle: started, caches synced (ready), no object of its kinds yet.
	if err := sleep(ctx, idleWait); err != nil {
		return res, err
	}
	if res.Idle, err = mgr.stats(); err != nil {
		return res, err
	}
	logf("N=%d: manager idle: RSS %.1f MiB (anon %.1f, files %.1f), peak %.1f MiB", n, res.Idle.RSSMiB,
		res.Idle.AnonMiB, res.Idle.FileMiB, res.Idle.PeakRSSMiB)
	if res.IdleLiveHeapMiB, err = mgr.liveHeap(); err != nil {
		return res, err
	}

	// Convergence.
	var profWG sync.WaitGroup
	if n == o.profileSize && o.profileSeconds > 0 {
		profWG.Add(1)
		go func() {
			defer profWG.Done()
			top, err := mgr.profile(fmt.Sprintf("profile?seconds=%d", o.profileSeconds), dir, "cpu", o.managerBin)
			if err != nil {
				res.Errors = append(res.Errors, "cpu profile: "+err.Error())
			}
			res.CPUProfileTop = top
		}()
	}
	serverProfile := profileServer(ctx, o, n, srv, dir, "apiserver-cpu")
	x, err := converge(ctx, o, srv, c, plan, ns, mgr.pid(), ready, "", true)
	if err != nil {
		return res, err
	}
	res.WatchersClosed = x.watchersClosed
	t0, t1 := x.start, x.end
	res.CreateSeconds, res.ConvergenceSeconds, res.EtcdReads = x.createSeconds, x.seconds(), x.etcdReads
	res.ServerCPUSeconds, res.OwnCPUSeconds, res.BenchCPUSeconds = x.server, x.own, x.bench
	if res.LowerBoundBest > 0 {
		res.Ratio = res.ConvergenceSeconds / res.LowerBoundBest
	}
	if res.DesignBoundBest > 0 {
		res.DesignRatio = res.ConvergenceSeconds / res.DesignBoundBest
	}
	res.AvailableSeconds, res.SteadyRate = completions(x.seen)
	res.ToAvailable = percentiles(ready.toAvailable())
	logf("N=%d: converged in %.2f s (lower bound %.2f s); API server and etcd CPU %.1f s", n, res.ConvergenceSeconds,
		res.LowerBoundBest, res.ServerCPUSeconds)

	// At rest, the manager running: first it finishes what it queued (Events are sent in the background),
	// then nothing should happen.
	tail := &auditTail{path: srv.auditLog, user: managerUser}
	lastWrite, err := tail.waitIdle(ctx, t1, o.settle, o.timeout)
	if err != nil {
		return res, fmt.Errorf("waiting for the manager to finish its writes: %w", err)
	}
	res.TrailingSeconds = lastWrite.Sub(t1).Seconds()
	restStart := time.Now()
	logf("N=%d: last write %.1f s after convergence; at rest for %v", n, res.TrailingSeconds, o.quiet)
	if err := sleep(ctx, o.quiet); err != nil {
		return res, err
	}
	restEnd := time.Now()
	res.RSS = rss.stop(t0)
	profWG.Wait()
	if res.ServerProfileTop, err = serverProfile(); err != nil {
		res.Errors = append(res.Errors, err.Error())
	}
	if res.AfterConvergence, err = mgr.stats(); err != nil {
		return res, err
	}
	logf("N=%d: after convergence: peak RSS %.1f MiB (now %.1f: anon %.1f, files %.1f), Go %v", n,
		res.AfterConvergence.PeakRSSMiB, res.AfterConvergence.RSSMiB, res.AfterConvergence.AnonMiB,
		res.AfterConvergence.FileMiB, res.AfterConvergence.GoMiB)
	if n == o.profileSize {
		// gc=1: the profile shows what is live now, not what was live at the last collection (an idle Go
		// program does not collect).
		top, err := mgr.profile("heap?gc=1", dir, "heap", o.managerBin)
		if err != nil {
			res.Errors = append(res.Errors, "heap profile: "+err.Error())
		}
		res.HeapProfileTop = top
	}
	// The live heap: memory statistics right after a forced collection.
	if res.LiveHeapMiB, err = mgr.liveHeap(); err != nil {
		return res, err
	}
	logf("N=%d: live heap after a forced GC: %.1f MiB (idle %.1f)", n, res.LiveHeapMiB, res.IdleLiveHeapMiB)

	// At: N Ats due at the same second.
	rate := float64(plan.Objects()) / res.CreateSeconds
	lead := time.Duration(float64(n)/rate*1.5*float64(time.Second)) + 3*time.Second
	when := time.Now().Add(lead).Truncate(time.Second).Add(time.Second).UTC()
	schedule := when.Format(cnatv1alpha1.ScheduleLayout)
	at := &AtResult{N: n, Schedule: schedule}
	for _, r := range res.LowerBound {
		if r.Workers == res.LowerBoundW && r.Requests > 0 {
			at.FloorSeconds = float64(n) / (float64(r.Requests) / r.Seconds)
		}
	}
	res.At = at
	atCounts := srv.markCounts(ctx)
	atStart := time.Now()
	pods.reset(when, n)
	logf("N=%d: creating %d Ats due at %s", n, n, schedule)
	if err := parallel(ctx, n, 16, func(ctx context.Context, i int) error {
		return c.Create(ctx, benchutil.At(ns, i, schedule))
	}); err != nil {
		return res, fmt.Errorf("creating Ats: %w", err)
	}
	at.LeadSeconds = time.Until(when).Seconds()
	_, _, podsDone := pods.snapshot()
	if err := waitFor(ctx, podsDone, time.Until(when)+o.timeout, func() string {
		s, _, _ := pods.snapshot()
		return fmt.Sprintf("%d of %d At pods", len(s), n)
	}); err != nil {
		return res, fmt.Errorf("At pods: %w", err)
	}
	podTimes, _, _ := pods.snapshot()
	var watchDelays []float64
	for _, d := range podTimes {
		watchDelays = append(watchDelays, d.Seconds())
	}
	at.WatchP99Seconds = benchutil.Percentile(watchDelays, 99)
	// The Upgradeable gate: False, held by every At pod once the bench's kubelet runs them all (its message
	// follows the holders at most every 10 s, so wait for it before the manager counts as idle).
	gate := &GateResult{}
	if !o.noGate {
		at.Upgradeable = gate
		if err := waitGate(ctx, c, client.ObjectKeyFromObject(oc), n, gate, o.timeout); err != nil {
			return res, fmt.Errorf("At: Upgradeable gate: %w (%d At pods marked running)", err, bw.runningPods.Load())
		}
	}
	gate.RunningPods = int(bw.runningPods.Load())
	if _, err := tail.waitIdle(ctx, time.Now(), o.settle, o.timeout); err != nil {
		return res, fmt.Errorf("At: %w", err)
	}
	atEnd := time.Now()
	if res.AfterAt, err = mgr.stats(); err != nil {
		return res, err
	}
	at.WatchersClosed = atCounts().watchersClosed
	logf("N=%d: At pods all created; peak RSS %.1f MiB, CPU %.1f s", n, res.AfterAt.PeakRSSMiB, res.AfterAt.CPUSeconds)

	// Restarts: each new manager lists everything and reconciles every object once more.
	type window struct{ from, to time.Time }
	var restartWindows []window
	for r := range o.restarts {
		mgr.stop()
		from := time.Now()
		if err := start(); err != nil {
			return res, err
		}
		want := map[string]float64{"myweb": float64(plan.MyWebs), "appservice": float64(plan.AppServices), "at": float64(n)}
		if err := waitReconciled(ctx, mgr, want, o.timeout); err != nil {
			return res, fmt.Errorf("restart %d: %w", r+1, err)
		}
		if err := sleep(ctx, o.settle); err != nil {
			return res, err
		}
		restartWindows = append(restartWindows, window{from, time.Now()})
		logf("N=%d: restart %d reconciled everything in %.1f s", n, r+1, time.Since(from).Seconds()-o.settle.Seconds())
	}
	if res.AfterRestart, err = mgr.stats(); err != nil {
		return res, err
	}
	if res.LiveHeapAfterRestartMiB, err = mgr.liveHeap(); err != nil {
		return res, err
	}
	logf("N=%d: after the last restart: peak RSS %.1f MiB (start-up, the initial lists included), RSS %.1f MiB, "+
		"live heap after a forced GC %.1f MiB", n, res.AfterRestart.PeakRSSMiB, res.AfterRestart.RSSMiB,
		res.LiveHeapAfterRestartMiB)
	mgr.stop()

	// The API server's view.
	time.Sleep(time.Second) // the audit log is written as responses complete
	events, err := readAudit(srv.auditLog)
	if err != nil {
		return res, err
	}
	settled := t1.Add(o.settle)
	res.CreationWrites = writes(events, benchutil.Filter{User: managerUser, From: t0, To: settled})
	res.TrailingWrites = writes(events, benchutil.Filter{User: managerUser, From: settled, To: restStart})
	res.PerObject = float64(res.CreationWrites.Total) / float64(plan.Objects())
	res.PerKind = map[string]float64{}
	for _, e := range benchutil.Select(events, benchutil.Filter{User: managerUser, From: t0, To: settled}, nil) {
		switch {
		case strings.HasPrefix(e.Name(), "web-"):
			res.PerKind["MyWeb"] += 1 / float64(plan.MyWebs)
		case strings.HasPrefix(e.Name(), "app-"):
			res.PerKind["AppService"] += 1 / float64(plan.AppServices)
		default:
			res.PerKind["unattributed"] += 1 / float64(plan.Objects())
		}
	}
	status := 0
	for k, v := range res.CreationWrites.ByKey {
		if strings.HasSuffix(k, "mywebs/status") || strings.HasSuffix(k, "appservices/status") {
			status += v
		}
	}
	res.StatusWritesPer = float64(status) / float64(plan.Objects())
	res.BenchWrites = benchutil.CountWrites(events, benchutil.Filter{User: benchUser, From: t0, To: settled})
	res.AtRest = writes(events, benchutil.Filter{User: managerUser, From: restStart, To: restEnd})
	at.Writes = writes(events, benchutil.Filter{User: managerUser, From: atStart, To: atEnd})
	gate.Writes = at.Writes.ByKey["update operatorconditions"]
	for _, w := range restartWindows {
		res.Restarts = append(res.Restarts, writes(events, benchutil.Filter{User: managerUser, From: w.from, To: w.to}))
	}
	var delays []float64
	for _, e := range benchutil.Select(events, benchutil.Filter{User: managerUser, From: atStart, To: atEnd},
		func(e *benchutil.AuditEvent) bool { return e.Key() == "create pods" && e.Code() == 201 }) {
		delays = append(delays, e.RequestReceived.Sub(when).Seconds())
	}
	at.Pods = len(delays)
	at.P50Seconds, at.P99Seconds, at.MaxSeconds = benchutil.Percentile(delays, 50), benchutil.Percentile(delays, 99), benchutil.Max(delays)
	logf("N=%d: writes/object at creation %.2f (%s); at rest %d; restarts %v; At p50 %.3f p99 %.3f max %.3f s; "+
		"Upgradeable=%s (%s) with %d pods running, %d OperatorCondition writes",
		n, res.PerObject, benchutil.FormatCounts(res.CreationWrites.ByKey, plan.Objects()), res.AtRest.Total,
		totals(res.Restarts), at.P50Seconds, at.P99Seconds, at.MaxSeconds, gate.Status, gate.Message, gate.RunningPods, gate.Writes)
	return res, nil
}

// managerNamespace creates the manager's namespace on a fresh server and, as OLM does, an OperatorCondition in
// it, named in OPERATOR_CONDITION_NAME, so that the At controller's Upgradeable gate runs as it does under OLM
// (-no-upgradeable-gate leaves it out, as outside OLM). It returns the OperatorCondition and the manager's
// environment.
func managerNamespace(ctx context.Context, o options, c client.Client) (*apiv2.OperatorCondition, []string, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}); err != nil {
		return nil, nil, err
	}
	oc := &apiv2.OperatorCondition{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: benchutil.OperatorConditionName}}
	env := append([]string(nil), o.managerEnv...)
	if !o.noGate {
		if err := c.Create(ctx, oc); err != nil {
			return nil, nil, fmt.Errorf("creating the OperatorCondition: %w", err)
		}
		env = append(env, "OPERATOR_CONDITION_NAME="+oc.Name)
	}
	return oc, env, nil
}

// waitGate waits until the OperatorCondition's Upgradeable condition is False and counts all n Ats as
// holders, and records it in g.
func waitGate(ctx context.Context, c client.Client, key types.NamespacedName, n int, g *GateResult, timeout time.Duration) error {
	want := fmt.Sprintf("%d Ats are running a command", n)
	if n == 1 {
		want = "is running a command"
	}
	deadline := time.Now().Add(timeout)
	for {
		oc := &apiv2.OperatorCondition{}
		if err := c.Get(ctx, key, oc); err != nil {
			return err
		}
		if cond := meta.FindStatusCondition(oc.Spec.Conditions, apiv2.Upgradeable); cond != nil {
			g.Status, g.Reason, g.Message = string(cond.Status), cond.Reason, cond.Message
			if cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, want) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not False with %q within %v: %s %s", want, timeout, g.Status, g.Message)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

func totals(ws []Writes) []int {
	out := make([]int, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.Total)
	}
	return out
}

func writes(events []benchutil.AuditEvent, f benchutil.Filter) Writes {
	by := benchutil.CountWrites(events, f)
	return Writes{Seconds: f.To.Sub(f.From).Seconds(), Total: benchutil.Total(by), ByKey: by}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// waitFor waits for done, logging progress every 10 seconds.
func waitFor(ctx context.Context, done <-chan struct{}, timeout time.Duration, progress func() string) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return fmt.Errorf("timed out after %v: %s", timeout, progress())
		case <-tick.C:
			logf("%s", progress())
		}
	}
}

// waitReconciled waits until each controller has reconciled at least want[controller] times and every work
// queue is empty.
func waitReconciled(ctx context.Context, m *manager, want map[string]float64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		b, err := httpGet("http://"+m.metrics+"/metrics", 10*time.Second)
		if err == nil {
			text := string(b)
			got := benchutil.MetricSum(text, "controller_runtime_reconcile_total", "controller")
			depth := benchutil.MetricSum(text, "workqueue_depth", "name")
			ok := true
			for c, w := range want {
				if got[c] < w {
					ok = false
				}
			}
			for _, d := range depth {
				if d > 0 {
					ok = false
				}
			}
			if ok {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("not reconciled within %v: %v, queues %v", timeout, got, depth)
			}
		} else if time.Now().After(deadline) {
			return err
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// runLowerBound runs the lower-bound program once (with design: its -design, the design's lower bound).
func runLowerBound(ctx context.Context, bin, kubeconfig, ns string, n, workers int, design bool) (LowerBoundRun, error) {
	var r LowerBoundRun
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-kubeconfig", kubeconfig, "-namespace", ns, "-n", fmt.Sprint(n),
		"-workers", fmt.Sprint(workers), fmt.Sprintf("-design=%t", design))
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil {
		return r, fmt.Errorf("lower bound (%d workers): %w: %s", workers, err, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return r, fmt.Errorf("lower bound output %q: %w", out.String(), err)
	}
	r.ToAvailableP = percentiles(r.ToAvailable)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.PeakRSSMiB = float64(ru.Maxrss) / 1024 // KiB on Linux
		r.ClientCPUSeconds = time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime)).Seconds()
	}
	return r, nil
}

// readAudit parses the audit log and any rotated parts of it (audit-<time>.log next to it).
func readAudit(path string) ([]benchutil.AuditEvent, error) {
	rotated, _ := filepath.Glob(strings.TrimSuffix(path, ".log") + "-*.log")
	var all []benchutil.AuditEvent
	for _, p := range append(rotated, path) {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		events, err := benchutil.ParseAudit(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		all = append(all, events...)
	}
	return all, nil
}

// idleWait is how long a freshly started manager (or peer) runs before its idle memory is read.
const idleWait = 5 * time.Second

// completions turns a tracker's first-seen offsets into ascending seconds and the steady rate.
func completions(seen map[string]time.Duration) ([]float64, float64) {
	times := make([]time.Duration, 0, len(seen))
	secs := make([]float64, 0, len(seen))
	for _, d := range seen {
		times = append(times, d)
		secs = append(secs, d.Seconds())
	}
	sort.Float64s(secs)
	return secs, benchutil.SteadyRate(times)
}

// watchLowerBound watches a lower bound's namespace for the kinds the bench watches in the peer's and the
// manager's (-watch-lowerbound): with it, the lower bound's writes are sent to one watcher, as every write to
// the peer's and the manager's objects is sent to the bench's; the difference is what that watch costs.
func watchLowerBound(ctx context.Context, srv *apiServer, ns string) (func(), error) {
	cache, err := ctrlcache.New(srv.config, ctrlcache.Options{Scheme: srv.scheme,
		DefaultNamespaces: map[string]ctrlcache.Config{ns: {}}})
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	for _, obj := range []client.Object{&operatorv1.MyWeb{}, &appv1.AppService{}, &appsv1.Deployment{}, &corev1.Pod{}} {
		if _, err := cache.GetInformer(cctx, obj); err != nil {
			cancel()
			return nil, err
		}
	}
	go func() { _ = cache.Start(cctx) }()
	if !cache.WaitForCacheSync(cctx) {
		cancel()
		return nil, errors.New("the lower bound's watch did not sync")
	}
	return cancel, nil
}

// boundNamespace is the namespace (and the name of the server's folder) of a lower bound's run.
func boundNamespace(design bool, workers int) string {
	if design {
		return fmt.Sprintf("designbound-%d", workers)
	}
	return fmt.Sprintf("lowerbound-%d", workers)
}

// runLowerBoundOnServer runs the lower bound once in ns, on an API server of its own started in dir.
func runLowerBoundOnServer(ctx context.Context, o options, n, workers int, design bool, ns, dir string) (LowerBoundRun, error) {
	srv, c, err := startServer(o, dir)
	if err != nil {
		return LowerBoundRun{}, err
	}
	defer srv.stop()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return LowerBoundRun{}, err
	}
	if o.watchLower {
		stop, err := watchLowerBound(ctx, srv, ns)
		if err != nil {
			return LowerBoundRun{}, err
		}
		defer stop()
	}
	cpu0, counts := srv.cpuSeconds(), srv.markCounts(ctx)
	r, err := runLowerBound(ctx, o.lowerboundBin, srv.lowerKC, ns, n, workers, design)
	if err != nil {
		return r, err
	}
	r.ServerCPUSeconds, r.EtcdReads = srv.cpuSeconds()-cpu0, counts().etcdReads
	return r, nil
}

// runPeerOnServer runs the peer (runPeer) on an API server of its own, with the bench's watch and stand-in
// kubelet beside it.
func runPeerOnServer(ctx context.Context, o options, plan benchutil.Plan, dir string) (*Contender, error) {
	srv, c, err := startServer(o, filepath.Join(dir, "server-peer"))
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: peerNamespace}}); err != nil {
		return nil, err
	}
	bw, err := startBenchWatch(ctx, srv, c, peerNamespace, plan)
	if err != nil {
		return nil, err
	}
	defer bw.stop()
	return runPeer(ctx, o, srv, c, plan, bw.ready, dir)
}

// benchWatch is what the bench runs beside a contender, on its API server: a cache of the contender's
// namespace that tells ready when each MyWeb and AppService is Available and pods when each pod appears, and
// the stand-in kubelets that make every Deployment available and every At pod run.
type benchWatch struct {
	ready, pods *tracker
	runningPods atomic.Int64
	stop        func()
}

func startBenchWatch(ctx context.Context, srv *apiServer, c client.Client, ns string, plan benchutil.Plan) (*benchWatch, error) {
	bw := &benchWatch{ready: newTracker(plan.Objects()), pods: newTracker(plan.N)}
	cctx, cancel := context.WithCancel(ctx)
	queue := workqueue.NewTyped[types.NamespacedName]()
	podQueue := workqueue.NewTyped[types.NamespacedName]()
	bw.stop = func() {
		cancel()
		queue.ShutDown()
		podQueue.ShutDown()
	}
	cache, err := ctrlcache.New(srv.config, ctrlcache.Options{Scheme: srv.scheme,
		DefaultNamespaces: map[string]ctrlcache.Config{ns: {}}})
	if err != nil {
		bw.stop()
		return nil, err
	}
	for obj, f := range map[client.Object]func(any){
		&operatorv1.MyWeb{}: func(obj any) {
			if w, ok := obj.(*operatorv1.MyWeb); ok && available(w.Status.Conditions, w.Generation, w.Status.ObservedGeneration) {
				bw.ready.mark("web/" + w.Name)
			}
		},
		&appv1.AppService{}: func(obj any) {
			if a, ok := obj.(*appv1.AppService); ok && available(a.Status.Conditions, a.Generation, a.Status.ObservedGeneration) {
				bw.ready.mark("app/" + a.Name)
			}
		},
		&appsv1.Deployment{}: func(obj any) {
			if d, ok := obj.(*appsv1.Deployment); ok && !benchutil.DeploymentAvailable(d) {
				queue.Add(types.NamespacedName{Namespace: d.Namespace, Name: d.Name})
			}
		},
		&corev1.Pod{}: func(obj any) {
			if p, ok := obj.(*corev1.Pod); ok {
				bw.pods.mark(p.Name)
				if benchutil.AtPodWaiting(p) {
					podQueue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
				}
			}
		},
	} {
		inf, err := cache.GetInformer(cctx, obj)
		if err != nil {
			bw.stop()
			return nil, err
		}
		if _, err := inf.AddEventHandler(handler(f)); err != nil {
			bw.stop()
			return nil, err
		}
	}
	go func() { _ = cache.Start(cctx) }()
	if !cache.WaitForCacheSync(cctx) {
		bw.stop()
		return nil, errors.New("the bench's cache did not sync")
	}
	// The stand-in kubelet: every Deployment the contender creates becomes available.
	for range 8 {
		go func() {
			for {
				key, shutdown := queue.Get()
				if shutdown {
					return
				}
				dep := &appsv1.Deployment{}
				if err := cache.Get(cctx, key, dep); err == nil && !benchutil.DeploymentAvailable(dep) {
					patch := client.RawPatch(types.MergePatchType, benchutil.AvailableStatusPatch(dep, metav1.Now()))
					if err := c.Status().Patch(cctx, dep, patch); err != nil && cctx.Err() == nil {
						logf("marking deployment %s available: %v (retrying)", key.Name, err)
						time.AfterFunc(200*time.Millisecond, func() { queue.Add(key) })
					}
				}
				queue.Done(key)
			}
		}()
	}
	// The stand-in kubelet of the Ats: every At pod starts running (and so holds the Upgradeable gate).
	for range 8 {
		go func() {
			for {
				key, shutdown := podQueue.Get()
				if shutdown {
					return
				}
				pod := &corev1.Pod{}
				if err := cache.Get(cctx, key, pod); err == nil && benchutil.AtPodWaiting(pod) {
					patch := client.RawPatch(types.MergePatchType, benchutil.RunningStatusPatch(pod, metav1.Now()))
					if err := c.Status().Patch(cctx, pod, patch); err != nil && cctx.Err() == nil {
						logf("marking pod %s running: %v (retrying)", key.Name, err)
						time.AfterFunc(200*time.Millisecond, func() { podQueue.Add(key) })
					} else if err == nil {
						bw.runningPods.Add(1)
					}
				}
				podQueue.Done(key)
			}
		}()
	}
	return bw, nil
}

// profileServer starts, at -profile-size, a CPU profile of kube-apiserver of -profile-seconds, saved in dir
// as name; the function it returns waits for it and gives its top entries.
func profileServer(ctx context.Context, o options, n int, srv *apiServer, dir, name string) func() (string, error) {
	if n != o.profileSize || o.profileSeconds <= 0 {
		return func() (string, error) { return "", nil }
	}
	var top string
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		top, err = srv.profile(ctx, o.profileSeconds, dir, name, o.assets)
	}()
	return func() (string, error) {
		<-done
		return top, err
	}
}

// runPeer runs the peer contender (test/bench/cmd/peer) on the objects of plan in peerNamespace: convergence,
// its writes at creation and at rest, its memory; then stops it.
func runPeer(ctx context.Context, o options, srv *apiServer, c client.Client, plan benchutil.Plan, ready *tracker,
	dir string) (*Contender, error) {
	n := plan.N
	res := &Contender{Name: "peer"}
	m, err := startManager(ctx, o.peerBin, srv.peerKC, peerNamespace, filepath.Join(dir, "peer.log"), nil, nil)
	if err != nil {
		return nil, err
	}
	addPids(o.pidfile, m.pid())
	defer m.stop()
	rss := sampleRSS(m.pid(), 250*time.Millisecond)
	if err := sleep(ctx, idleWait); err != nil {
		return res, err
	}
	if res.Idle, err = m.stats(); err != nil {
		return res, err
	}
	serverProfile := profileServer(ctx, o, n, srv, dir, "apiserver-cpu-peer")
	x, err := converge(ctx, o, srv, c, plan, peerNamespace, m.pid(), ready, "peer: ", true)
	if err != nil {
		return res, err
	}
	t0, t1 := x.start, x.end
	res.ConvergenceSeconds, res.EtcdReads = x.seconds(), x.etcdReads
	res.ServerCPUSeconds, res.OwnCPUSeconds, res.BenchCPUSeconds = x.server, x.own, x.bench
	res.AvailableSeconds, res.SteadyRate = completions(x.seen)
	res.ToAvailable = percentiles(ready.toAvailable())
	if res.ServerProfileTop, err = serverProfile(); err != nil {
		logf("N=%d: peer: %v", n, err)
	}
	logf("N=%d: peer converged in %.2f s; API server and etcd CPU %.1f s", n, res.ConvergenceSeconds, res.ServerCPUSeconds)

	// Its queued writes, then the at-rest window. A controller that never stops writing is given two minutes.
	tail := &auditTail{path: srv.auditLog, user: peerUser}
	if _, err := tail.waitIdle(ctx, t1, o.settle, 2*time.Minute); err != nil {
		if ctx.Err() != nil {
			return res, err
		}
		res.StillWriting = true
		logf("N=%d: peer: %v", n, err)
	}
	restStart := time.Now()
	if err := sleep(ctx, o.quiet); err != nil {
		return res, err
	}
	restEnd := time.Now()
	if res.AfterConvergence, err = m.stats(); err != nil {
		return res, err
	}
	res.RSS = rss.stop(t0)
	m.stop()
	logf("N=%d: peer: peak RSS %.1f MiB (idle %.1f)", n, res.AfterConvergence.PeakRSSMiB, res.Idle.RSSMiB)

	time.Sleep(time.Second) // the audit log is written as responses complete
	events, err := readAudit(srv.auditLog)
	if err != nil {
		return res, err
	}
	settled := t1.Add(o.settle)
	res.CreationWrites = writes(events, benchutil.Filter{User: peerUser, From: t0, To: settled})
	res.TrailingWrites = writes(events, benchutil.Filter{User: peerUser, From: settled, To: restStart})
	res.AtRest = writes(events, benchutil.Filter{User: peerUser, From: restStart, To: restEnd})
	res.PerObject = float64(res.CreationWrites.Total) / float64(plan.Objects())
	status := 0
	for k, v := range res.CreationWrites.ByKey {
		if strings.HasSuffix(k, "mywebs/status") || strings.HasSuffix(k, "appservices/status") {
			status += v
		}
	}
	res.StatusWritesPer = float64(status) / float64(plan.Objects())
	res.BenchWrites = benchutil.CountWrites(events, benchutil.Filter{User: benchUser, From: t0, To: settled})
	logf("N=%d: peer: writes/object at creation %.2f (%s); after: %d; at rest %d", n, res.PerObject,
		benchutil.FormatCounts(res.CreationWrites.ByKey, plan.Objects()), res.TrailingWrites.Total, res.AtRest.Total)
	return res, nil
}
