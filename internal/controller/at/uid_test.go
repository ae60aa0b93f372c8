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

package at_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

// uidNamespace creates a namespace with the given annotations.
func uidNamespace(t *testing.T, annotations map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "at-uid-", Annotations: annotations}}
	must(t, env.Client.Create(context.Background(), ns))
	return ns.Name
}

// TestPodUIDFollowsTheNamespace: an At's pod runs as the first UID of its namespace's OpenShift UID range where
// the namespace has one, and as NonRootUID (65534) where it has none, decided per namespace by the one
// operator; a malformed range creates no pod and says why in a Warning Event.
func TestPodUIDFollowsTheNamespace(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        int64
	}{
		{"no range", nil, atctl.NonRootUID},
		{"OpenShift range", map[string]string{atctl.UIDRangeAnnotation: "1000680000/10000"}, 1000680000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := uidNamespace(t, tc.annotations)
			startOperator(t, nil, ns, reconciler.Options{Clock: newClock()}, atctl.Config{})
			at := createAt(t, ns, "uid", sched(t0.Add(-time.Minute)), "id -u")
			waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
			pod, ok := getPod(t, key(at))
			if !ok {
				t.Fatal("no pod")
			}
			psc := pod.Spec.SecurityContext
			if ptr.Deref(psc.RunAsUser, -1) != tc.want || ptr.Deref(psc.RunAsGroup, -1) != tc.want || !ptr.Deref(psc.RunAsNonRoot, false) {
				t.Errorf("pod securityContext %+v: want runAsUser and runAsGroup %d, runAsNonRoot", psc, tc.want)
			}
		})
	}

	t.Run("malformed range", func(t *testing.T) {
		ns := uidNamespace(t, map[string]string{atctl.UIDRangeAnnotation: "1000680000"})
		startOperator(t, nil, ns, reconciler.Options{Clock: newClock()}, atctl.Config{})
		at := createAt(t, ns, "uid", sched(t0.Add(-time.Minute)), "id -u")
		testenv.Eventually(t, timeout, func(g gomega.Gomega) {
			list := &eventsv1.EventList{}
			g.Expect(env.Client.List(context.Background(), list, client.InNamespace(ns))).To(gomega.Succeed())
			found := false
			for _, e := range list.Items {
				found = found || e.Reason == "PodCreateFailed" && strings.Contains(e.Note, atctl.UIDRangeAnnotation)
			}
			g.Expect(found).To(gomega.BeTrue(), "a PodCreateFailed Event naming %s", atctl.UIDRangeAnnotation)
		})
		if _, ok := getPod(t, key(at)); ok {
			t.Error("a pod was created in a namespace whose UID range is malformed")
		}
		if got := getAt(gomega.NewWithT(t), key(at)).Status.Phase; got == cnatv1alpha1.PhaseRunning || got == cnatv1alpha1.PhaseDone {
			t.Errorf("phase %s, want the At still waiting", got)
		}
	})
}

// TestNamespaceReadOncePerBurst: Ats falling due together in one namespace read the namespace (for its UID
// range) once, not once per pod; each gets its pod, with the namespace's UID.
func TestNamespaceReadOncePerBurst(t *testing.T) {
	ns := uidNamespace(t, map[string]string{atctl.UIDRangeAnnotation: "1000680000/10000"})
	cfg, counter := testenv.Counting(env.Config)
	startOperator(t, cfg, ns, reconciler.Options{Clock: newClock()}, atctl.Config{})
	var ats []*cnatv1alpha1.At
	for i := range 10 {
		ats = append(ats, createAt(t, ns, fmt.Sprintf("burst-%d", i), sched(t0.Add(-time.Minute)), "id -u"))
	}
	for _, at := range ats {
		waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
		pod, ok := getPod(t, key(at))
		if !ok || ptr.Deref(pod.Spec.SecurityContext.RunAsUser, -1) != 1000680000 {
			t.Fatalf("%s: pod %v, want one running as 1000680000", at.Name, ok)
		}
	}
	if n := counter.Gets()["GET namespaces"]; n != 1 {
		t.Errorf("%d reads of the namespace for 10 pods, want 1 (%v)", n, counter.Gets())
	}
}
