/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"fmt"
	"strings"

	"github.com/operator101/operator101/test/bench/benchutil"
)

// Goal is one of the bench's goals (docs/performance.md "Targets and measurements") at one size: met or
// not, with what was measured and, when not met, the measured reason.
type Goal struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
	Why      string `json:"why,omitempty"`
}

// peakRSSGoalMiB is the converged peak RSS goal by size; sizes not listed have none.
var peakRSSGoalMiB = map[int]float64{1000: 80, 3000: 140}

// cpuPerObjectMs is the CPU a contender spent from idle to the end of the at-rest window, per object.
func cpuPerObjectMs(idle, after procStats, objects int) float64 {
	return msPerObject(after.CPUSeconds-idle.CPUSeconds, objects)
}

// msPerObject is CPU seconds as milliseconds per object.
func msPerObject(seconds float64, objects int) float64 {
	return seconds * 1000 / float64(max(objects, 1))
}

// bound is one of the two lower bounds of a size: its runs, and the worker count of the best one.
type bound struct {
	name    string
	runs    []LowerBoundRun
	workers int
}

// bounds are the lower bound and the design's lower bound of the size.
func (s SizeResult) bounds() []bound {
	return []bound{{"lower bound", s.LowerBound, s.LowerBoundW}, {"design's lower bound", s.DesignBound, s.DesignBoundW}}
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
	lb, db := s.LowerBoundBest, s.DesignBoundBest
	designCost := fmt.Sprintf("the design's lower bound (%.1f requests per object against %.1f: the read past the "+
		"cache, the Event) takes %.1f s, %.2f× the plain one's %.1f s",
		requestsPerObject(s.DesignBound, s.DesignBoundW), requestsPerObject(s.LowerBound, s.LowerBoundW), db, db/lb, lb)
	// What each contender cost the API server and etcd, which share the machine's cores with it.
	server := msPerObject(s.ServerCPUSeconds, objects)
	serverLB := msPerObject(bestRun(s.LowerBound, s.LowerBoundW).ServerCPUSeconds, objects)
	serverDB := msPerObject(bestRun(s.DesignBound, s.DesignBoundW).ServerCPUSeconds, objects)
	if p := s.Peer; p != nil {
		measured := fmt.Sprintf("%.1f s against %.1f s", s.ConvergenceSeconds, p.ConvergenceSeconds)
		if mine, theirs := roundsText(s.Rounds), roundsText(p.Rounds); mine != "" && theirs != "" {
			measured += fmt.Sprintf(" (means of %d and %d rounds: %s against %s)", len(s.Rounds), len(p.Rounds), mine, theirs)
		}
		add("converges faster than the peer", measured,
			s.ConvergenceSeconds < p.ConvergenceSeconds,
			fmt.Sprintf("the API server and etcd spent %.1f ms of CPU per object for operator101 against %.1f for the peer "+
				"(%.0f and %.0f CPU-seconds in %.1f and %.1f s); the peer makes %.2f own writes per object and no reads "+
				"past its cache, no Event", server, msPerObject(p.ServerCPUSeconds, objects), s.ServerCPUSeconds,
				p.ServerCPUSeconds, s.ConvergenceSeconds, p.ConvergenceSeconds, p.PerObject))
		mgr := cpuPerObjectMs(s.Idle, s.AfterConvergence, objects)
		peer := cpuPerObjectMs(p.Idle, p.AfterConvergence, objects)
		add("manager CPU per object at or below the peer's", fmt.Sprintf("%.2f ms against %.2f ms", mgr, peer), mgr <= peer,
			"see the CPU profile of the run (cpu.txt)")
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
		zero, "see the audit log of the run")
	if g, ok := peakRSSGoalMiB[s.Plan.N]; ok {
		add(fmt.Sprintf("peak RSS at or under %.0f MiB (converged)", g), fmt.Sprintf("%.1f MiB (with the Ats %.1f)",
			s.AfterConvergence.PeakRSSMiB, s.AfterAt.PeakRSSMiB), s.AfterConvergence.PeakRSSMiB <= g,
			memoryWhy(s))
	}
	return out
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
