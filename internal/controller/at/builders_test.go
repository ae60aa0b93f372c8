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
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/proxyenv"
)

func newAt(name, command, image string) *cnatv1alpha1.At {
	return &cnatv1alpha1.At{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-1"},
		Spec:       cnatv1alpha1.AtSpec{Schedule: "2019-04-12T10:12:00Z", Command: command, Image: image},
	}
}

func TestPodName(t *testing.T) {
	long := strings.Repeat("a", 253)
	for _, tc := range []struct{ at, want string }{
		{"example-at", "example-at-pod"},
		{strings.Repeat("b", 249), strings.Repeat("b", 249) + "-pod"},
	} {
		if got := PodName(tc.at); got != tc.want {
			t.Errorf("PodName(%q) = %q, want %q", tc.at, got, tc.want)
		}
	}
	got := PodName(long)
	if len(got) > validation.DNS1123SubdomainMaxLength || len(validation.IsDNS1123Subdomain(got)) != 0 {
		t.Errorf("PodName(253 chars) = %q (%d chars), not a valid name", got, len(got))
	}
	if got != PodName(long) || got == PodName(strings.Repeat("a", 252)+"c") {
		t.Errorf("PodName of long names must be deterministic and distinct")
	}
	// A cut that lands right after a dot or a hyphen must not leave ".-" in the name.
	for _, sep := range []string{".", "-"} { // (an At name, a DNS subdomain, never holds ".-" itself)
		for cut := 236; cut <= 240; cut++ {
			name := strings.Repeat("c", cut-len(sep)) + sep + strings.Repeat("d", 253-cut)
			if got := PodName(name); len(validation.IsDNS1123Subdomain(got)) != 0 {
				t.Errorf("PodName(%d chars, %q at %d) = %q: %v", len(name), sep, cut, got, validation.IsDNS1123Subdomain(got))
			}
		}
	}
}

