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

// Goal is one of the bench's goals (docs/contributing/performance.md "Targets and measurements") at one size: met or
// not, with what was measured and, when not met, the measured reason.
type Goal struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
	Why      string `json:"why,omitempty"`
}

// peakRSSGoalMiB is the converged peak RSS goal by size; sizes not listed have none.
var peakRSSGoalMiB = map[int]float64{1000: 80, 3000: 140}

// The live heap's goal: it grows by at most liveHeapPerPairGoalKiB per MyWeb and AppService pair with their
// children, half the 18.6 KiB of the manager of 2026-11-27 (dd064df: 23.7 MiB at rest at N=1000, 60.9 at
// N=3000), checked from liveHeapGoalMinN pairs up. Measured as that figure was: from the run's smaller size when
// it has one, so that what the manager holds for no object in particular counts for neither; from the idle
// manager otherwise.
const (
	liveHeapPerPairGoalKiB = 9.3
	liveHeapGoalMinN       = 3000
)

// HeapPoint is the live heap at rest of a size, or of the idle manager (N=0).
type HeapPoint struct {
	N           int     `json:"n"`
	LiveHeapMiB float64 `json:"liveHeapMiB"`
}

// heapBase is what the live heap at a size grows from: the largest smaller size of the run, of the same plan,
// whose live heap was read, or else the idle manager's.
func heapBase(s SizeResult, before []SizeResult) HeapPoint {
	base := HeapPoint{LiveHeapMiB: s.IdleLiveHeapMiB}
	for _, b := range before {
		if b.LiveHeapMiB > 0 && b.Plan.N < s.Plan.N && b.Plan.N > base.N &&
			b.Plan.Routes == s.Plan.Routes && b.Plan.PageBytes == s.Plan.PageBytes {
			base = HeapPoint{N: b.Plan.N, LiveHeapMiB: b.LiveHeapMiB}
		}
	}
	return base
}

// liveHeapPerPairKiB is what the live heap at rest grew by from HeapBase, per MyWeb and AppService pair; 0
// when either was not read.
func (s SizeResult) liveHeapPerPairKiB() float64 {
	if s.LiveHeapMiB <= 0 || s.HeapBase.LiveHeapMiB <= 0 || s.Plan.N <= s.HeapBase.N {
		return 0
	}
	return (s.LiveHeapMiB - s.HeapBase.LiveHeapMiB) * 1024 / float64(s.Plan.N-s.HeapBase.N)
}

// heapBaseText names HeapBase in a measured figure.
func (s SizeResult) heapBaseText() string {
	if s.HeapBase.N == 0 {
		return "idle"
	}
	return fmt.Sprintf("at N=%d", s.HeapBase.N)
}

// cpuPerObjectMs is the CPU a contender spent from idle to the end of the at-rest window, per object.
func cpuPerObjectMs(idle, after procStats, objects int) float64 {
	return msPerObject(after.CPUSeconds-idle.CPUSeconds, objects)
}

// msPerObject is CPU seconds as milliseconds per object.
func msPerObject(seconds float64, objects int) float64 {
	return seconds * 1000 / float64(max(objects, 1))
}

// bound is one of the two lower bounds of a size: its runs, the worker count of the best one, and its rounds
// at that worker count (round 1: the best run).
type bound struct {
	name    string
	runs    []LowerBoundRun
	workers int
	rounds  []Round
}

// bounds are the lower bound and the design's lower bound of the size.
func (s SizeResult) bounds() []bound {
	return []bound{{"lower bound", s.LowerBound, s.LowerBoundW, s.LowerBoundRounds},
		{"design's lower bound", s.DesignBound, s.DesignBoundW, s.DesignBoundRounds}}
}

// boundSeconds are the convergence of the lower bound and of the design's, as the ratios take them.
func (s SizeResult) boundSeconds() (lb, db float64) {
	b := s.bounds()
	return b[0].mean().ConvergenceSeconds, b[1].mean().ConvergenceSeconds
}

