//go:build faults

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

package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
)

// apiServerDown is how long the API server stays stopped.
const apiServerDown = 10 * time.Second

// TestAPIServerRestartDuringReconcile stops kube-apiserver (SIGTERM) while the manager binary reconciles a
// burst of new AppServices and Ats, keeps it down for 10 s, and starts it again with the same certificates
// and port. The same manager process (no restart of its own) reconnects, finishes what was in flight and
// converges objects created and changed after the restart.
func TestAPIServerRestartDuringReconcile(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t)
	k := c.client
	const ns = "work"
	must(t, k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	p := startManager(t, c, []string{"POD_NAMESPACE=default"}, "--leader-elect=false", "--metrics-bind-address=0",
		"--health-probe-bind-address=0", "--max-concurrent-reconciles=2")
	pid := p.cmd.Process.Pid

	// The kubelet: pods succeed (its errors while the API server is down are expected and retried).
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			_, _ = completePods(ctx, k, ns, nil)
		}
	}()
	t.Cleanup(func() { close(stop); <-stopped })

	newApp := func(name string) {
		t.Helper()
		must(t, k.Create(ctx, &appv1.AppService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appv1.AppServiceSpec{Size: ptr.To(int32(2)), Application: appv1.Application{Image: "nginx:1.27",
				Ports: []appv1.ServicePort{{Port: 80}}}}}))
	}
	newAt := func(name string) {
		t.Helper()
		must(t, k.Create(ctx, &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: cnatv1alpha1.AtSpec{Schedule: time.Now().UTC().Format(cnatv1alpha1.ScheduleLayout), Command: "echo " + name}}))
	}
	var apps, ats []string
	for i := range 20 {
		apps = append(apps, fmt.Sprintf("app-%d", i))
		newApp(apps[i])
		ats = append(ats, fmt.Sprintf("at-%d", i))
		newAt(ats[i])
	}
	// Stop the API server as soon as the first objects are reconciled: the rest are in flight.
	var before appsv1.DeploymentList
	eventually(t, 60*time.Second, "first reconciles", func() (bool, string) {
		err := k.List(ctx, &before, client.InNamespace(ns))
		return err == nil && len(before.Items) > 0, fmt.Sprint(err)
	})
	api := c.te.ControlPlane.GetAPIServer()
	stopping := time.Now()
	must(t, api.Stop())
	t.Logf("kube-apiserver stopped %s after SIGTERM", time.Since(stopping).Round(100*time.Millisecond))
	var inFlight appsv1.DeploymentList
	if err := k.List(ctx, &inFlight, client.InNamespace(ns)); err == nil {
		t.Fatal("the API server still answers after SIGTERM")
	}
	time.Sleep(apiServerDown) // the fault: the API server stays away this long
	if p.exited() {
		t.Fatalf("the manager exited while the API server was down: %v\n%s", p.err, tail(p.log()))
	}
	must(t, api.Start())
	restarted := time.Now()

	// After the restart: new objects, and every AppService changed.
	for i := 20; i < 30; i++ {
		apps = append(apps, fmt.Sprintf("app-%d", i))
		newApp(apps[i])
		ats = append(ats, fmt.Sprintf("at-%d", i))
		newAt(ats[i])
	}
	for _, name := range apps {
		// A merge patch: no conflict with the operator's concurrent status writes.
		var a appv1.AppService
		must(t, k.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &a))
		patch := client.MergeFrom(a.DeepCopy())
		a.Spec.Size, a.Spec.Image = ptr.To(int32(3)), "nginx:1.28"
		must(t, k.Patch(ctx, &a, patch))
	}
	eventually(t, 3*time.Minute, "convergence after the API server restart", func() (bool, string) {
		for _, name := range apps {
			var a appv1.AppService
			var d appsv1.Deployment
			key := client.ObjectKey{Namespace: ns, Name: name}
			if err := k.Get(ctx, key, &a); err != nil {
				return false, err.Error()
			}
			if err := k.Get(ctx, key, &d); err != nil {
				return false, fmt.Sprintf("Deployment %s: %v", name, err)
			}
			if ptr.Deref(d.Spec.Replicas, 0) != 3 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" ||
				a.Status.ObservedGeneration != a.Generation {
				return false, fmt.Sprintf("AppService %s not converged (observed generation %d of %d)", name, a.Status.ObservedGeneration, a.Generation)
			}
			var s corev1.Service
			if err := k.Get(ctx, key, &s); err != nil {
				return false, fmt.Sprintf("Service %s: %v", name, err)
			}
		}
		for _, name := range ats {
			var a cnatv1alpha1.At
			if err := k.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &a); err != nil {
				return false, err.Error()
			}
			if a.Status.Phase != cnatv1alpha1.PhaseDone {
				return false, fmt.Sprintf("At %s is %q", name, a.Status.Phase)
			}
		}
		return true, ""
	})
	converged := time.Since(restarted)
	if p.exited() || p.cmd.Process.Pid != pid {
		t.Fatalf("the manager did not survive the restart: %v\n%s", p.err, tail(p.log()))
	}
	creations := c.podCreations(t).created // the manager is never killed here: every creation answers 201
	for _, name := range ats {
		if n := creations[ns+"/"+name+"-pod"]; n != 1 {
			t.Errorf("At %s: %d pods created, want 1", name, n)
		}
	}
	t.Logf("API server stopped (SIGTERM) during the reconcile of 20 AppServices and 20 Ats (%d Deployments created "+
		"when it stopped), down %s, restarted with the same certificates and port; the same manager process (pid %d, "+
		"never restarted) converged 30 AppServices (all changed after the restart) and 30 Ats, each run once, %s "+
		"after the API server came back", len(before.Items), apiServerDown, pid, converged.Round(100*time.Millisecond))
}

