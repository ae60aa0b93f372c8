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
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/operator101/operator101/test/bench/benchutil"
)

// TestRoundOrder: over two rounds the contenders run peer, operator101, operator101, peer, so that a machine
// that gets slower (or faster) over the run costs both the same.
func TestRoundOrder(t *testing.T) {
	var order []string
	for r := 1; r <= 4; r++ {
		order = append(order, roundOrder(r)...)
	}
	want := []string{peerName, managerName, managerName, peerName, peerName, managerName, managerName, peerName}
	if !slices.Equal(order, want) {
		t.Errorf("order over four rounds %v, want %v", order, want)
	}
}

// TestUseMeans: the convergence, the CPU and the ratios the goals compare are the means over the rounds (the
// lower bounds' too), the report shows each round beside the mean, and the peer goal is decided by the means,
// not by round 1.
func TestUseMeans(t *testing.T) {
	s := SizeResult{
		Plan: benchutil.PlanFor(3000),
		// Round 1 of each bound is the best of its sweep; its second round is slower, and the ratios take the
		// means: 60 and 75.
		LowerBound:     []LowerBoundRun{{Workers: 8, Objects: 6000, Seconds: 55, ServerCPUSeconds: 90}},
		LowerBoundBest: 55, LowerBoundW: 8,
		LowerBoundRounds: []Round{{Round: 1, ConvergenceSeconds: 55, ServerCPUSeconds: 90},
			{Round: 2, ConvergenceSeconds: 65, ServerCPUSeconds: 110}},
		DesignBound:     []LowerBoundRun{{Workers: 4, Objects: 6000, Seconds: 70, ServerCPUSeconds: 120}},
		DesignBoundBest: 70, DesignBoundW: 4,
		DesignBoundRounds: []Round{{Round: 1, ConvergenceSeconds: 70, ServerCPUSeconds: 120},
			{Round: 2, ConvergenceSeconds: 80, ServerCPUSeconds: 140}},
		// Round 1 alone would have the peer first (100 against 110).
		Rounds: []Round{{Round: 1, ConvergenceSeconds: 110, ServerCPUSeconds: 160, OwnCPUSeconds: 20, BenchCPUSeconds: 8},
			{Round: 2, ConvergenceSeconds: 86, ServerCPUSeconds: 130, OwnCPUSeconds: 18, BenchCPUSeconds: 6}},
		Peer: &Contender{Rounds: []Round{{Round: 1, ConvergenceSeconds: 100, ServerCPUSeconds: 150},
			{Round: 2, ConvergenceSeconds: 104, ServerCPUSeconds: 154}}},
	}
	s.useMeans()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(s.ConvergenceSeconds, 98) || !near(s.ServerCPUSeconds, 145) || !near(s.OwnCPUSeconds, 19) ||
		!near(s.BenchCPUSeconds, 7) {
		t.Errorf("manager means: %v s, CPU %v/%v/%v; want 98 s, 145/19/7", s.ConvergenceSeconds, s.ServerCPUSeconds,
			s.OwnCPUSeconds, s.BenchCPUSeconds)
	}
	if !near(s.Ratio, 98.0/60) || !near(s.DesignRatio, 98.0/75) {
		t.Errorf("ratios %v, %v; want %v, %v", s.Ratio, s.DesignRatio, 98.0/60, 98.0/75)
	}
	if p := s.Peer; !near(p.ConvergenceSeconds, 102) || !near(p.ServerCPUSeconds, 152) || !near(p.Ratio, 102.0/60) {
		t.Errorf("peer means: %v s, CPU %v, ratio %v; want 102 s, 152, %v", p.ConvergenceSeconds, p.ServerCPUSeconds,
			p.Ratio, 102.0/60)
	}
	var peerGoal *Goal
	for _, g := range s.goals() {
		if g.Goal == "converges faster than the peer" {
			peerGoal = &g
		}
	}
	if peerGoal == nil || !peerGoal.Met ||
		!strings.Contains(peerGoal.Measured, "98.0 s against 102.0 s (means of 2 and 2 rounds: 110.0, 86.0 against 100.0, 104.0)") {
		t.Errorf("peer goal %+v, want met on the means, with each round", peerGoal)
	}
	md := Report{Sizes: []SizeResult{s}}.Markdown()
	for _, want := range []string{"| 3000 | operator101 | 98.0 (110.0, 86.0) |", "| 3000 | peer (tutorial style) | 102.0 (100.0, 104.0) |",
		"| 3000 | lower bound (8 workers) | 60.0 (55.0, 65.0) | 1.00 | 0.80 |",
		"| 3000 | design's lower bound (4 workers) | 75.0 (70.0, 80.0) | 1.25 | 1.00 |",
		// The API server's CPU per object of the lower bound: the mean of 90 and 110 s over 6,000 objects.
		"| 3000 | lower bound (8 workers) | 16.7 |",
		"| 3000 | 3000+3000 | 98.0 (110.0, 86.0) | 60.0 (55.0, 65.0), 8 workers | 1.63 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	one := SizeResult{Plan: benchutil.PlanFor(100), Rounds: []Round{{Round: 1, ConvergenceSeconds: 5}}}
	one.useMeans()
	if one.ConvergenceSeconds != 5 || convergeText(one.ConvergenceSeconds, one.Rounds) != "5.0" {
		t.Errorf("one round: %v, %q; want 5 s shown as 5.0", one.ConvergenceSeconds, convergeText(one.ConvergenceSeconds, one.Rounds))
	}
}
