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
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
)

// atRun is At ns/name, RUNNING since created (its status.startTime), with activeDeadlineSeconds deadline, and
// its pod, created then, in phase, started at start (the kubelet's status.startTime).
func atRun(ns, name string, phase corev1.PodPhase, created, start time.Time, deadline int64) run {
	at := newAt(name, "sleep 1", "")
	at.Namespace = ns
	at.UID = types.UID("uid-" + ns + "-" + name)
	at.Spec.ActiveDeadlineSeconds = ptr.To(deadline)
	at.Status.Phase = cnatv1alpha1.PhaseRunning
	at.Status.StartTime = &metav1.Time{Time: created}
	pod := Pod(at, PodDefaults{})
	pod.CreationTimestamp = metav1.NewTime(created)
	pod.Status.Phase = phase
	pod.Status.StartTime = &metav1.Time{Time: start}
	return run{pod: pod, at: at}
}

// runningPod is the pod of At ns/name in phase, created and started at start, with activeDeadlineSeconds
// deadline.
func runningPod(ns, name string, phase corev1.PodPhase, start time.Time, deadline int64) corev1.Pod {
	return *atRun(ns, name, phase, start, start, deadline).pod
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
	runs := []run{
		atRun("b", "late", corev1.PodRunning, start, start, 3600),
		atRun("a", "soon", corev1.PodRunning, start, start, 60),
		atRun("a", "starting", corev1.PodPending, start, start, 60),
		atRun("c", "over", corev1.PodRunning, start.Add(-time.Hour), start.Add(-time.Hour), 3600), // its deadline is start
	}
	names, next := holders(runs, DefaultStartDeadline, start)
	if strings.Join(names, " ") != "a/soon b/late" || !next.Equal(start.Add(time.Minute)) {
		t.Errorf("holders at the start: %v, next %v", names, next)
	}
	names, next = holders(runs, DefaultStartDeadline, start.Add(time.Minute)) // a/soon reached its deadline
	if strings.Join(names, " ") != "b/late" || !next.Equal(start.Add(time.Hour)) {
		t.Errorf("holders a minute later: %v, next %v", names, next)
	}
	names, next = holders(runs, DefaultStartDeadline, start.Add(time.Hour))
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

// Only the run an At's status records holds the gate: the At RUNNING, controlling the pod by UID, the pod
// under the At's pod name and created at the start the At recorded. Labels play no part: every pod here has
// operator101's.
func TestHoldersOnlyTheRecordedRun(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		mutate func(r run)
		held   bool
	}{
		{"the recorded run", func(run) {}, true},
		{"At PENDING", func(r run) { r.at.Status.Phase = cnatv1alpha1.PhasePending }, false},
		{"At without a phase", func(r run) { r.at.Status.Phase = "" }, false},
		{"At DONE", func(r run) { r.at.Status.Phase = cnatv1alpha1.PhaseDone }, false},
		{"At FAILED", func(r run) { r.at.Status.Phase = cnatv1alpha1.PhaseFailed }, false},
		{"no start recorded", func(r run) { r.at.Status.StartTime = nil }, false},
		{"another pod name", func(r run) { r.pod.Name = r.at.Name + "-hold" }, false},
		{"created after the recorded start", func(r run) { r.pod.CreationTimestamp = metav1.NewTime(start.Add(time.Second)) }, false},
		{"created before the recorded start", func(r run) { r.pod.CreationTimestamp = metav1.NewTime(start.Add(-time.Second)) }, false},
		{"controlled by an earlier At of that name", func(r run) { r.pod.OwnerReferences[0].UID = "uid-earlier" }, false},
		{"owned, not controlled", func(r run) { r.pod.OwnerReferences[0].Controller = nil }, false},
	} {
		r := atRun("ns", "x", corev1.PodRunning, start, start, 60)
		if len(r.pod.Labels) == 0 {
			t.Fatal("the pod lacks operator101's labels")
		}
		tc.mutate(r)
		names, _ := holders([]run{r}, DefaultStartDeadline, start)
		if got := len(names) == 1; got != tc.held {
			t.Errorf("%s: held %v, want %v (holders %v)", tc.name, got, tc.held, names)
		}
	}
}

