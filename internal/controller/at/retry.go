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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
)

// Retries (spec.retries) keep "exactly once" per attempt:
//   - attempt k runs in the pod AttemptPodName(at, k), a name fixed in advance: attempt 0's is PodName, the
//     one pod name of every release before retries, so an upgrade finds a run in progress under its name;
//   - attempt k+1's pod is created only once the At's stored status records attempt k as failed (phase
//     RUNNING, reason Retrying: currentAttempt says "retrying"), through the same path as the first pod (the
//     At read past the cache, the create that meets AlreadyExists adopts): a crash in between finds the pod
//     by its name. Attempt k's pod had ended (Failed) by then, so two attempts never run at once;
//   - every attempt shares the run's activeDeadlineSeconds, counted from the first attempt's start (as a
//     Job's): a later attempt's pod gets what is left. The Upgradeable gate's bound (runBound: the first
//     start, activeDeadlineSeconds and the start deadline) is the same as without retries.

// AttemptPodName is the pod of an At's attempt (0 the first): PodName for the first, <PodName>-<attempt> after
// it, cut and made unique with a hash when too long.
func AttemptPodName(atName string, attempt int32) string {
	if attempt <= 0 {
		return PodName(atName)
	}
	suffix := "-pod-" + strconv.Itoa(int(attempt))
	if name := atName + suffix; len(name) <= validation.DNS1123SubdomainMaxLength {
		return name
	}
	sum := sha256.Sum256([]byte(atName))
	suffix = "-" + hex.EncodeToString(sum[:])[:10] + suffix
	return strings.TrimRight(atName[:validation.DNS1123SubdomainMaxLength-len(suffix)], ".-") + suffix
}

// currentAttempt is the attempt an At is on, and whether it is retrying: RUNNING after attempt k failed, on its
// way to k+1, whose pod may not exist yet. An At without recorded attempts (PENDING, or stored by a release
// without them) is on attempt 0.
func currentAttempt(st cnatv1alpha1.AtStatus) (int32, bool) {
	if len(st.Attempts) == 0 {
		return 0, false
	}
	last := st.Attempts[len(st.Attempts)-1]
	if st.Phase == cnatv1alpha1.PhaseRunning && last.CompletionTime != nil {
		return last.Attempt + 1, true
	}
	return last.Attempt, false
}

// runStart is when the At's run began, from which all attempts' activeDeadlineSeconds counts: the first
// attempt's pod creation (status.startTime), counted no earlier than the schedule (as startDeadline).
func runStart(at *cnatv1alpha1.At, now time.Time) time.Time {
	from := now
	if at.Status.StartTime != nil {
		from = at.Status.StartTime.Time
	}
	return notBeforeSchedule(at, from)
}

// attemptDeadlineSeconds is the activeDeadlineSeconds of attempt k's pod: the At's for the first, what is left
// of it since the run's start for a later one (0: nothing is left, no attempt).
func attemptDeadlineSeconds(at *cnatv1alpha1.At, k int32, now time.Time) int64 {
	ads := activeDeadlineSeconds(at)
	if k == 0 {
		return ads
	}
	left := ads - int64(now.Sub(runStart(at, now))/time.Second)
	return max(min(left, ads), 0)
}

// observe is the status of an At whose attempt k runs in pod: fromPod, with the attempt recorded; a failed
// attempt that spec.retries, and the time left of activeDeadlineSeconds, allow to be followed by another makes
// the At retrying (RUNNING, reason Retrying) instead of FAILED. A pure function of its inputs, as fromPod.
func observe(at *cnatv1alpha1.At, pod *corev1.Pod, k int32, now time.Time) cnatv1alpha1.AtStatus {
	out := fromPod(at.Status, pod, now)
	a := cnatv1alpha1.AtAttempt{Attempt: k, PodName: pod.Name, StartTime: attemptStart(out, pod, k, now)}
	if out.Phase == cnatv1alpha1.PhaseDone || out.Phase == cnatv1alpha1.PhaseFailed {
		a.CompletionTime, a.ExitCode = out.CompletionTime, out.ExitCode
		if c := succeededCondition(out); c != nil {
			a.Reason = c.Reason
		}
	}
	recordAttempt(&out, a)
	if out.Phase != cnatv1alpha1.PhaseFailed || k >= ptr.Deref(at.Spec.Retries, 0) ||
		a.Reason == cnatv1alpha1.ReasonDeadlineExceeded || attemptDeadlineSeconds(at, k+1, now) <= 0 {
		return out
	}
	retries := ptr.Deref(at.Spec.Retries, 0)
	out.Phase = cnatv1alpha1.PhaseRunning
	out.ExitCode, out.CompletionTime = nil, nil
	out.Message = fmt.Sprintf("attempt %d of %d failed (%s); attempt %d starts as pod %s",
		k+1, retries+1, strings.TrimPrefix(out.Message, "the command "), k+2, AttemptPodName(at.Name, k+1))
	setSucceeded(&out, metav1.ConditionUnknown, cnatv1alpha1.ReasonRetrying, out.Message, now)
	return out
}

// attemptStart is when attempt k started: once recorded, its start never moves (attempt 0's is the run's,
// status.startTime, which fromPod set), so a pod made later under the attempt's name, by whoever may create
// pods there, is never taken for the run the Upgradeable gate holds for (recordedRun); until then, pod's
// creation (now for a pod not yet stored).
func attemptStart(s cnatv1alpha1.AtStatus, pod *corev1.Pod, k int32, now time.Time) *metav1.Time {
	for _, a := range s.Attempts {
		if a.Attempt == k && a.StartTime != nil {
			return a.StartTime.DeepCopy()
		}
	}
	if k == 0 && s.StartTime != nil {
		return s.StartTime.DeepCopy()
	}
	created := pod.CreationTimestamp
	if created.IsZero() {
		created = metav1.NewTime(now)
	}
	return &created
}

// recordAttempt puts a in s.Attempts, in place of the record of the same attempt.
func recordAttempt(s *cnatv1alpha1.AtStatus, a cnatv1alpha1.AtAttempt) {
	for i := range s.Attempts {
		if s.Attempts[i].Attempt == a.Attempt {
			s.Attempts[i] = a
			return
		}
	}
	s.Attempts = append(s.Attempts, a)
}

// noTimeLeft is the final status of an At retrying when no time is left of its activeDeadlineSeconds for the
// next attempt (the operator was down between two attempts): FAILED, the next attempt never runs.
func noTimeLeft(s cnatv1alpha1.AtStatus, k int32, now time.Time) cnatv1alpha1.AtStatus {
	out := *s.DeepCopy()
	out.Phase = cnatv1alpha1.PhaseFailed
	out.CompletionTime = &metav1.Time{Time: now}
	if n := len(out.Attempts); n > 0 {
		out.ExitCode = out.Attempts[n-1].ExitCode
	}
	out.Message = fmt.Sprintf("no time is left of activeDeadlineSeconds for attempt %d; it is not run", k+1)
	setSucceeded(&out, metav1.ConditionFalse, cnatv1alpha1.ReasonDeadlineExceeded, out.Message, now)
	return out
}