// tail is the last 40 lines of a log.
func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

// TestAPIServerOutageLongerThanTheRenewDeadline: with leader election (the default, and how the operator is
// deployed), a replica that cannot renew its Lease within the renew deadline (10 s) must stop acting: the
// manager exits with one clear line instead of reconciling without the Lease, and the replica started in its
// place converges. (TestAPIServerRestartDuringReconcile shows the reconnect without leader election.)
func TestAPIServerOutageLongerThanTheRenewDeadline(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t)
	k := c.client
	const ns = "work"
	must(t, k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	args := []string{"--leader-elect=true", "--leader-election-namespace=default", "--metrics-bind-address=0",
		"--health-probe-bind-address=0"}
	p := startManager(t, c, []string{"POD_NAMESPACE=default"}, args...)
	app := &appv1.AppService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		Spec: appv1.AppServiceSpec{Size: ptr.To(int32(1)), Application: appv1.Application{Image: "nginx:1.27"}}}
	must(t, k.Create(ctx, app))
	eventually(t, 60*time.Second, "the first reconcile", func() (bool, string) {
		var d appsv1.Deployment
		err := k.Get(ctx, client.ObjectKeyFromObject(app), &d)
		return err == nil, fmt.Sprint(err)
	})

	api := c.te.ControlPlane.GetAPIServer()
	must(t, api.Stop())
	stopped := time.Now()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the manager still runs 60 s after it lost the API server, without a renewed Lease\n%s", tail(p.log()))
	}
	exited := time.Since(stopped)
	// The line main prints on the way out; client-go's event broadcaster may still log after it (its
	// "stopped leading" Event races the shutdown), so the line is counted, not expected last.
	const lost = "operator101: running manager: leader election lost"
	if n := countLines(p.log(), lost); p.err == nil || n != 1 {
		t.Fatalf("exit %v, %d lines %q, want an error exit with exactly one such line\n%s", p.err, n, lost, tail(p.log()))
	}
	must(t, api.Start())
	restarted := time.Now()
	must(t, k.Get(ctx, client.ObjectKeyFromObject(app), app))
	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.Size = ptr.To(int32(2))
	must(t, k.Patch(ctx, app, patch))
	startManager(t, c, []string{"POD_NAMESPACE=default"}, args...) // what the kubelet does
	eventually(t, 2*time.Minute, "convergence by the new replica", func() (bool, string) {
		var d appsv1.Deployment
		err := k.Get(ctx, client.ObjectKeyFromObject(app), &d)
		return err == nil && ptr.Deref(d.Spec.Replicas, 0) == 2, fmt.Sprint(err)
	})
	t.Logf("with leader election the manager exited %s after the API server stopped (renew deadline 10 s): %q; "+
		"the replica started in its place converged %s after the API server came back",
		exited.Round(100*time.Millisecond), lost, time.Since(restarted).Round(100*time.Millisecond))
}

// countLines is how many lines of a log are exactly line.
func countLines(s, line string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if l == line {
			n++
		}
	}
	return n
}