func TestPod(t *testing.T) {
	proxyEnv := []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy:3128"}, {Name: "http_proxy", Value: "http://proxy:3128"}}
	mirrored := "mirror.example:5000/library/busybox@sha256:" + strings.Repeat("ab", 32)
	busybox := cnatv1alpha1.DefaultImage
	for _, tc := range []struct {
		name      string
		at        *cnatv1alpha1.At
		defaults  PodDefaults
		wantImage string
		wantCmd   []string
		wantLabel bool
	}{
		{"book example", newAt("example-at", "echo YAY", ""), PodDefaults{}, busybox, []string{"/bin/sh", "-c", "echo YAY"}, true},
		{"quoting kept whole", newAt("q", `echo "a  b" | tr a c > /dev/null`, ""), PodDefaults{}, busybox,
			[]string{"/bin/sh", "-c", `echo "a  b" | tr a c > /dev/null`}, true},
		{"own image", newAt("img", "date", "alpine:3.20"), PodDefaults{}, "alpine:3.20", []string{"/bin/sh", "-c", "date"}, true},
		{"operator's default image", newAt("d", "date", ""), PodDefaults{Image: mirrored}, mirrored, []string{"/bin/sh", "-c", "date"}, true},
		{"own image over the operator's", newAt("o", "date", "alpine:3.20"), PodDefaults{Image: mirrored}, "alpine:3.20",
			[]string{"/bin/sh", "-c", "date"}, true},
		{"proxy env passed on", newAt("p", "wget x", ""), PodDefaults{ProxyEnv: proxyenv.New(proxyEnv)}, busybox, []string{"/bin/sh", "-c", "wget x"}, true},
		{"name too long for a label", newAt(strings.Repeat("x", 70), "true", ""), PodDefaults{}, busybox, []string{"/bin/sh", "-c", "true"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := Pod(tc.at, tc.defaults)
			if pod.Name != PodName(tc.at.Name) || pod.Namespace != "ns" {
				t.Errorf("name %s/%s", pod.Namespace, pod.Name)
			}
			if !metav1.IsControlledBy(pod, tc.at) || !*pod.OwnerReferences[0].BlockOwnerDeletion ||
				pod.OwnerReferences[0].APIVersion != "cnat.programming-kubernetes.info/v1alpha1" || pod.OwnerReferences[0].Kind != "At" {
				t.Errorf("owner references %+v", pod.OwnerReferences)
			}
			if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("restartPolicy %s", pod.Spec.RestartPolicy)
			}
			if len(pod.Spec.Containers) != 1 {
				t.Fatalf("containers %d", len(pod.Spec.Containers))
			}
			c := pod.Spec.Containers[0]
			if c.Image != tc.wantImage || !equality.Semantic.DeepEqual(c.Command, tc.wantCmd) || len(c.Args) != 0 {
				t.Errorf("image %q command %q args %q", c.Image, c.Command, c.Args)
			}
			if !equality.Semantic.DeepEqual(c.Env, tc.defaults.ProxyEnv.Vars()) {
				t.Errorf("env %v, want %v", c.Env, tc.defaults.ProxyEnv)
			}
			if _, ok := pod.Labels[labelAt]; ok != tc.wantLabel {
				t.Errorf("labels %v", pod.Labels)
			}
			if app, ok := pod.Labels["app"]; ok != tc.wantLabel || (ok && app != tc.at.Name) {
				t.Errorf("labels %v: want app=<At name> (the book's label) when the name is a label value", pod.Labels)
			}
			// The restricted Pod Security Standard.
			psc := pod.Spec.SecurityContext
			if psc == nil || !ptr.Deref(psc.RunAsNonRoot, false) || ptr.Deref(psc.RunAsUser, 0) != 65534 ||
				psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod securityContext %+v", psc)
			}
			sc := c.SecurityContext
			if sc == nil || ptr.Deref(sc.AllowPrivilegeEscalation, true) || !ptr.Deref(sc.RunAsNonRoot, false) ||
				sc.Capabilities == nil || !equality.Semantic.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
				len(sc.Capabilities.Add) != 0 || ptr.Deref(sc.Privileged, false) {
				t.Errorf("container securityContext %+v", sc)
			}
			if got := ptr.Deref(pod.Spec.ActiveDeadlineSeconds, 0); got != cnatv1alpha1.DefaultActiveDeadlineSeconds {
				t.Errorf("activeDeadlineSeconds %d, want the default %d for an At without one", got, cnatv1alpha1.DefaultActiveDeadlineSeconds)
			}
			if ptr.Deref(pod.Spec.AutomountServiceAccountToken, true) {
				t.Errorf("the command needs no service account token")
			}
			if !equality.Semantic.DeepEqual(pod, Pod(tc.at, tc.defaults)) {
				t.Errorf("Pod is not deterministic")
			}
		})
	}
}

// The At's activeDeadlineSeconds becomes the pod's, and stays in the cached pod (the Upgradeable gate reads it).
func TestPodActiveDeadlineSeconds(t *testing.T) {
	for _, d := range []int64{1, 90, cnatv1alpha1.MaxActiveDeadlineSeconds} {
		at := newAt("bounded", "sleep infinity", "")
		at.Spec.ActiveDeadlineSeconds = ptr.To(d)
		pod := Pod(at, PodDefaults{})
		if got := ptr.Deref(pod.Spec.ActiveDeadlineSeconds, 0); got != d {
			t.Errorf("activeDeadlineSeconds %d, want %d", got, d)
		}
		trimmed, err := trimPod(pod)
		if err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(trimmed.(*corev1.Pod).Spec.ActiveDeadlineSeconds, 0); got != d {
			t.Errorf("cached pod: activeDeadlineSeconds %d, want %d", got, d)
		}
	}
}

