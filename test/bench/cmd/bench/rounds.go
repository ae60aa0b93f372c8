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
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/operator101/operator101/test/bench/benchutil"
)

// Rounds: the same convergence on the same machine moves by about 15% at N=3000 from one run to the next
// (docs/contributing/performance.md "Noise"), as much as the peer and operator101 differ. So the two converge -rounds times
// each, in the order peer, operator101, operator101, peer, ... (a drift of the machine over the run costs both
// the same), and the convergence they are compared by is the mean over the rounds. Round 1 is the full run of
// each (writes, memory, the At phase, restarts); later rounds measure the convergence and the CPU only.

// Round is one convergence of a contender on an API server of its own.
type Round struct {
	Round              int     `json:"round"`
	ConvergenceSeconds float64 `json:"convergenceSeconds"`
	ServerCPUSeconds   float64 `json:"serverCPUSeconds"`
	OwnCPUSeconds      float64 `json:"ownCPUSeconds"`
	BenchCPUSeconds    float64 `json:"benchCPUSeconds"`
	// AvailableSeconds is when each object became Available in this round, in seconds from the first create,
	// ascending: the charts draw every round. Empty for round 1, whose completions are the contender's own
	// AvailableSeconds.
	AvailableSeconds []float64 `json:"availableSeconds,omitempty"`
}

// contender names, in the order roundOrder gives them.
const (
	peerName    = "peer"
	managerName = "operator101"
)

// roundOrder is the order the contenders run in round r (from 1): the peer first in odd rounds, operator101
// first in even ones.
func roundOrder(r int) []string {
	if r%2 == 1 {
		return []string{peerName, managerName}
	}
	return []string{managerName, peerName}
}

// meanRound is the mean of rounds (all zero for none).
func meanRound(rounds []Round) Round {
	var m Round
	for _, r := range rounds {
		m.ConvergenceSeconds += r.ConvergenceSeconds
		m.ServerCPUSeconds += r.ServerCPUSeconds
		m.OwnCPUSeconds += r.OwnCPUSeconds
		m.BenchCPUSeconds += r.BenchCPUSeconds
	}
	if n := float64(len(rounds)); n > 0 {
		m.ConvergenceSeconds /= n
		m.ServerCPUSeconds /= n
		m.OwnCPUSeconds /= n
		m.BenchCPUSeconds /= n
	}
	return m
}

// roundsText is the convergence of each round, "96.0, 100.2", or "" for a single round.
func roundsText(rounds []Round) string {
	if len(rounds) < 2 {
		return ""
	}
	parts := make([]string, len(rounds))
	for i, r := range rounds {
		parts[i] = f1(r.ConvergenceSeconds)
	}
	return strings.Join(parts, ", ")
}

// convergeText is a convergence with the rounds it is the mean of: "98.1 (96.0, 100.2)".
func convergeText(mean float64, rounds []Round) string {
	if t := roundsText(rounds); t != "" {
		return fmt.Sprintf("%s (%s)", f1(mean), t)
	}
	return f1(mean)
}

// runRounds runs rounds 2 to o.rounds at the size of res, whose round 1 has run: each lower bound (unless
// skipped) at its best worker count, then the peer (unless skipped) and the manager. It sets each one's
// convergence, CPU and ratios to the means over its rounds.
func runRounds(ctx context.Context, o options, res *SizeResult, dir string) error {
	res.Rounds = []Round{{Round: 1, ConvergenceSeconds: res.ConvergenceSeconds, ServerCPUSeconds: res.ServerCPUSeconds,
		OwnCPUSeconds: res.OwnCPUSeconds, BenchCPUSeconds: res.BenchCPUSeconds}}
	p := res.Peer
	if p != nil {
		p.Rounds = []Round{{Round: 1, ConvergenceSeconds: p.ConvergenceSeconds, ServerCPUSeconds: p.ServerCPUSeconds,
			OwnCPUSeconds: p.OwnCPUSeconds, BenchCPUSeconds: p.BenchCPUSeconds}}
	}
	bounds := []struct {
		design  bool
		best    LowerBoundRun
		workers int
		rounds  *[]Round
	}{{false, bestRun(res.LowerBound, res.LowerBoundW), res.LowerBoundW, &res.LowerBoundRounds},
		{true, bestRun(res.DesignBound, res.DesignBoundW), res.DesignBoundW, &res.DesignBoundRounds}}
	for _, b := range bounds {
		if b.best.Objects > 0 {
			*b.rounds = []Round{boundRound(b.best, 1)}
		}
	}
	for r := 2; r <= o.rounds; r++ {
		for _, b := range bounds {
			if len(*b.rounds) == 0 {
				continue // skipped
			}
			ns := boundNamespace(b.design, b.workers)
			x, err := runLowerBoundOnServer(ctx, o, res.Plan.N, b.workers, b.design, ns,
				filepath.Join(dir, fmt.Sprintf("server-%s-round%d", ns, r)))
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r, ns, err)
			}
			logf("N=%d: round %d, %s: %.2f s; API server and etcd CPU %.1f s", res.Plan.N, r, ns, x.Seconds, x.ServerCPUSeconds)
			*b.rounds = append(*b.rounds, boundRound(x, r))
		}
		for _, who := range roundOrder(r) {
			if who == peerName && p == nil {
				continue
			}
			x, err := convergeAgain(ctx, o, res.Plan, dir, who, r)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w", r, who, err)
			}
			if who == peerName {
				p.Rounds = append(p.Rounds, x)
			} else {
				res.Rounds = append(res.Rounds, x)
			}
		}
	}
	res.useMeans()
	return nil
}