// A run holds the gate until the earlier of the pod's own deadline and its At's bound: the At's
// activeDeadlineSeconds (at most the maximum) plus the start deadline, after the start its status records.
func TestHoldersBoundedByTheAt(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const startDeadline = 5 * time.Minute
	for _, tc := range []struct {
		name   string
		mutate func(r run)
		until  time.Time
	}{
		{"started at once: the pod's deadline", func(run) {}, created.Add(time.Minute)},
		{"started late, by a node's clock: the At's bound", func(r run) { r.pod.Status.StartTime = &metav1.Time{Time: created.Add(time.Hour)} },
			created.Add(time.Minute + startDeadline)},
		{"a pod asking for 68 years: the At's bound", func(r run) { r.pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](1<<31 - 1) },
			created.Add(time.Minute + startDeadline)},
		{"an At asking for more than the maximum (stored before the schema)", func(r run) {
			r.at.Spec.ActiveDeadlineSeconds = ptr.To[int64](10 * cnatv1alpha1.MaxActiveDeadlineSeconds)
			r.pod.Spec.ActiveDeadlineSeconds = r.at.Spec.ActiveDeadlineSeconds
		}, created.Add(cnatv1alpha1.MaxActiveDeadlineSeconds*time.Second + startDeadline)},
	} {
		r := atRun("ns", "x", corev1.PodRunning, created, created, 60)
		tc.mutate(r)
		names, next := holders([]run{r}, startDeadline, created)
		if len(names) != 1 || !next.Equal(tc.until) {
			t.Errorf("%s: holders %v until %v, want until %v", tc.name, names, next, tc.until)
		}
		if names, _ := holders([]run{r}, startDeadline, tc.until.Add(-time.Second)); len(names) != 1 {
			t.Errorf("%s: released before %v", tc.name, tc.until)
		}
		if names, _ := holders([]run{r}, startDeadline, tc.until); len(names) != 0 {
			t.Errorf("%s: still held at %v", tc.name, tc.until)
		}
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

// A pod made under the At's pod name after its own pod was deleted, controlled by the At (whoever may create
// pods in the namespace can make one): the At follows it, but its recorded start stays its own pod's, so the
// gate does not hold for that pod; the same for a later attempt's name.
func TestAReplacedPodIsNotTheRecordedRun(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	later := start.Add(2 * time.Second)
	for _, attempt := range []int32{0, 1} {
		r := atRun("ns", "x", corev1.PodRunning, start, start, 600)
		r.at.Spec.Retries = ptr.To[int32](2)
		if attempt > 0 {
			r.at.Status.Attempts = []cnatv1alpha1.AtAttempt{{Attempt: 0, PodName: "x-pod", StartTime: &metav1.Time{Time: start},
				CompletionTime: &metav1.Time{Time: start}, ExitCode: ptr.To[int32](1)}}
			r.pod = AttemptPod(r.at, PodDefaults{}, attempt, 600)
			r.pod.CreationTimestamp = metav1.NewTime(start)
			r.pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: start}}
		}
		r.at.Status = observe(r.at, r.pod, attempt, start)
		if names, _ := holders([]run{r}, DefaultStartDeadline, start); len(names) != 1 {
			t.Fatalf("attempt %d: its own pod holds nothing", attempt)
		}
		replaced := r.pod.DeepCopy()
		replaced.UID, replaced.CreationTimestamp = "uid-replaced", metav1.NewTime(later)
		r.at.Status = observe(r.at, replaced, attempt, later)
		if got := r.at.Status.Attempts[len(r.at.Status.Attempts)-1].StartTime; !got.Time.Equal(start) {
			t.Errorf("attempt %d: recorded start moved to %v", attempt, got)
		}
		if names, _ := holders([]run{{pod: replaced, at: r.at}}, DefaultStartDeadline, later); len(names) != 0 {
			t.Errorf("attempt %d: the replaced pod holds the gate: %v", attempt, names)
		}
	}
}