// mean is the bound's convergence and CPU: the means over its rounds, or its best run's without rounds (all
// zero when it did not run). Round 1's is the best of the worker counts, so the mean leans low, against
// operator101.
func (b bound) mean() Round {
	if len(b.rounds) > 0 {
		return meanRound(b.rounds)
	}
	return boundRound(bestRun(b.runs, b.workers), 1)
}

// boundRound is a lower bound's run as a round: its client's CPU as its own.
func boundRound(r LowerBoundRun, round int) Round {
	return Round{Round: round, ConvergenceSeconds: r.Seconds, ServerCPUSeconds: r.ServerCPUSeconds,
		OwnCPUSeconds: r.ClientCPUSeconds}
}

// requestsPerObject is a lower-bound run's requests per object.
func requestsPerObject(r []LowerBoundRun, workers int) float64 {
	for _, x := range r {
		if x.Workers == workers {
			return float64(x.Requests) / float64(max(x.Objects, 1))
		}
	}
	return 0
}

// bestRun is the run of r with the given workers.
func bestRun(r []LowerBoundRun, workers int) LowerBoundRun {
	for _, x := range r {
		if x.Workers == workers {
			return x
		}
	}
	return LowerBoundRun{}
}

// goals are the goals at this size, from what was measured. A goal whose inputs were not measured (a skipped
// contender) is left out.
func (s SizeResult) goals() []Goal {
	var out []Goal
	if s.ConvergenceSeconds <= 0 {
		return nil // the manager did not converge: nothing of it was measured
	}
	add := func(goal, measured string, met bool, why string) {
		g := Goal{Goal: goal, Measured: measured, Met: met}
		if !met {
			g.Why = why
		}
		out = append(out, g)
	}
	objects := s.Plan.Objects()
	lb, db := s.boundSeconds()
	designCost := fmt.Sprintf("the design's lower bound (%.1f requests per object against %.1f: the read past the "+
		"cache, the Event) takes %.1f s, %.2f× the plain one's %.1f s",
		requestsPerObject(s.DesignBound, s.DesignBoundW), requestsPerObject(s.LowerBound, s.LowerBoundW), db, db/lb, lb)
	// What each contender cost the API server and etcd, which share the machine's cores with it.
	bounds := s.bounds()
	server := msPerObject(s.ServerCPUSeconds, objects)
	serverLB := msPerObject(bounds[0].mean().ServerCPUSeconds, objects)
	serverDB := msPerObject(bounds[1].mean().ServerCPUSeconds, objects)
	if p := s.Peer; p != nil {
		measured := fmt.Sprintf("%.1f s against %.1f s", s.ConvergenceSeconds, p.ConvergenceSeconds)
		if mine, theirs := roundsText(s.Rounds), roundsText(p.Rounds); mine != "" && theirs != "" {
			measured += fmt.Sprintf(" (means of %d and %d rounds: %s against %s)", len(s.Rounds), len(p.Rounds), mine, theirs)
		}
		add("converges faster than the peer", measured,
			s.ConvergenceSeconds < p.ConvergenceSeconds,
			overlapText(s.Rounds, p.Rounds)+fmt.Sprintf("the API server and etcd spent %.1f ms of CPU per object for "+
				"operator101 against %.1f for the peer (%.0f and %.0f CPU-seconds in %.1f and %.1f s); the peer makes %.2f "+
				"own writes per object and no reads past its cache, no Event", server, msPerObject(p.ServerCPUSeconds, objects),
				s.ServerCPUSeconds, p.ServerCPUSeconds, s.ConvergenceSeconds, p.ConvergenceSeconds, p.PerObject))
		mgr := cpuPerObjectMs(s.Idle, s.AfterConvergence, objects)
		peer := cpuPerObjectMs(p.Idle, p.AfterConvergence, objects)
		add("manager CPU per object at or below the peer's", fmt.Sprintf("%.2f ms against %.2f ms", mgr, peer), mgr <= peer,
			cpuWhy(s, objects))
	}
	if lb > 0 && db > 0 {
		add("converges within 1.3× the lower bound", fmt.Sprintf("%.2f× (%.1f s against %.1f s)", s.Ratio, s.ConvergenceSeconds, lb),
			s.Ratio <= 1.3, fmt.Sprintf("%s; the API server and etcd spent %.1f ms of CPU per object for the lower bound, "+
				"%.1f for the design's, %.1f for operator101", designCost, serverLB, serverDB, server))
		add("converges within 1.1× the design's lower bound", fmt.Sprintf("%.2f× (%.1f s against %.1f s)", s.DesignRatio,
			s.ConvergenceSeconds, db), s.DesignRatio <= 1.1,
			fmt.Sprintf("the manager takes %.1f s more than the design's lower bound; the API server and etcd spent %.1f "+
				"ms of CPU per object for operator101 against %.1f for the design's lower bound", s.ConvergenceSeconds-db,
				server, serverDB))
		// From the first create, as the charts show it: the lower bound creates an object only when one of its
		// workers is free, so its time from an object's own create hides the wait in front of its workers.
		mine := benchutil.Percentile(s.AvailableSeconds, 50)
		lbp := benchutil.Percentile(bestRun(s.LowerBound, s.LowerBoundW).Done, 50)
		dbp := benchutil.Percentile(bestRun(s.DesignBound, s.DesignBoundW).Done, 50)
		add("p50 time to Available (from the first create) within 2× the lower bound's",
			fmt.Sprintf("%.1f s against %.1f s (%.2f×; design's lower bound %.1f s)", mine, lbp, mine/lbp, dbp), mine <= 2*lbp,
			fmt.Sprintf("the design's lower bound alone reaches its p50 at %.1f s, %.2f× the lower bound's", dbp, dbp/lbp))
	}
	if a := s.At; a != nil && a.FloorSeconds > 0 {
		add("At p99 within 1.5× the floor", fmt.Sprintf("%.2f s against a floor of %.2f s (%.2f×)", a.P99Seconds,
			a.FloorSeconds, a.P99Seconds/a.FloorSeconds), a.P99Seconds <= 1.5*a.FloorSeconds,
			fmt.Sprintf("a due At costs two requests before its pod exists (the GET that keeps the command exactly once, "+
				"then the POST): the design's floor is %.2f s", 2*a.FloorSeconds))
	}
	var restarts []string
	zero := s.AtRest.Total == 0
	for _, r := range s.Restarts {
		restarts = append(restarts, fmt.Sprint(r.Total))
		zero = zero && r.Total == 0
	}
	add("0 writes at rest and per restart", fmt.Sprintf("%d at rest; restarts: %s", s.AtRest.Total, strings.Join(restarts, ", ")),
		zero, writesWhy(s))
	if per := s.liveHeapPerPairKiB(); per > 0 && s.Plan.N >= liveHeapGoalMinN && !s.Plan.Routes && s.Plan.PageBytes == 0 {
		add(fmt.Sprintf("live heap at rest grows at most %.1f KiB per MyWeb and AppService pair", liveHeapPerPairGoalKiB),
			fmt.Sprintf("%.1f KiB ((%.1f MiB − %.1f MiB %s) / %d)", per, s.LiveHeapMiB, s.HeapBase.LiveHeapMiB,
				s.heapBaseText(), s.Plan.N-s.HeapBase.N),
			per <= liveHeapPerPairGoalKiB, "the heap profile at rest (heap.txt of the profiled size) says what holds it")
	}
	if g, ok := peakRSSGoalMiB[s.Plan.N]; ok {
		add(fmt.Sprintf("peak RSS at or under %.0f MiB (converged)", g), fmt.Sprintf("%.1f MiB (with the Ats %.1f)",
			s.AfterConvergence.PeakRSSMiB, s.AfterAt.PeakRSSMiB), s.AfterConvergence.PeakRSSMiB <= g,
			memoryWhy(s))
	}
	return out
}

