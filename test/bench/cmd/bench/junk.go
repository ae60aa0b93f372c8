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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/test/bench/benchutil"
)

// junkAnnotationBytes is the size of the annotation every tenant object of -tenant-junk carries: 250 KiB, just
// under the API server's limit of 256 KiB of annotations per object.
const junkAnnotationBytes = 250 << 10

// junkQuiet is how long -tenant-junk waits at rest before it reads the manager's memory, unless -quiet says
// otherwise: decoding the tenant's objects allocates their whole size, once each, and Go's scavenger returns
// those pages to the system over a minute or two (after 30 s, N=300 ConfigMaps still showed 17.8 MiB more RSS
// than without them; after 2 minutes, 6.3 MiB, with 1.8 MiB more live heap).
const junkQuiet = 2 * time.Minute

// junkKinds are the kinds -tenant-junk-kinds may name.
var junkKinds = []string{"ConfigMap", "Service", "Deployment", "Pod"}

// JunkResult is the -tenant-junk measurement: the manager's memory at rest before and after a tenant created
// objects labelled as operator101's children, with 250 KiB of annotations each.
type JunkResult struct {
	Date    string   `json:"date"`
	Commit  string   `json:"commit,omitempty"`
	Machine Machine  `json:"machine"`
	N       int      `json:"n"`
	Kinds   []string `json:"kinds"`
	// AnnotationBytes is the size of each object's annotations.
	AnnotationBytes int `json:"annotationBytes"`
	// Without and With are the manager's memory at rest before and after the tenant's objects; LiveHeapMiB is
	// Go's HeapAlloc right after a forced collection, read after the RSS.
	WithoutStats       procStats `json:"without"`
	WithStats          procStats `json:"with"`
	LiveHeapWithoutMiB float64   `json:"liveHeapWithoutMiB"`
	LiveHeapWithMiB    float64   `json:"liveHeapWithMiB"`
	CreateSeconds      float64   `json:"createSeconds"`
}

// tenantJunk measures what n objects of each of kinds, created by a tenant with operator101's label
// (app.kubernetes.io/managed-by=operator101), 250 KiB of annotations and a controller reference to the tenant's
// own MyWeb, cost the manager's memory at rest: what the cache keeps of them (docs/admin/security.md "Memory a tenant
// cannot exhaust"). The manager runs as the sizes run it, on an API server of its own.
func tenantJunk(ctx context.Context, o options, n int, kinds []string, dir string) (*JunkResult, error) {
	res := &JunkResult{Date: time.Now().UTC().Format(time.RFC3339), Commit: o.commit, Machine: machine(), N: n,
		Kinds: kinds, AnnotationBytes: junkAnnotationBytes}
	srv, c, err := startServer(o, filepath.Join(dir, "server-manager"))
	if err != nil {
		return res, err
	}
	defer srv.stop()
	ns := benchNamespace
	_, managerEnv, err := managerNamespace(ctx, o, c)
	if err != nil {
		return res, err
	}
	// The tenant's MyWeb, whose children the manager applies; the junk names it as its controller.
	web := benchutil.PlanFor(1).MyWeb(ns, 0)
	if err := c.Create(ctx, web); err != nil {
		return res, fmt.Errorf("creating the tenant's MyWeb: %w", err)
	}
	mgr, err := startManager(ctx, o.managerBin, srv.managerKC, ns, filepath.Join(dir, "manager.log"), o.managerArgs, managerEnv)
	if err != nil {
		return res, err
	}
	addPids(o.pidfile, mgr.pid())
	defer mgr.stop()
	tail := &auditTail{path: srv.auditLog, user: managerUser}
	atRest := func(what string) (procStats, float64, error) {
		if _, err := tail.waitIdle(ctx, time.Now(), o.settle, o.timeout); err != nil {
			return procStats{}, 0, fmt.Errorf("%s: %w", what, err)
		}
		if err := sleep(ctx, o.quiet); err != nil {
			return procStats{}, 0, err
		}
		s, err := mgr.stats()
		if err != nil {
			return s, 0, err
		}
		var live float64
		if b, err := httpGet("http://"+mgr.pprof+"/debug/pprof/heap?gc=1&debug=1", time.Minute); err == nil {
			live = benchutil.MemStats(string(b))["HeapAlloc"]
		}
		logf("tenant junk: %s: RSS %.1f MiB (anon %.1f), peak %.1f MiB, live heap after a forced GC %.1f MiB", what,
			s.RSSMiB, s.AnonMiB, s.PeakRSSMiB, live)
		return s, live, nil
	}
	if res.WithoutStats, res.LiveHeapWithoutMiB, err = atRest("without the tenant's objects"); err != nil {
		return res, err
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(web), web); err != nil {
		return res, err
	}
	owner := metav1.OwnerReference{APIVersion: operatorv1.GroupVersion.String(), Kind: "MyWeb", Name: web.Name,
		UID: web.UID, Controller: ptr.To(true)}
	start := time.Now()
	logf("tenant junk: creating %d objects of each of %v with %d bytes of annotations", n, kinds, junkAnnotationBytes)
	if err := parallel(ctx, n*len(kinds), 16, func(ctx context.Context, i int) error {
		obj := junkObject(kinds[i%len(kinds)], ns, i/len(kinds), owner)
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %s %s: %w", kinds[i%len(kinds)], obj.GetName(), err)
		}
		return nil
	}); err != nil {
		return res, err
	}
	res.CreateSeconds = time.Since(start).Seconds()
	if res.WithStats, res.LiveHeapWithMiB, err = atRest(fmt.Sprintf("with %d objects of each of %v", n, kinds)); err != nil {
		return res, err
	}
	return res, nil
}

