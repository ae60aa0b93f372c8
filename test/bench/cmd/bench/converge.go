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
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/test/bench/benchutil"
)

// convergence is what one convergence of a contender measured: from the first create to the moment the
// bench's watch has seen every object Available.
type convergence struct {
	start, end    time.Time
	createSeconds float64
	// seen is when each object became Available, from start.
	seen map[string]time.Duration
	// server, own and bench are the CPU seconds of etcd and kube-apiserver, of the contender and of the bench.
	server, own, bench float64
	// etcdReads are the reads kube-apiserver sent to etcd (-1: not counted), watchersClosed the watches it
	// closed because their client fell behind, by resource (nil: not counted).
	etcdReads      float64
	watchersClosed map[string]float64
}

// seconds is the convergence's length.
func (x convergence) seconds() float64 { return x.end.Sub(x.start).Seconds() }

// converge creates the objects of plan in ns, as the contender with process pid watches them, and waits until
// ready has seen every one Available. With countServer it reads kube-apiserver's /metrics at both ends, inside
// the window, to count the reads sent to etcd and the watches closed; later rounds leave it out. who prefixes
// the log lines.
func converge(ctx context.Context, o options, srv *apiServer, c client.Client, plan benchutil.Plan, ns string,
	pid int, ready *tracker, who string, countServer bool) (convergence, error) {
	x := convergence{start: time.Now(), etcdReads: -1}
	cpu0 := markCPU(srv, pid)
	counts := func() serverCounts { return serverCounts{etcdReads: -1} }
	if countServer {
		counts = srv.markCounts(ctx)
	}
	ready.reset(x.start, plan.Objects())
	logf("N=%d: %screating %d objects", plan.N, who, plan.Objects())
	if err := createAll(ctx, c, plan, ns, ready); err != nil {
		return x, err
	}
	x.createSeconds = time.Since(x.start).Seconds()
	logf("N=%d: %screated in %.2f s; waiting for Available", plan.N, who, x.createSeconds)
	seen, end, err := ready.await(ctx, o.timeout, who)
	if err != nil {
		return x, err
	}
	x.seen, x.end = seen, end
	x.server, x.own, x.bench = cpu0.since()
	n := counts()
	x.etcdReads, x.watchersClosed = n.etcdReads, n.watchersClosed
	return x, nil
}