func TestFromPod(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	created := metav1.NewTime(now.Add(-time.Minute))
	finished := metav1.NewTime(now.Add(-time.Second))
	pod := func(phase corev1.PodPhase, term *corev1.ContainerStateTerminated, reason string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x-pod", CreationTimestamp: created}}
		p.Status.Phase = phase
		p.Status.Reason = reason
		if term != nil {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: containerName, State: corev1.ContainerState{Terminated: term}}}
		}
		return p
	}
	for _, tc := range []struct {
		name       string
		pod        *corev1.Pod
		phase      string
		exit       *int32
		cond       metav1.ConditionStatus
		reason     string
		msgHas     string
		completion *metav1.Time
	}{
		{"just created", pod("", nil, ""), cnatv1alpha1.PhaseRunning, nil, metav1.ConditionUnknown, "Running", "runs", nil},
		{"pending pod", pod(corev1.PodPending, nil, ""), cnatv1alpha1.PhaseRunning, nil, metav1.ConditionUnknown, "Running", "runs", nil},
		{"running", pod(corev1.PodRunning, nil, ""), cnatv1alpha1.PhaseRunning, nil, metav1.ConditionUnknown, "Running", "runs", nil},
		{"succeeded", pod(corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: finished}, ""),
			cnatv1alpha1.PhaseDone, ptr.To[int32](0), metav1.ConditionTrue, "Completed", "exited 0", &finished},
		{"failed with exit code", pod(corev1.PodFailed, &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", Message: "boom", FinishedAt: finished}, ""),
			cnatv1alpha1.PhaseFailed, ptr.To[int32](3), metav1.ConditionFalse, "Error", "exited 3 (Error): boom", &finished},
		{"OOM killed", pod(corev1.PodFailed, &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: finished}, ""),
			cnatv1alpha1.PhaseFailed, ptr.To[int32](137), metav1.ConditionFalse, "OOMKilled", "exited 137 (OOMKilled)", &finished},
		{"evicted, no container status", pod(corev1.PodFailed, nil, "Evicted"),
			cnatv1alpha1.PhaseFailed, nil, metav1.ConditionFalse, "Evicted", "failed (Evicted)", &metav1.Time{Time: now}},
		{"killed at its activeDeadlineSeconds", func() *corev1.Pod {
			p := pod(corev1.PodFailed, &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error", FinishedAt: finished}, "DeadlineExceeded")
			p.Status.Message = "Pod was active on the node longer than the specified deadline"
			return p
		}(), cnatv1alpha1.PhaseFailed, ptr.To[int32](137), metav1.ConditionFalse, "DeadlineExceeded",
			"exited 137 (DeadlineExceeded): Pod was active on the node longer than the specified deadline", &finished},
		{"odd reason", pod(corev1.PodFailed, nil, "Deadline-Exceeded 1"),
			cnatv1alpha1.PhaseFailed, nil, metav1.ConditionFalse, "DeadlineExceeded1", "Deadline-Exceeded 1", &metav1.Time{Time: now}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := fromPod(cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhasePending}, tc.pod, now)
			if st.Phase != tc.phase || !equality.Semantic.DeepEqual(st.ExitCode, tc.exit) {
				t.Errorf("phase %s exit %v, want %s %v", st.Phase, st.ExitCode, tc.phase, tc.exit)
			}
			if st.StartTime == nil || !st.StartTime.Equal(&created) {
				t.Errorf("startTime %v, want the pod's creation %v", st.StartTime, created)
			}
			if !equality.Semantic.DeepEqual(st.CompletionTime, tc.completion) {
				t.Errorf("completionTime %v, want %v", st.CompletionTime, tc.completion)
			}
			c := meta.FindStatusCondition(st.Conditions, cnatv1alpha1.ConditionSucceeded)
			if c == nil || c.Status != tc.cond || c.Reason != tc.reason || !strings.Contains(st.Message, tc.msgHas) {
				t.Errorf("condition %+v message %q", c, st.Message)
			}
			// What the cache keeps of the pod (trimPod) gives the same status as the whole pod, with its
			// spec, conditions and other containers.
			full := tc.pod.DeepCopy()
			full.Spec = Pod(newAt("x", "echo hi", ""), PodDefaults{}).Spec
			full.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
			full.Status.ContainerStatuses = append([]corev1.ContainerStatus{{Name: "sidecar", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 9}}}}, full.Status.ContainerStatuses...)
			trimmed, err := trimPod(full.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			if tp := trimmed.(*corev1.Pod); len(tp.Spec.Containers) != 0 || len(tp.Status.Conditions) != 0 {
				t.Errorf("the cached pod keeps its spec or conditions: %+v", tp)
			}
			if got := fromPod(cnatv1alpha1.AtStatus{Phase: cnatv1alpha1.PhasePending}, trimmed.(*corev1.Pod), now); !equality.Semantic.DeepEqual(got, st) {
				t.Errorf("status from the cached pod differs:\n%+v\nwant\n%+v", got, st)
			}
			// Observing the same pod again, later, changes nothing (no write at rest).
			if again := fromPod(st, tc.pod, now.Add(time.Hour)); !equality.Semantic.DeepEqual(again, st) && !isFinished(st.Phase) {
				t.Errorf("status changed on a second look:\n%+v\n%+v", st, again)
			}
		})
	}
}