// overlapText says, when both ran rounds and the spans of their rounds' convergence overlap, that the two are
// not told apart by this run: "the rounds overlap (operator101 81.7–101.0 s, the peer 89.0–89.2 s); ".
func overlapText(mine, peer []Round) string {
	if len(mine) < 2 || len(peer) < 2 {
		return ""
	}
	span := func(rounds []Round) (lo, hi float64) {
		lo, hi = rounds[0].ConvergenceSeconds, rounds[0].ConvergenceSeconds
		for _, r := range rounds[1:] {
			lo, hi = min(lo, r.ConvergenceSeconds), max(hi, r.ConvergenceSeconds)
		}
		return lo, hi
	}
	mlo, mhi := span(mine)
	plo, phi := span(peer)
	if mlo > phi || plo > mhi {
		return ""
	}
	return fmt.Sprintf("the rounds overlap (operator101 %.1f–%.1f s, the peer %.1f–%.1f s); ", mlo, mhi, plo, phi)
}

// cpuWhy splits round 1's CPU of the manager and of the peer, from idle to the end of the at-rest window, into
// the convergence and the rest (the wait before the first create, what the contender did after convergence).
func cpuWhy(s SizeResult, objects int) string {
	p := s.Peer
	split := func(idle, after procStats, rounds []Round) (conv, rest float64) {
		total := after.CPUSeconds - idle.CPUSeconds
		if len(rounds) > 0 {
			conv = rounds[0].OwnCPUSeconds
		}
		return msPerObject(conv, objects), msPerObject(total-conv, objects)
	}
	mc, mr := split(s.Idle, s.AfterConvergence, s.Rounds)
	pc, pr := split(p.Idle, p.AfterConvergence, p.Rounds)
	return fmt.Sprintf("in round 1 operator101 spent %.2f ms per object in the convergence against the peer's %.2f, "+
		"and %.2f against %.2f outside it (the peer made %d writes after its convergence)", mc, pc, mr, pr,
		p.TrailingWrites.Total)
}

