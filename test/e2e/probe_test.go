//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/operator101/operator101/api/conditions"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
)

// probedPod is the pod a ReadinessProbeFailing message names (rollout.ProbeFailures).
var probedPod = regexp.MustCompile(`of pod (\S+) has run for`)

// readinessProbeOnTheKubelet does what issue 55 asks of a web kind's readiness probe, with the cluster's kubelet
// probing (envtest's tests write the pod's status by hand): in ns, a tenant's namespace enforcing the restricted
// Pod Security Standard, a MyWeb whose readinessProbe asks the image for a path it does not serve is never
// Available, and says why: Available=False, ReadinessProbeFailing, naming its pod, whose Events from the
// kubelet give the probe's answer (404). Once the tenant points the probe at the page, the MyWeb is Available.
func readinessProbeOnTheKubelet(t *testing.T, ns string) {
	const name = "probed-web"
	start := time.Now()
	web := &operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: operatorv1.MyWebSpec{
		Image: "nginxinc/nginx-unprivileged:1.27", ContainerPort: ptr.To[int32](8080), RunAsNonRoot: ptr.To(true),
		ServiceType: operatorv1.ServiceTypeClusterIP, PageContentHtml: "<h1>probed</h1>\n",
		ReadinessProbe: &corev1.Probe{PeriodSeconds: 2, ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "/not-served.html", Port: intstr.FromString("http")}}},
	}}
	create(t, web)
	t.Cleanup(func() { _ = c.Delete(context.Background(), web) })

	var pod string
	eventually(t, 3*time.Minute, "MyWeb "+name+" Available=False, "+conditions.ReasonProbeFailing, func() (bool, string) {
		var w operatorv1.MyWeb
		if err := get(&w, ns, name); err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(w.Status.Conditions, conditions.Available)
		if cond == nil {
			return false, "no condition yet"
		}
		if cond.Status == metav1.ConditionTrue {
			t.Fatalf("MyWeb %s is Available, %s: %s, though its readiness probe cannot pass", name, cond.Reason, cond.Message)
		}
		if m := probedPod.FindStringSubmatch(cond.Message); m != nil {
			pod = m[1]
		}
		return cond.Status == metav1.ConditionFalse && cond.Reason == conditions.ReasonProbeFailing && pod != "",
			fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
	})
	failingAfter := time.Since(start)
	// Why, as the condition's message says to look (kubectl describe pod): the kubelet's own Events.
	eventually(t, time.Minute, "the kubelet's Event on pod "+pod, func() (bool, string) {
		out, err := tryRun(nil, f.kubectl, "get", "events", "-n", ns, "--field-selector",
			"involvedObject.kind=Pod,involvedObject.name="+pod+",reason=Unhealthy", "-o", "jsonpath={.items[*].message}")
		return err == nil && strings.Contains(out, "Readiness probe failed") && strings.Contains(out, "404"), out
	})

	// The tenant fixes the probe: the page, which the image serves.
	fixed := time.Now()
	kubectl(t, "patch", "-n", ns, "myweb/"+name, "--type", "merge", "-p", `{"spec":{"readinessProbe":{"httpGet":{"path":"/"}}}}`)
	waitCondition(t, &operatorv1.MyWeb{}, ns, name, conditions.Available)
	var w operatorv1.MyWeb
	if err := get(&w, ns, name); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(w.Status.Conditions, conditions.Available); cond.Reason != conditions.ReasonAvailable {
		t.Errorf("MyWeb %s Available with reason %s, want %s", name, cond.Reason, conditions.ReasonAvailable)
	}
	t.Logf("MyWeb %s: %s %s after %s (pod %s, the kubelet's 404 in its Events); Available %s after the probe's fix",
		name, conditions.Available, conditions.ReasonProbeFailing, failingAfter.Round(time.Second), pod,
		time.Since(fixed).Round(time.Second))
}
