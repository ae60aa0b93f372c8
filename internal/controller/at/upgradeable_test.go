/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package at

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
)

// runningPod is the pod of At ns/name in phase, started at start, with activeDeadlineSeconds deadline.
func runningPod(ns, name string, phase corev1.PodPhase, start time.Time, deadline int64) corev1.Pod {
	at := newAt(name, "sleep 1", "")
	at.Namespace = ns
	at.Spec.ActiveDeadlineSeconds = ptr.To(deadline)
	pod := Pod(at, PodDefaults{})
	pod.Status.Phase = phase
	pod.Status.StartTime = &metav1.Time{Time: start}
	return *pod
}

func TestIndexRunningAtPod(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	foreign := runningPod("ns", "x", corev1.PodRunning, start, 60)
	foreign.OwnerReferences[0].APIVersion = "example.com/v1" // an At of another group
	noOwner := runningPod("ns", "x", corev1.PodRunning, start, 60)
	noOwner.OwnerReferences = nil
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want bool
	}{
		{"running", runningPod("ns", "a", corev1.PodRunning, start, 60), true},
		{"pending", runningPod("ns", "a", corev1.PodPending, start, 60), false},
		{"no status", runningPod("ns", "a", "", start, 60), false},
		{"succeeded", runningPod("ns", "a", corev1.PodSucceeded, start, 60), false},
		{"failed", runningPod("ns", "a", corev1.PodFailed, start, 60), false},
		{"another group's At", foreign, false},
		{"no owner", noOwner, false},
	} {
		// The index sees the cached (trimmed) pod.
		trimmed, err := trimPod(tc.pod.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		if got := len(indexRunningAtPod(trimmed.(*corev1.Pod))) > 0; got != tc.want {
			t.Errorf("%s: indexed %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHoldersAndTheirDeadlines(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pods := []corev1.Pod{
		runningPod("b", "late", corev1.PodRunning, start, 3600),
		runningPod("a", "soon", corev1.PodRunning, start, 60),
		runningPod("a", "starting", corev1.PodPending, start, 60),
		runningPod("c", "over", corev1.PodRunning, start.Add(-time.Hour), 3600), // its deadline is start
	}
	names, next := holders(pods, start)
	if strings.Join(names, " ") != "a/soon b/late" || !next.Equal(start.Add(time.Minute)) {
		t.Errorf("holders at the start: %v, next %v", names, next)
	}
	names, next = holders(pods, start.Add(time.Minute)) // a/soon reached its deadline
	if strings.Join(names, " ") != "b/late" || !next.Equal(start.Add(time.Hour)) {
		t.Errorf("holders a minute later: %v, next %v", names, next)
	}
	names, next = holders(pods, start.Add(time.Hour))
	if len(names) != 0 || !next.IsZero() {
		t.Errorf("holders past every deadline: %v, next %v", names, next)
	}

	// A pod without activeDeadlineSeconds (made before Ats had it) gets the default; without a start time
	// (none yet from the kubelet), its creation counts.
	old := runningPod("a", "old", corev1.PodRunning, start, 60)
	old.Spec.ActiveDeadlineSeconds = nil
	old.Status.StartTime = nil
	old.CreationTimestamp = metav1.NewTime(start)
	if got := runDeadline(&old); !got.Equal(start.Add(cnatv1alpha1.DefaultActiveDeadlineSeconds * time.Second)) {
		t.Errorf("runDeadline = %v", got)
	}
}

func TestGateConditionNamesTheHolders(t *testing.T) {
	c := gateCondition(nil)
	if c.Status != metav1.ConditionTrue || c.Reason != cnatv1alpha1.ReasonNoAtRunning {
		t.Errorf("no holder: %+v", c)
	}
	c = gateCondition([]string{"ns/a"})
	if c.Status != metav1.ConditionFalse || c.Reason != cnatv1alpha1.ReasonAtRunning || !strings.HasPrefix(c.Message, "At ns/a is running a command") {
		t.Errorf("one holder: %+v", c)
	}
	c = gateCondition([]string{"ns/a", "ns/b", "ns/c"})
	if !strings.HasPrefix(c.Message, "3 Ats are running a command: ns/a, ns/b, ns/c; ") {
		t.Errorf("three holders: %q", c.Message)
	}
	var many []string
	for i := range 1000 {
		many = append(many, fmt.Sprintf("ns/at-%04d", i))
	}
	c = gateCondition(many)
	if !strings.HasPrefix(c.Message, "1000 Ats are running a command: ns/at-0000, ns/at-0001, ns/at-0002 and 997 more; ") || len(c.Message) > 200 {
		t.Errorf("1000 holders: %q", c.Message)
	}
}

func TestConditionMissing(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("conditionType Upgradeable not found"), true}, // operator-lib
		{fmt.Errorf("condition Upgradeable not found in OperatorCondition ns/x"), true},
		{apierrors.NewNotFound(corev1.Resource("operatorconditions"), "x"), false}, // the object itself
		{errors.New("connection refused"), false},
	} {
		if got := conditionMissing(tc.err); got != tc.want {
			t.Errorf("conditionMissing(%v) = %v", tc.err, got)
		}
	}
}
