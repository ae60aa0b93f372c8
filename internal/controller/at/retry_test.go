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

package at

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
)

// Attempt 0's pod keeps the one name of every earlier release (an upgrade finds a run in progress); later
// attempts get names of their own, fixed in advance, valid and distinct however long the At's name.
func TestAttemptPodName(t *testing.T) {
	if got := AttemptPodName("example-at", 0); got != "example-at-pod" || got != PodName("example-at") {
		t.Errorf("attempt 0: %q", got)
	}
	if got := AttemptPodName("example-at", 2); got != "example-at-pod-2" {
		t.Errorf("attempt 2: %q", got)
	}
	for _, name := range []string{"x", strings.Repeat("a", 249), strings.Repeat("b", 253), strings.Repeat("c", 240) + ".d-e"} {
		seen := map[string]bool{}
		for k := int32(0); k <= cnatv1alpha1.MaxRetries; k++ {
			got := AttemptPodName(name, k)
			if errs := validation.IsDNS1123Subdomain(got); len(errs) != 0 {
				t.Errorf("%d chars, attempt %d: %q: %v", len(name), k, got, errs)
			}
			if seen[got] {
				t.Errorf("%d chars: attempt %d's name %q taken by an earlier attempt", len(name), k, got)
			}
			seen[got] = true
			if AttemptPodName(name, k) != got {
				t.Errorf("not deterministic")
			}
		}
	}
}