// writesWhy names the manager's writes, by verb and resource, in each window that had any: the at-rest window
// and each restart.
func writesWhy(s SizeResult) string {
	var parts []string
	if s.AtRest.Total > 0 {
		parts = append(parts, "at rest: "+benchutil.FormatCounts(s.AtRest.ByKey, 0))
	}
	for i, r := range s.Restarts {
		if r.Total > 0 {
			parts = append(parts, fmt.Sprintf("restart %d: %s", i+1, benchutil.FormatCounts(r.ByKey, 0)))
		}
	}
	return strings.Join(parts, "; ")
}

// memoryWhy splits the manager's memory at the end of the at-rest window: mapped files (the binary), Go's
// heap in use against the live heap (the rest is garbage the collector lets grow up to GOGC percent above
// it), and what Go freed but has not yet returned to the kernel.
func memoryWhy(s SizeResult) string {
	a, g := s.AfterConvergence, s.AfterConvergence.GoMiB
	return fmt.Sprintf("at the end of the at-rest window: mapped files %.1f MiB, anonymous %.1f MiB; Go's heap in use "+
		"%.1f MiB against a live heap of %.1f MiB (after a forced GC), %.1f MiB freed and not yet returned to the "+
		"kernel", a.FileMiB, a.AnonMiB, g["HeapInuse"], s.LiveHeapMiB, g["HeapIdle"]-g["HeapReleased"])
}

// goalsMarkdown is the goals of every size as a table.
func goalsMarkdown(sizes []SizeResult) string {
	var b strings.Builder
	b.WriteString("| N | goal | measured | met? | why not |\n|---|---|---|---|---|\n")
	for _, s := range sizes {
		for _, g := range s.goals() {
			met := "**met**"
			if !g.Met {
				met = "**missed**"
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", s.Plan.N, g.Goal, g.Measured, met, g.Why)
		}
	}
	return b.String()
}