// useMeans sets the manager's and the peer's convergence and CPU to the means over their rounds, and the
// ratios to the means of the lower bounds' rounds.
func (s *SizeResult) useMeans() {
	lb, db := s.boundSeconds()
	m := meanRound(s.Rounds)
	s.ConvergenceSeconds, s.ServerCPUSeconds, s.OwnCPUSeconds, s.BenchCPUSeconds = m.ConvergenceSeconds,
		m.ServerCPUSeconds, m.OwnCPUSeconds, m.BenchCPUSeconds
	s.Ratio, s.DesignRatio = safeRatio(m.ConvergenceSeconds, lb), safeRatio(m.ConvergenceSeconds, db)
	if p := s.Peer; p != nil && len(p.Rounds) > 0 {
		m := meanRound(p.Rounds)
		p.ConvergenceSeconds, p.ServerCPUSeconds, p.OwnCPUSeconds, p.BenchCPUSeconds = m.ConvergenceSeconds,
			m.ServerCPUSeconds, m.OwnCPUSeconds, m.BenchCPUSeconds
		p.Ratio, p.DesignRatio = safeRatio(m.ConvergenceSeconds, lb), safeRatio(m.ConvergenceSeconds, db)
	}
}

// convergeAgain is one more convergence of who (peerName or managerName) on an API server of its own, set up
// as in round 1: the contender started and idle, the objects of plan created, until every one is Available
// to the bench's watch. Then everything it started is stopped.
func convergeAgain(ctx context.Context, o options, plan benchutil.Plan, dir, who string, round int) (Round, error) {
	name := "manager"
	if who == peerName {
		name = "peer"
	}
	srv, c, err := startServer(o, filepath.Join(dir, fmt.Sprintf("server-%s-%d", name, round)))
	if err != nil {
		return Round{}, err
	}
	defer srv.stop()
	ns, bin, kubeconfig, args := benchNamespace, o.managerBin, srv.managerKC, o.managerArgs
	var env []string
	if who == peerName {
		ns, bin, kubeconfig, args = peerNamespace, o.peerBin, srv.peerKC, nil
		err = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	} else {
		_, env, err = managerNamespace(ctx, o, c)
	}
	if err != nil {
		return Round{}, err
	}
	bw, err := startBenchWatch(ctx, srv, c, ns, plan)
	if err != nil {
		return Round{}, err
	}
	defer bw.stop()
	m, err := startManager(ctx, bin, kubeconfig, ns, filepath.Join(dir, fmt.Sprintf("%s-round%d.log", name, round)), args, env)
	if err != nil {
		return Round{}, err
	}
	addPids(o.pidfile, m.pid())
	defer m.stop()
	if err := sleep(ctx, idleWait); err != nil {
		return Round{}, err
	}
	x, err := converge(ctx, o, srv, c, plan, ns, m.pid(), bw.ready, fmt.Sprintf("round %d, %s: ", round, who), false)
	if err != nil {
		return Round{}, err
	}
	r := Round{Round: round, ConvergenceSeconds: x.seconds(), ServerCPUSeconds: x.server, OwnCPUSeconds: x.own,
		BenchCPUSeconds: x.bench}
	r.AvailableSeconds, _ = completions(x.seen)
	logf("N=%d: round %d, %s converged in %.2f s; API server and etcd CPU %.1f s", plan.N, round, who,
		r.ConvergenceSeconds, r.ServerCPUSeconds)
	return r, nil
}
