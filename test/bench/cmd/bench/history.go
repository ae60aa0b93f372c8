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
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// historyPlan is the -server-history measurement: on each of Servers fresh API servers, Services creates
// of one ClusterIP Service each, once on the fresh server and then Rounds-1 times more, each after Filler
// ConfigMaps (1.5 KB each) were created and deleted and the previous Services deleted.
type historyPlan struct {
	Servers, Rounds, Services, Filler int
}

// historyRound is one batch of Service creates on one API server.
type historyRound struct {
	Seconds, ServerCPUSeconds float64
}

// serverHistory measures what the same requests cost an API server that has served other objects before,
// since deleted: why every contender of the bench gets an API server of its own (docs/contributing/performance.md
// "Method"). It returns the rounds of each server.
func serverHistory(ctx context.Context, o options, p historyPlan, dir string) ([][]historyRound, error) {
	const ns = "history"
	var out [][]historyRound
	for s := range p.Servers {
		srv, c, err := startServer(o, filepath.Join(dir, fmt.Sprintf("server-%d", s)))
		if err != nil {
			return out, err
		}
		rounds, err := historyRounds(ctx, c, srv, ns, p)
		srv.stop()
		out = append(out, rounds)
		if err != nil {
			return out, fmt.Errorf("server %d: %w", s, err)
		}
		logf("server history: server %d: %v", s, rounds)
	}
	return out, nil
}

func historyRounds(ctx context.Context, c client.Client, srv *apiServer, ns string, p historyPlan) ([]historyRound, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	addresses := func() (int, error) {
		l := &networkingv1.IPAddressList{}
		err := c.List(ctx, l)
		return len(l.Items), err
	}
	// The API server's own Service (kubernetes) holds an address from the start.
	before, err := addresses()
	if err != nil {
		return nil, err
	}
	page := strings.Repeat("x", 1500)
	service := func(i int) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("svc-%05d", i)}}
	}
	var rounds []historyRound
	for r := range p.Rounds {
		if r > 0 {
			if err := parallel(ctx, p.Filler, 8, func(ctx context.Context, i int) error {
				return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("filler-%05d", i)},
					Data: map[string]string{"page": page}})
			}); err != nil {
				return rounds, err
			}
			if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns)); err != nil {
				return rounds, err
			}
		}
		t0, cpu0 := time.Now(), srv.cpuSeconds()
		if err := parallel(ctx, p.Services, 8, func(ctx context.Context, i int) error {
			svc := service(i)
			svc.Spec.Ports = []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}
			return c.Create(ctx, svc)
		}); err != nil {
			return rounds, err
		}
		rounds = append(rounds, historyRound{Seconds: time.Since(t0).Seconds(), ServerCPUSeconds: srv.cpuSeconds() - cpu0})
		// No garbage collector runs: the Services are deleted one by one, and each frees its address at once.
		if err := parallel(ctx, p.Services, 16, func(ctx context.Context, i int) error {
			return c.Delete(ctx, service(i))
		}); err != nil {
			return rounds, err
		}
		n, err := addresses()
		if err != nil {
			return rounds, fmt.Errorf("counting the cluster IPs after round %d: %w", r, err)
		}
		if n != before {
			return rounds, fmt.Errorf("after deleting the Services of round %d: %d cluster IPs allocated, %d before", r, n, before)
		}
	}
	return rounds, nil
}

// historyMarkdown is the table of -server-history: one row per server, one column per round.
func historyMarkdown(p historyPlan, servers [][]historyRound) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d Service creates per round; before each round after the first, %d ConfigMaps created and "+
		"deleted, and the previous round's Services deleted. Seconds / CPU seconds of etcd and kube-apiserver:\n\n",
		p.Services, p.Filler)
	b.WriteString("| server |")
	for r := range p.Rounds {
		fmt.Fprintf(&b, " round %d |", r+1)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", p.Rounds) + "\n")
	for s, rounds := range servers {
		fmt.Fprintf(&b, "| %d |", s+1)
		for _, r := range rounds {
			fmt.Fprintf(&b, " %.1f s / %.1f s |", r.Seconds, r.ServerCPUSeconds)
		}
		b.WriteString("\n")
	}
	return b.String()
}
