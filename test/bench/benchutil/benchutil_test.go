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

package benchutil

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tc := range []struct {
		p    float64
		want float64
	}{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {1, 1}, {10, 1}, {11, 2}} {
		if got := Percentile(xs, tc.p); got != tc.want {
			t.Errorf("Percentile(p%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if xs[0] != 5 {
		t.Errorf("Percentile sorted its input in place: %v", xs)
	}
	if Percentile(nil, 99) != 0 || Max(nil) != 0 {
		t.Error("no values must give 0")
	}
	if got := Max([]float64{-3, -1, -2}); got != -1 {
		t.Errorf("Max = %v, want -1", got)
	}
}

func TestSteadyRate(t *testing.T) {
	// 100 objects, one every 10 ms, after a slow start and a long tail: the rate in between is 100/s.
	var done []time.Duration
	done = append(done, 5*time.Second)
	for i := range 98 {
		done = append(done, 10*time.Second+time.Duration(i)*10*time.Millisecond)
	}
	done = append(done, time.Minute)
	if got := SteadyRate(done); got < 99 || got > 101 {
		t.Errorf("SteadyRate = %v, want about 100", got)
	}
	if SteadyRate(done[:9]) != 0 {
		t.Error("fewer than 10 values must give 0")
	}
}

const auditLog = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"patch","user":{"username":"operator101-manager","groups":["system:masters"]},"objectRef":{"resource":"mywebs","namespace":"bench","name":"web-00001","apiGroup":"operator.k8s-summit.org","apiVersion":"v1","subresource":"status"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-23T10:00:01.123456Z","stageTimestamp":"2026-11-23T10:00:01.130000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"create","user":{"username":"operator101-manager"},"objectRef":{"resource":"pods","namespace":"bench","name":"at-00001-pod","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-11-23T10:00:05.000250Z"}

{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"Panic","verb":"create","user":{"username":"operator101-manager"},"requestReceivedTimestamp":"2026-11-23T10:00:05.5Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"create","user":{"username":"bench"},"objectRef":{"resource":"mywebs","namespace":"bench","name":"web-00002","apiGroup":"operator.k8s-summit.org","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestReceivedTimestamp":"2026-11-23T10:00:06Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"patch","user":{"username":"operator101-manager"},"objectRef":{"resource":"mywebs","namespace":"bench","name":"web-00002","subresource":"status"},"responseStatus":{"metadata":{},"code":409},"requestReceivedTimestamp":"2026-11-23T10:00:07Z"}
`

func TestParseAuditAndCount(t *testing.T) {
	events, err := ParseAudit(strings.NewReader(auditLog))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 4 {
		t.Fatalf("got %d ResponseComplete events, want 4 (the Panic stage and the blank line are skipped)", len(events))
	}
	pod := events[1]
	if pod.Key() != "create pods" || pod.Code() != 201 || pod.Name() != "at-00001-pod" {
		t.Errorf("pod event: key %q code %d name %q", pod.Key(), pod.Code(), pod.Name())
	}
	// Microseconds survive: the At delay is measured from them.
	if got := pod.RequestReceived.Nanosecond(); got != 250000 {
		t.Errorf("requestReceivedTimestamp nanoseconds = %d, want 250000", got)
	}

	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	all := CountWrites(events, Filter{User: "operator101-manager"})
	if all["patch mywebs/status"] != 2 || all["create pods"] != 1 || Total(all) != 3 {
		t.Errorf("manager writes = %v", all)
	}
	// [From, To): the status patch at 10:00:01.123 is in, the pod at 10:00:05.00025 is out.
	window := CountWrites(events, Filter{User: "operator101-manager", From: t0, To: t0.Add(5 * time.Second)})
	if Total(window) != 1 || window["patch mywebs/status"] != 1 {
		t.Errorf("window writes = %v", window)
	}
	if got := CountWrites(events, Filter{User: "bench"}); got["create mywebs"] != 1 || Total(got) != 1 {
		t.Errorf("bench writes = %v", got)
	}
	failed := Select(events, Filter{}, func(e *AuditEvent) bool { return e.Code() >= 400 })
	if len(failed) != 1 || failed[0].Name() != "web-00002" {
		t.Errorf("failed writes = %v", failed)
	}
	if got := FormatCounts(all, 2); got != "create pods 0.50, patch mywebs/status 1.00" {
		t.Errorf("FormatCounts = %q", got)
	}
	if got := FormatCounts(nil, 0); got != "none" {
		t.Errorf("FormatCounts(nil) = %q", got)
	}

	if _, err := ParseAudit(strings.NewReader("{not json\n")); err == nil {
		t.Error("a broken line must be an error")
	}
}

func TestPageOf(t *testing.T) {
	p := PlanFor(3)
	if p.PageOf(1) != Page {
		t.Errorf("PageOf without PageBytes = %q", p.PageOf(1))
	}
	for _, size := range []int{64 << 10, 524288} {
		p.PageBytes = size
		a, b := p.PageOf(1), p.PageOf(2)
		if len(a) != size || len(b) != size || a == b || !strings.Contains(a, MyWebName(1)) {
			t.Errorf("PageBytes %d: pages of %d and %d bytes, equal %v", size, len(a), len(b), a == b)
		}
	}
}

func TestPlanFor(t *testing.T) {
	for _, tc := range []struct {
		n                     int
		webs, apps, withPorts int
	}{{100, 100, 100, 100}, {1000, 1000, 1000, 1000}, {3000, 3000, 3000, 3000}, {5000, 5000, 5000, 5000},
		{7000, 7000, 7000, 3000}, {12000, 10000, 12000, 0}} {
		p := PlanFor(tc.n)
		if p.MyWebs != tc.webs || p.AppServices != tc.apps || p.AppServicesWithPort != tc.withPorts {
			t.Errorf("PlanFor(%d) = %+v", tc.n, p)
		}
		// Every node port is used once and lies in the bench API server's range.
		used := map[int32]bool{}
		for i := range p.MyWebs {
			port := p.MyWeb("ns", i).Spec.NodePortNumber
			if port < FirstNodePort || port > LastNodePort || used[port] {
				t.Fatalf("N=%d: MyWeb %d node port %d reused or out of range", tc.n, i, port)
			}
			used[port] = true
		}
		for i := range p.AppServices {
			a := p.AppService("ns", i)
			if (len(a.Spec.Ports) == 1) != (i < p.AppServicesWithPort) {
				t.Fatalf("N=%d: AppService %d has %d ports", tc.n, i, len(a.Spec.Ports))
			}
			for _, sp := range a.Spec.Ports {
				if sp.NodePort < FirstNodePort || sp.NodePort > LastNodePort || used[sp.NodePort] {
					t.Fatalf("N=%d: AppService %d node port %d reused or out of range", tc.n, i, sp.NodePort)
				}
				used[sp.NodePort] = true
			}
		}
	}
}

// TestPlanRoutes: with Routes every MyWeb and every AppService with a port asks for an Ingress of a host of its
// own (class, TLS Secret), an HTTPRoute attached to the bench's Gateway and 2 replicas (so a
// PodDisruptionBudget); an AppService without a port gets the replicas only (the schema wants a port to route
// to); without Routes, none of it.
func TestPlanRoutes(t *testing.T) {
	p := PlanFor(7000) // 3000 AppServices with a port
	w, a := p.MyWeb("ns", 7), p.AppService("ns", 7)
	if w.Spec.Ingress != nil || w.Spec.HTTPRoute != nil || *w.Spec.Replicas != 1 ||
		a.Spec.Ingress != nil || a.Spec.HTTPRoute != nil || *a.Spec.Size != 1 {
		t.Fatalf("without Routes: MyWeb %+v, AppService %+v", w.Spec, a.Spec)
	}
	p.Routes = true
	w, a = p.MyWeb("ns", 7), p.AppService("ns", 7)
	if in := w.Spec.Ingress; in == nil || in.Host != "web-00007."+Domain || in.ClassName != IngressClass ||
		in.TLSSecretName != "web-00007-tls" {
		t.Errorf("MyWeb's ingress %+v", in)
	}
	if hr := w.Spec.HTTPRoute; hr == nil || len(hr.ParentRefs) != 1 || hr.ParentRefs[0].Name != GatewayName ||
		len(hr.Hostnames) != 1 || hr.Hostnames[0] != HostOf(w.Name) {
		t.Errorf("MyWeb's httpRoute %+v", hr)
	}
	if *w.Spec.Replicas != RoutesReplicas || *a.Spec.Size != RoutesReplicas || RoutesReplicas < 2 {
		t.Errorf("replicas %d and %d, want %d (more than 1: a PodDisruptionBudget)", *w.Spec.Replicas, *a.Spec.Size, RoutesReplicas)
	}
	if in := a.Spec.Ingress; in == nil || in.Host != "app-00007."+Domain || in.ClassName != IngressClass ||
		in.TLSSecretName != "app-00007-tls" {
		t.Errorf("AppService's ingress %+v", in)
	}
	if hr := a.Spec.HTTPRoute; hr == nil || len(hr.ParentRefs) != 1 || hr.ParentRefs[0].Name != GatewayName {
		t.Errorf("AppService's httpRoute %+v", hr)
	}
	portless := p.AppService("ns", p.AppServicesWithPort)
	if len(portless.Spec.Ports) != 0 || portless.Spec.Ingress != nil || portless.Spec.HTTPRoute != nil ||
		*portless.Spec.Size != RoutesReplicas {
		t.Errorf("an AppService without a port: %+v", portless.Spec)
	}
}

func TestDeploymentAvailable(t *testing.T) {
	dep := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}}
	dep.Generation = 3
	if DeploymentAvailable(dep) {
		t.Fatal("a new Deployment is not available")
	}
	// Apply the patch the bench writes, as the API server would.
	var patched struct {
		Status appsv1.DeploymentStatus `json:"status"`
	}
	if err := jsonUnmarshal(AvailableStatusPatch(dep, metav1.Now()), &patched); err != nil {
		t.Fatal(err)
	}
	dep.Status = patched.Status
	if !DeploymentAvailable(dep) {
		t.Fatalf("after the patch the Deployment must be available: %+v", dep.Status)
	}
	dep.Generation = 4 // a new spec: not rolled out yet
	if DeploymentAvailable(dep) {
		t.Fatal("a Deployment whose generation is not observed is not available")
	}
}

// The bench's stand-in kubelet marks each At pod Running once: the patch makes the pod Running with a start
// time, and a Running pod is no longer waiting; other pods are never touched.
func TestAtPodRunningPatch(t *testing.T) {
	at := At("bench", 7, "2030-01-01T00:00:00Z")
	at.UID = "uid-7"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "at-00007-pod", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "cnat.programming-kubernetes.info/v1alpha1", Kind: "At", Name: at.Name, UID: at.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "command", Image: "busybox"}}}}
	if !AtPodWaiting(pod) {
		t.Fatal("a new At pod must wait for the bench's kubelet")
	}
	now := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 1, 0, time.UTC))
	var patched struct {
		Status corev1.PodStatus `json:"status"`
	}
	if err := jsonUnmarshal(RunningStatusPatch(pod, now), &patched); err != nil {
		t.Fatal(err)
	}
	pod.Status = patched.Status
	if pod.Status.Phase != corev1.PodRunning || pod.Status.StartTime == nil || !pod.Status.StartTime.Equal(&now) ||
		len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("status after the patch: %+v", pod.Status)
	}
	if AtPodWaiting(pod) {
		t.Fatal("a Running At pod must not be marked again")
	}
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", Controller: ptr.To(true)}}}}
	if AtPodWaiting(web) || AtPodWaiting(&corev1.Pod{}) {
		t.Fatal("only At pods are marked Running")
	}
}

func TestMetricSumAndMemStats(t *testing.T) {
	text := `# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
controller_runtime_reconcile_total{controller="myweb",result="success"} 1000
controller_runtime_reconcile_total{controller="myweb",result="error"} 2
controller_runtime_reconcile_total{controller="at",result="success"} 5
controller_runtime_reconcile_total_extra{controller="myweb"} 7
workqueue_depth{controller="myweb",name="myweb"} 0
workqueue_depth{controller="at",name="at"} 3
`
	got := MetricSum(text, "controller_runtime_reconcile_total", "controller")
	if got["myweb"] != 1002 || got["at"] != 5 || len(got) != 2 {
		t.Errorf("reconcile totals = %v", got)
	}
	if d := MetricSum(text, "workqueue_depth", "name"); d["at"] != 3 || d["myweb"] != 0 {
		t.Errorf("depths = %v", d)
	}
	ms := MemStats("# runtime.MemStats\n# Alloc = 1048576\n# HeapInuse = 2097152\n# Stack = 524288 / 524288\n# NumGC = 12\n")
	if ms["HeapInuse"] != 2 || ms["Stack"] != 0.5 || len(ms) != 2 {
		t.Errorf("MemStats = %v", ms)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