// junkObject is the i-th tenant object of kind: labelled as operator101's, 250 KiB of annotations, controlled
// (by its own say) by owner.
func junkObject(kind, ns string, i int, owner metav1.OwnerReference) client.Object {
	meta := metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("junk-%05d", i),
		Labels:          map[string]string{"app.kubernetes.io/managed-by": "operator101", "tenant.example/junk": "true"},
		Annotations:     map[string]string{"tenant.example/junk": strings.Repeat("j", junkAnnotationBytes)},
		OwnerReferences: []metav1.OwnerReference{owner}}
	labels := map[string]string{"tenant.example/junk": fmt.Sprintf("%05d", i)}
	container := corev1.Container{Name: "junk", Image: benchutil.Image}
	switch kind {
	case "Service":
		return &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	case "Deployment":
		return &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}}}
	case "Pod":
		return &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{container}}}
	}
	return &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"junk": "x"}}
}

// parseKinds reads -tenant-junk-kinds.
func parseKinds(s string) ([]string, error) {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		found := false
		for _, known := range junkKinds {
			if strings.EqualFold(k, known) {
				out, found = append(out, known), true
			}
		}
		if !found {
			return nil, fmt.Errorf("%q is none of %v", k, junkKinds)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no kind")
	}
	return out, nil
}

// junkMarkdown is the table of -tenant-junk.
func junkMarkdown(r *JunkResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d objects of each of %s labelled app.kubernetes.io/managed-by=operator101, with %d KiB of "+
		"annotations and a controller reference to the tenant's MyWeb (created in %.1f s); the manager at rest:\n\n",
		r.N, strings.Join(r.Kinds, ", "), r.AnnotationBytes>>10, r.CreateSeconds)
	b.WriteString("| | RSS MiB | anon MiB | peak RSS MiB | live heap MiB |\n|---|---|---|---|---|\n")
	for _, row := range []struct {
		name string
		s    procStats
		live float64
	}{{"without", r.WithoutStats, r.LiveHeapWithoutMiB}, {"with", r.WithStats, r.LiveHeapWithMiB}} {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", row.name, f1(row.s.RSSMiB), f1(row.s.AnonMiB), f1(row.s.PeakRSSMiB), f1(row.live))
	}
	fmt.Fprintf(&b, "| difference | %s | %s | %s | %s |\n", f1(r.WithStats.RSSMiB-r.WithoutStats.RSSMiB),
		f1(r.WithStats.AnonMiB-r.WithoutStats.AnonMiB), f1(r.WithStats.PeakRSSMiB-r.WithoutStats.PeakRSSMiB),
		f1(r.LiveHeapWithMiB-r.LiveHeapWithoutMiB))
	return b.String()
}