func TestPendingAndPodLost(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := pending(cnatv1alpha1.AtStatus{}, now.Add(time.Hour), now)
	if st.Phase != cnatv1alpha1.PhasePending || !strings.Contains(st.Message, "2026-01-02T04:04:05Z") {
		t.Errorf("pending %+v", st)
	}
	if again := pending(st, now.Add(time.Hour), now.Add(time.Minute)); !equality.Semantic.DeepEqual(again, st) {
		t.Errorf("Pending is not stable: %+v", again)
	}
	lost := podLost(fromPod(st, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a-pod"}}, now), "a-pod", now)
	c := meta.FindStatusCondition(lost.Conditions, cnatv1alpha1.ConditionSucceeded)
	if lost.Phase != cnatv1alpha1.PhaseFailed || c.Reason != "PodDeleted" || lost.ExitCode != nil {
		t.Errorf("lost %+v", lost)
	}
}

func TestStartDeadlineAndWhyNotStarted(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := newAt("x", "true", "nope:1")
	at.Spec.Schedule = "2026-01-02T03:00:00Z" // before the pod's creation: counted from the creation
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x-pod", CreationTimestamp: metav1.NewTime(created)}}
	if got := startDeadline(at, pod, 5*time.Minute); !got.Equal(created.Add(5 * time.Minute)) {
		t.Errorf("startDeadline = %v, want the creation + 5m", got)
	}
	at.Spec.Schedule = "2026-01-02T03:10:00Z" // after it (a clock ahead of the API server's): from the schedule
	if got := startDeadline(at, pod, 5*time.Minute); !got.Equal(time.Date(2026, 1, 2, 3, 15, 0, 0, time.UTC)) {
		t.Errorf("startDeadline = %v, want the schedule + 5m", got)
	}

	for _, tc := range []struct {
		name   string
		status corev1.PodStatus
		want   string
		notRun bool
	}{
		{"no status yet", corev1.PodStatus{}, "still Pending", true},
		{"pending", corev1.PodStatus{Phase: corev1.PodPending}, "still Pending", true},
		{"image pull", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "sidecar", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "Other"}}},
			{Name: containerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "ImagePullBackOff", Message: `Back-off pulling image "nope:1"`}}}}},
			`ImagePullBackOff: Back-off pulling image "nope:1"`, true},
		{"unschedulable", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "NotReady"},
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available"}}},
			"Unschedulable: 0/3 nodes are available", true},
		{"long message cut", corev1.PodStatus{Phase: corev1.PodPending, Reason: "X", Message: strings.Repeat("m", 2000)},
			"X: " + strings.Repeat("m", maxWhy-6) + "...", true},
		{"running", corev1.PodStatus{Phase: corev1.PodRunning}, "", false},
		{"failed", corev1.PodStatus{Phase: corev1.PodFailed}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod.DeepCopy()
			p.Status = tc.status
			if notStarted(p) != tc.notRun {
				t.Fatalf("notStarted = %v", !tc.notRun)
			}
			if !tc.notRun {
				return
			}
			// The cached pod tells the same.
			trimmed, err := trimPod(p.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []*corev1.Pod{p, trimmed.(*corev1.Pod)} {
				if got := whyNotStarted(q); got != tc.want {
					t.Errorf("whyNotStarted = %q, want %q", got, tc.want)
				}
			}
		})
	}

	now := created.Add(time.Hour)
	st := startTimedOut(fromPod(cnatv1alpha1.AtStatus{}, pod, created), "x-pod", 5*time.Minute, "ImagePullBackOff: no", now)
	c := meta.FindStatusCondition(st.Conditions, cnatv1alpha1.ConditionSucceeded)
	if st.Phase != cnatv1alpha1.PhaseFailed || st.ExitCode != nil || !st.CompletionTime.Time.Equal(now) ||
		c.Status != metav1.ConditionFalse || c.Reason != cnatv1alpha1.ReasonStartDeadlineExceeded ||
		st.Message != "pod x-pod did not start within 5m0s (ImagePullBackOff: no); it was deleted and the command is not run" {
		t.Errorf("startTimedOut: %+v", st)
	}
	if !isFinished(st.Phase) {
		t.Errorf("a start timeout must be final")
	}
}

