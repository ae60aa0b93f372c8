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
	"strings"
	"testing"

	"github.com/operator101/operator101/test/bench/benchutil"
)

// TestGoals: each goal is met or missed by the figures it names, and a missed one says why.
func TestGoals(t *testing.T) {
	base := func() SizeResult {
		return SizeResult{
			Plan:       benchutil.PlanFor(1000),
			LowerBound: []LowerBoundRun{{Workers: 16, Objects: 2000, Requests: 11000, Seconds: 20, Done: []float64{5, 10, 15}}},
			DesignBound: []LowerBoundRun{{Workers: 16, Objects: 2000, Requests: 20000, Seconds: 25,
				Done: []float64{6, 12, 18}}},
			LowerBoundBest: 20, LowerBoundW: 16, DesignBoundBest: 25, DesignBoundW: 16,
			Peer: &Contender{ConvergenceSeconds: 30, Idle: procStats{CPUSeconds: 1}, AfterConvergence: procStats{CPUSeconds: 21}},
			Idle: procStats{CPUSeconds: 1}, AfterConvergence: procStats{CPUSeconds: 17, PeakRSSMiB: 70},
			ConvergenceSeconds: 25.5, Ratio: 25.5 / 20, DesignRatio: 25.5 / 25, AvailableSeconds: []float64{10, 19, 25.5},
			At:       &AtResult{P99Seconds: 2, FloorSeconds: 1.5},
			Restarts: []Writes{{Total: 0}, {Total: 0}},
		}
	}
	met := func(s SizeResult) map[string]Goal {
		out := map[string]Goal{}
		for _, g := range s.goals() {
			out[g.Goal] = g
		}
		return out
	}
	all := met(base())
	if len(all) != 8 {
		t.Fatalf("%d goals at N=1000, want 8: %v", len(all), all)
	}
	for name, g := range all {
		if !g.Met || g.Why != "" {
			t.Errorf("%s: %+v, want met with no reason", name, g)
		}
	}

	worse := base()
	worse.ConvergenceSeconds, worse.Ratio, worse.DesignRatio = 31, 31.0/20, 31.0/25
	worse.AfterConvergence.CPUSeconds = 22
	worse.AvailableSeconds = []float64{10, 21, 31}
	worse.At.P99Seconds = 2.3
	worse.Restarts[1] = Writes{Total: 1, ByKey: map[string]int{"patch mywebs/status": 1}}
	worse.AfterConvergence.PeakRSSMiB = 81
	for name, g := range met(worse) {
		if g.Met || g.Why == "" {
			t.Errorf("%s: %+v, want missed with a reason", name, g)
		}
	}
	if g := met(worse)["converges within 1.3× the lower bound"]; !strings.Contains(g.Why, "1.25×") {
		t.Errorf("the lower-bound goal's reason does not give the design's own ratio: %q", g.Why)
	}
	if g := met(worse)["0 writes at rest and per restart"]; g.Why != "restart 2: patch mywebs/status 1" {
		t.Errorf("the writes goal's reason does not name the writes of the window that had them: %q", g.Why)
	}
	// The API server's CPU per object, each contender's own, names what the server spent on whom.
	worse.ServerCPUSeconds, worse.Peer.ServerCPUSeconds = 40, 30
	worse.DesignBound[0].ServerCPUSeconds = 36
	if g := met(worse)["converges faster than the peer"]; !strings.Contains(g.Why, "20.0 ms of CPU per object for operator101 against 15.0 for the peer") {
		t.Errorf("the peer goal's reason does not give the API server's CPU per object: %q", g.Why)
	}
	if g := met(worse)["converges within 1.1× the design's lower bound"]; !strings.Contains(g.Why, "20.0 ms of CPU per object for operator101 against 18.0") {
		t.Errorf("the design goal's reason does not give the API server's CPU per object: %q", g.Why)
	}

	// Rounds whose spans overlap say so; the CPU's reason splits round 1 into the convergence and the rest.
	worse.Rounds = []Round{{Round: 1, ConvergenceSeconds: 33, OwnCPUSeconds: 12}, {Round: 2, ConvergenceSeconds: 29}}
	worse.Peer.Rounds = []Round{{Round: 1, ConvergenceSeconds: 29, OwnCPUSeconds: 16}, {Round: 2, ConvergenceSeconds: 31}}
	worse.Peer.TrailingWrites.Total = 27
	if g := met(worse)["converges faster than the peer"]; !strings.HasPrefix(g.Why,
		"the rounds overlap (operator101 29.0–33.0 s, the peer 29.0–31.0 s); ") {
		t.Errorf("the peer goal's reason does not say that the rounds overlap: %q", g.Why)
	}
	if g := met(worse)["manager CPU per object at or below the peer's"]; !strings.Contains(g.Why,
		"operator101 spent 6.00 ms per object in the convergence against the peer's 8.00, and 4.50 against 2.00 "+
			"outside it (the peer made 27 writes after its convergence)") {
		t.Errorf("the CPU goal's reason does not split round 1: %q", g.Why)
	}
	worse.Rounds[1].ConvergenceSeconds = 32
	if g := met(worse)["converges faster than the peer"]; strings.Contains(g.Why, "overlap") {
		t.Errorf("rounds 32–33 s against 29–31 s do not overlap, yet: %q", g.Why)
	}

	worse.AfterConvergence.FileMiB, worse.AfterConvergence.AnonMiB, worse.LiveHeapMiB = 29, 50, 24
	worse.AfterConvergence.GoMiB = map[string]float64{"HeapInuse": 35, "HeapIdle": 9, "HeapReleased": 4}
	if g := met(worse)["peak RSS at or under 80 MiB (converged)"]; !strings.Contains(g.Why,
		"heap in use 35.0 MiB against a live heap of 24.0 MiB (after a forced GC), 5.0 MiB freed") {
		t.Errorf("the memory goal's reason does not split the heap: %q", g.Why)
	}

	noPeer := base()
	noPeer.Peer = nil
	noPeer.Plan = benchutil.PlanFor(100)
	if got := len(noPeer.goals()); got != 5 {
		t.Errorf("%d goals without the peer at N=100, want 5 (no peer goals, no memory goal)", got)
	}

	// The live heap per pair: from N=3000 up, of the default plan only, grown from the idle manager's ...
	const heapGoal = "live heap at rest grows at most 9.3 KiB per MyWeb and AppService pair"
	big := base()
	big.Plan = benchutil.PlanFor(3000)
	big.IdleLiveHeapMiB, big.LiveHeapMiB = 6, 6+27 // 27 MiB for 3000 pairs: 9.2 KiB each
	big.HeapBase = heapBase(big, nil)
	if g, ok := met(big)[heapGoal]; !ok || !g.Met || g.Measured != "9.2 KiB ((33.0 MiB − 6.0 MiB idle) / 3000)" {
		t.Errorf("the heap goal at 9.2 KiB per pair: %+v (there: %v)", g, ok)
	}
	big.LiveHeapMiB = 6 + 30
	if g := met(big)[heapGoal]; g.Met || g.Why == "" {
		t.Errorf("the heap goal at 10.2 KiB per pair: %+v, want missed with a reason", g)
	}
	// ... or from the run's largest smaller size of the same plan, as the 18.6 KiB it halves was measured.
	small, routed := base(), base()
	small.LiveHeapMiB, routed.LiveHeapMiB = 18, 10
	routed.Plan.Routes = true
	big.HeapBase = heapBase(big, []SizeResult{routed, small, big})
	if g := met(big)[heapGoal]; !g.Met || g.Measured != "9.2 KiB ((36.0 MiB − 18.0 MiB at N=1000) / 2000)" {
		t.Errorf("the heap goal grown from N=1000: %+v", g)
	}
	if _, ok := met(base())[heapGoal]; ok {
		t.Error("a heap goal at N=1000, where the manager's fixed heap is more than a tenth of it")
	}
	big.Plan.Routes = true
	if _, ok := met(big)[heapGoal]; ok {
		t.Error("a heap goal with the optional children, which it does not count")
	}
}