// A failed attempt is followed by another while retries and time are left; the attempt's record holds its pod,
// times, exit code and reason; the last allowed attempt, a success, a DeadlineExceeded, or no retries at all
// end the run as before.
func TestObserveRetries(t *testing.T) {
	created := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	finished := metav1.NewTime(created.Add(10 * time.Second))
	failedPod := func(name, reason string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: reason, ContainerStatuses: []corev1.ContainerStatus{{Name: containerName,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", FinishedAt: finished}}}}}}
	}
	at := newAt("r", "false", "")
	at.Spec.Schedule = "2030-01-01T00:00:00Z"
	now := created.Add(time.Minute)
	for _, tc := range []struct {
		name      string
		retries   *int32
		attempt   int32
		reason    string
		wantPhase string
	}{
		{"no retries: FAILED", nil, 0, "", cnatv1alpha1.PhaseFailed},
		{"retries left: retrying", ptr.To[int32](2), 0, "", cnatv1alpha1.PhaseRunning},
		{"the last attempt: FAILED", ptr.To[int32](2), 2, "", cnatv1alpha1.PhaseFailed},
		{"killed at the shared deadline: FAILED", ptr.To[int32](2), 0, "DeadlineExceeded", cnatv1alpha1.PhaseFailed},
	} {
		a := at.DeepCopy()
		a.Spec.Retries = tc.retries
		a.Status = cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhaseRunning, StartTime: &metav1.Time{Time: created}}
		for k := int32(0); k < tc.attempt; k++ {
			a.Status.Attempts = append(a.Status.Attempts, cnatv1alpha1.AtAttempt{Attempt: k, PodName: AttemptPodName("r", k),
				StartTime: &metav1.Time{Time: created}, CompletionTime: &finished, ExitCode: ptr.To[int32](2), Reason: "Error"})
		}
		st := observe(a, failedPod(AttemptPodName("r", tc.attempt), tc.reason), tc.attempt, now)
		if st.Phase != tc.wantPhase {
			t.Errorf("%s: phase %s, want %s (%s)", tc.name, st.Phase, tc.wantPhase, st.Message)
		}
		if n := len(st.Attempts); n != int(tc.attempt)+1 {
			t.Fatalf("%s: %d attempts recorded", tc.name, n)
		}
		last := st.Attempts[tc.attempt]
		if last.Attempt != tc.attempt || last.PodName != AttemptPodName("r", tc.attempt) || !last.StartTime.Time.Equal(created) ||
			!last.CompletionTime.Equal(&finished) || ptr.Deref(last.ExitCode, -1) != 2 || last.Reason == "" {
			t.Errorf("%s: attempt recorded %+v", tc.name, last)
		}
		k, retrying := currentAttempt(st)
		if retrying != (tc.wantPhase == cnatv1alpha1.PhaseRunning) || (retrying && k != tc.attempt+1) {
			t.Errorf("%s: current attempt %d retrying %v", tc.name, k, retrying)
		}
		if retrying && (st.ExitCode != nil || st.CompletionTime != nil || succeededCondition(st).Reason != cnatv1alpha1.ReasonRetrying) {
			t.Errorf("%s: a retrying At looks finished: %+v", tc.name, st)
		}
		if again := observe(a, failedPod(AttemptPodName("r", tc.attempt), tc.reason), tc.attempt, now); again.Message != st.Message ||
			len(again.Attempts) != len(st.Attempts) {
			t.Errorf("%s: not deterministic", tc.name)
		}
	}
}

// All attempts share the At's activeDeadlineSeconds from the run's start: a later attempt gets what is left,
// none when nothing is.
func TestAttemptDeadlineSeconds(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := newAt("d", "false", "")
	at.Spec.Schedule = "2030-01-01T00:00:00Z"
	at.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
	at.Status.StartTime = &metav1.Time{Time: start}
	for _, tc := range []struct {
		attempt int32
		after   time.Duration
		want    int64
	}{
		{0, time.Hour, 600}, {1, 0, 600}, {1, 100 * time.Second, 500}, {2, 599 * time.Second, 1}, {2, 600 * time.Second, 0}, {3, time.Hour, 0},
	} {
		if got := attemptDeadlineSeconds(at, tc.attempt, start.Add(tc.after)); got != tc.want {
			t.Errorf("attempt %d after %s: %d, want %d", tc.attempt, tc.after, got, tc.want)
		}
	}
	if got := ptr.Deref(AttemptPod(at, PodDefaults{}, 1, 500).Spec.ActiveDeadlineSeconds, 0); got != 500 {
		t.Errorf("pod deadline %d", got)
	}
}

// The gate with retries: the current attempt's pod holds it, under its own name and recorded creation; an
// earlier attempt's pod and an At between two attempts hold nothing; and the bound stays the first start plus
// activeDeadlineSeconds and the start deadline, as without retries, however many attempts.
func TestHoldersWithRetries(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	second := created.Add(30 * time.Second)
	r := atRun("ns", "x", corev1.PodRunning, created, created, 60)
	r.at.Spec.Retries = ptr.To[int32](3)
	r.at.Status.Attempts = []cnatv1alpha1.AtAttempt{
		{Attempt: 0, PodName: "x-pod", StartTime: &metav1.Time{Time: created}, CompletionTime: &metav1.Time{Time: second}, ExitCode: ptr.To[int32](1)},
		{Attempt: 1, PodName: "x-pod-1", StartTime: &metav1.Time{Time: second}},
	}
	r.pod = AttemptPod(r.at, PodDefaults{}, 1, 30)
	r.pod.CreationTimestamp = metav1.NewTime(second)
	r.pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: second}}
	if names, next := holders([]run{r}, DefaultStartDeadline, second); len(names) != 1 || !next.Equal(second.Add(30*time.Second)) {
		t.Errorf("attempt 1 holds %v until %v", names, next)
	}
	// A pod asking for more than what was left is cut at the At's bound, from the first start.
	r.pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
	if _, next := holders([]run{r}, DefaultStartDeadline, second); !next.Equal(created.Add(60*time.Second + DefaultStartDeadline)) {
		t.Errorf("bound %v, want the first start's", next)
	}
	earlier := *r.at.DeepCopy()
	old := Pod(&earlier, PodDefaults{})
	old.CreationTimestamp = metav1.NewTime(created)
	old.Status = corev1.PodStatus{Phase: corev1.PodRunning}
	if names, _ := holders([]run{{pod: old, at: r.at}}, DefaultStartDeadline, second); len(names) != 0 {
		t.Errorf("an earlier attempt's pod holds the gate")
	}
	between := r.at.DeepCopy()
	between.Status.Attempts = between.Status.Attempts[:1]
	if names, _ := holders([]run{{pod: r.pod, at: between}}, DefaultStartDeadline, second); len(names) != 0 {
		t.Errorf("an At between two attempts holds the gate")
	}
}