// TestPodUID: the UID of an At's pod comes from its namespace's OpenShift UID range where it has one (its first
// UID), is NonRootUID where it has none, and a malformed range is an error (no pod is created; the At's Event
// says why).
func TestPodUID(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        int64
		wantErr     bool
	}{
		{"no annotations", nil, NonRootUID, false},
		{"other annotations", map[string]string{"openshift.io/sa.scc.supplemental-groups": "1000680000/10000"}, NonRootUID, false},
		{"valid range", map[string]string{UIDRangeAnnotation: "1000680000/10000"}, 1000680000, false},
		{"range of one", map[string]string{UIDRangeAnnotation: "1000/1"}, 1000, false},
		{"largest first UID", map[string]string{UIDRangeAnnotation: "2147483647/1"}, 2147483647, false},
		{"empty", map[string]string{UIDRangeAnnotation: ""}, 0, true},
		{"no size", map[string]string{UIDRangeAnnotation: "1000680000"}, 0, true},
		{"empty size", map[string]string{UIDRangeAnnotation: "1000680000/"}, 0, true},
		{"size zero", map[string]string{UIDRangeAnnotation: "1000680000/0"}, 0, true},
		{"negative size", map[string]string{UIDRangeAnnotation: "1000680000/-5"}, 0, true},
		{"root first", map[string]string{UIDRangeAnnotation: "0/10000"}, 0, true},
		{"negative first", map[string]string{UIDRangeAnnotation: "-1/10000"}, 0, true},
		{"past a UID", map[string]string{UIDRangeAnnotation: "4294967296/10"}, 0, true},
		{"a dash range", map[string]string{UIDRangeAnnotation: "1000680000-1000689999"}, 0, true},
		{"words", map[string]string{UIDRangeAnnotation: "nobody/1"}, 0, true},
		{"spaces", map[string]string{UIDRangeAnnotation: " 1000680000/10000"}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PodUID(tc.annotations)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("PodUID(%v) = %d, %v; want %d, error %v", tc.annotations, got, err, tc.want, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), UIDRangeAnnotation) {
				t.Errorf("the error %q does not name the annotation", err)
			}
		})
	}
}

// TestPodRunsAsTheGivenUID: the pod runs as PodDefaults.UID (user and group), non-root, and as NonRootUID when
// none is given.
func TestPodRunsAsTheGivenUID(t *testing.T) {
	at := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"},
		Spec: cnatv1alpha1.AtSpec{Schedule: "2019-04-12T10:12:00Z", Command: "id -u"}}
	for given, want := range map[int64]int64{0: NonRootUID, 1000680000: 1000680000} {
		psc := Pod(at, PodDefaults{UID: given}).Spec.SecurityContext
		if ptr.Deref(psc.RunAsUser, -1) != want || ptr.Deref(psc.RunAsGroup, -1) != want || !ptr.Deref(psc.RunAsNonRoot, false) {
			t.Errorf("UID %d: pod securityContext %+v, want runAsUser and runAsGroup %d, runAsNonRoot", given, psc, want)
		}
	}
}
