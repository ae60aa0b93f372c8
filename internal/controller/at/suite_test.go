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
	"os"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/controller"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

const timeout = 30 * time.Second

// t0 is "now" for the fake clocks of the tests.
var t0 = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

func sched(t time.Time) string { return t.UTC().Format(cnatv1alpha1.ScheduleLayout) }

// startOperator starts a manager with the At controller on cfg (env.Config when nil), with the real manager's
// cache (only operator101's own pods, trimmed), watching ns only so that tests do not see each other's Ats.
func startOperator(t *testing.T, cfg *rest.Config, ns string, o reconciler.Options, c atctl.Config) *testenv.Manager {
	t.Helper()
	o.Workers = 2
	return env.StartManager(t, cfg, func(mgr ctrl.Manager) error { return atctl.Setup(mgr, o, c) },
		func(o *ctrl.Options) {
			o.Cache = controller.CacheOptions(controller.Options{}, reconciler.NewMemory())
			o.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
		})
}

func createAt(t *testing.T, ns, name, schedule, command string, mutate ...func(*cnatv1alpha1.At)) *cnatv1alpha1.At {
	t.Helper()
	at := &cnatv1alpha1.At{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       cnatv1alpha1.AtSpec{Schedule: schedule, Command: command},
	}
	for _, m := range mutate {
		m(at)
	}
	if err := env.Client.Create(context.Background(), at); err != nil {
		t.Fatalf("creating At: %v", err)
	}
	return at
}

func getAt(g gomega.Gomega, key types.NamespacedName) *cnatv1alpha1.At {
	at := &cnatv1alpha1.At{}
	g.Expect(env.Client.Get(context.Background(), key, at)).To(gomega.Succeed())
	return at
}

// waitPhase waits until the At is in phase and its status describes its current generation.
func waitPhase(t *testing.T, key types.NamespacedName, phase string) *cnatv1alpha1.At {
	t.Helper()
	var at *cnatv1alpha1.At
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		at = getAt(g, key)
		g.Expect(at.Status.Phase).To(gomega.Equal(phase))
		g.Expect(at.Status.ObservedGeneration).To(gomega.Equal(at.Generation))
	})
	return at
}

func getPod(t *testing.T, at types.NamespacedName) (*corev1.Pod, bool) {
	t.Helper()
	pod := &corev1.Pod{}
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: at.Namespace, Name: atctl.PodName(at.Name)}, pod)
	if apierrors.IsNotFound(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return pod, true
}

// setPodStatus plays the kubelet: envtest runs none. The pod started at t0 (status.startTime, from which the
// kubelet counts activeDeadlineSeconds).
func setPodStatus(t *testing.T, key types.NamespacedName, phase corev1.PodPhase, term *corev1.ContainerStateTerminated) {
	t.Helper()
	setPodStatusAt(t, key, phase, term, t0)
}

// setPodStatusAt is setPodStatus for a pod that started at start.
func setPodStatusAt(t *testing.T, key types.NamespacedName, phase corev1.PodPhase, term *corev1.ContainerStateTerminated, start time.Time) {
	t.Helper()
	updatePodStatus(t, key, func(pod *corev1.Pod) {
		pod.Status.Phase = phase
		pod.Status.StartTime = &metav1.Time{Time: start}
		state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(start)}}
		if term != nil {
			state = corev1.ContainerState{Terminated: term}
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "command", Image: pod.Spec.Containers[0].Image, ImageID: "docker.io/library/busybox@sha256:0", State: state,
		}}
	})
}

// updatePodStatus lets f change the status of the At's pod, as the kubelet would, and writes it.
func updatePodStatus(t *testing.T, key types.NamespacedName, f func(*corev1.Pod)) {
	t.Helper()
	pod, ok := getPod(t, key)
	if !ok {
		t.Fatalf("no pod for %s", key)
	}
	f(pod)
	if err := env.Client.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("setting pod status: %v", err)
	}
}

// setPodWaiting makes the At's pod Pending, its command's container waiting for reason (ErrImagePull, ...).
func setPodWaiting(t *testing.T, key types.NamespacedName, reason, message string) {
	t.Helper()
	updatePodStatus(t, key, func(pod *corev1.Pod) {
		pod.Status.Phase = corev1.PodPending
		pod.Status.StartTime = &metav1.Time{Time: t0}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "command", Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}
	})
}

func podPosts(c *testenv.Counter) int { return c.Writes(false)["POST pods"] }

// eventReasons lists the reasons of the Events regarding the At, in no particular order.
func eventReasons(g gomega.Gomega, at *cnatv1alpha1.At) []string {
	return eventField(g, at, func(e eventsv1.Event) string { return e.Reason })
}

// eventNotes lists the notes of the Events regarding the At.
func eventNotes(g gomega.Gomega, at *cnatv1alpha1.At) []string {
	return eventField(g, at, func(e eventsv1.Event) string { return e.Note })
}

// eventField lists one field of each Event regarding the At.
func eventField(g gomega.Gomega, at *cnatv1alpha1.At, field func(eventsv1.Event) string) []string {
	list := &eventsv1.EventList{}
	g.Expect(env.Client.List(context.Background(), list, client.InNamespace(at.Namespace))).To(gomega.Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.UID == at.UID {
			out = append(out, field(e))
		}
	}
	return out
}

func key(at *cnatv1alpha1.At) types.NamespacedName { return client.ObjectKeyFromObject(at) }

func newClock() *clocktesting.FakeClock { return clocktesting.NewFakeClock(t0) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
