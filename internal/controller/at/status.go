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
	"fmt"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/controller/health"
)

// isFinished tells whether phase is final: the command ran and the At never runs it again.
func isFinished(phase string) bool {
	return phase == cnatv1alpha1.PhaseDone || phase == cnatv1alpha1.PhaseFailed || phase == cnatv1alpha1.PhaseMissed
}

// fromPod is the status of an At whose pod is pod, observed at now: the phase follows the pod. It is a pure
// function of its inputs, and returns the same status for the same pod, so a converged At is never rewritten.
func fromPod(s cnatv1alpha1.AtStatus, pod *corev1.Pod, now time.Time) cnatv1alpha1.AtStatus {
	out := *s.DeepCopy()
	if out.StartTime == nil {
		t := pod.CreationTimestamp
		if t.IsZero() {
			t = metav1.NewTime(now)
		}
		out.StartTime = &t
	}
	term := terminated(pod)
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		out.Phase = cnatv1alpha1.PhaseDone
		out.ExitCode = exitCode(term, 0)
		out.CompletionTime = finishedAt(term, now)
		out.Message = "the command exited 0"
		if term != nil && term.Message != "" {
			out.Message += ": " + capMessage(term.Message)
		}
		setSucceeded(&out, metav1.ConditionTrue, cnatv1alpha1.ReasonCompleted, out.Message, now)
	case corev1.PodFailed:
		out.Phase = cnatv1alpha1.PhaseFailed
		out.ExitCode = exitCode(term, -1)
		out.CompletionTime = finishedAt(term, now)
		// The pod's own reason (DeadlineExceeded, Evicted, ...) says why the kubelet ended it, and wins over
		// the container's, which only tells how the command died of it (Error, exit 137).
		var reason, msg string
		if term != nil {
			reason, msg = term.Reason, term.Message
		}
		if pod.Status.Reason != "" {
			reason = pod.Status.Reason
			if pod.Status.Message != "" {
				msg = pod.Status.Message
			}
		}
		if reason == "" {
			reason = cnatv1alpha1.ReasonFailed
		}
		out.Message = fmt.Sprintf("the command failed (%s)", reason)
		if out.ExitCode != nil && *out.ExitCode >= 0 {
			out.Message = fmt.Sprintf("the command exited %d (%s)", *out.ExitCode, reason)
		}
		if msg != "" {
			out.Message += ": " + capMessage(msg)
		}
		setSucceeded(&out, metav1.ConditionFalse, conditionReason(reason), out.Message, now)
	default:
		out.Phase = cnatv1alpha1.PhaseRunning
		out.Message = fmt.Sprintf("pod %s runs the command", pod.Name)
		setSucceeded(&out, metav1.ConditionUnknown, cnatv1alpha1.ReasonRunning, out.Message, now)
	}
	return out
}

// notStarted tells whether pod has not started its command yet: Pending, or without any status so far.
func notStarted(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodPending || pod.Status.Phase == ""
}

// startDeadline is when a pod that has not started is given up on: limit after the pod's creation, counted
// no earlier than the At's schedule (the pod is created once the schedule is due, so in a cluster the two
// agree; the schedule keeps the count in the clock's own time when the API server's differs).
func startDeadline(at *cnatv1alpha1.At, pod *corev1.Pod, limit time.Duration) time.Time {
	return notBeforeSchedule(at, pod.CreationTimestamp.Time).Add(limit)
}

// notBeforeSchedule is t, or the At's schedule when that is later (t when the schedule cannot be read).
func notBeforeSchedule(at *cnatv1alpha1.At, t time.Time) time.Time {
	if when, err := Schedule(at); err == nil && when.After(t) {
		return when
	}
	return t
}

// MaxTerminationMessage bounds what of the command's termination message (what it wrote to
// /dev/termination-log, or on failure the end of its output: the container's FallbackToLogsOnError) reaches the
// At's status.message. The kubelet keeps at most 4096 bytes of it, or of the log 80 lines and 2048 bytes.
const MaxTerminationMessage = 1024

// capMessage cuts m to MaxTerminationMessage bytes, at a character's boundary, keeping its end (where a
// failing command says why).
func capMessage(m string) string {
	if len(m) <= MaxTerminationMessage {
		return m
	}
	cut := len(m) - (MaxTerminationMessage - 3)
	for cut < len(m) && !utf8.RuneStart(m[cut]) {
		cut++
	}
	return "..." + m[cut:]
}

// maxWhy bounds the pod's own words in an At's message.
const maxWhy = 512

// whyNotStarted is what the pod says keeps it from starting: the command's container waiting (ErrImagePull,
// ImagePullBackOff, CreateContainerConfigError, ...), the scheduler's reason, or the pod's.
func whyNotStarted(pod *corev1.Pod) string {
	why := ""
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == containerName && cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
			why = joinReason(cs.State.Waiting.Reason, cs.State.Waiting.Message)
		}
	}
	if why == "" {
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				why = joinReason(c.Reason, c.Message)
			}
		}
	}
	if why == "" && pod.Status.Reason != "" {
		why = joinReason(pod.Status.Reason, pod.Status.Message)
	}
	if why == "" {
		why = "still Pending"
	}
	if len(why) > maxWhy {
		why = why[:maxWhy-3] + "..."
	}
	return why
}

func joinReason(reason, msg string) string {
	if msg == "" {
		return reason
	}
	if reason == "" {
		return msg
	}
	return reason + ": " + msg
}

// startTimedOut is the final status of an At whose pod did not start within limit (why: the pod's own reason)
// and was deleted: the command never ran, and is not run.
func startTimedOut(s cnatv1alpha1.AtStatus, podName string, limit time.Duration, why string, now time.Time) cnatv1alpha1.AtStatus {
	out := *s.DeepCopy()
	out.Phase = cnatv1alpha1.PhaseFailed
	out.CompletionTime = &metav1.Time{Time: now}
	out.Message = fmt.Sprintf("pod %s did not start within %s (%s); it was deleted and the command is not run", podName, limit, why)
	finishLastAttempt(&out, cnatv1alpha1.ReasonStartDeadlineExceeded, now)
	setSucceeded(&out, metav1.ConditionFalse, cnatv1alpha1.ReasonStartDeadlineExceeded, out.Message, now)
	return out
}

// pending is the status of an At waiting for its schedule.
func pending(s cnatv1alpha1.AtStatus, schedule time.Time, now time.Time) cnatv1alpha1.AtStatus {
	out := *s.DeepCopy()
	out.Phase = cnatv1alpha1.PhasePending
	out.NextRunTime = &metav1.Time{Time: schedule.UTC()}
	out.Message = "the command runs at " + schedule.UTC().Format(cnatv1alpha1.ScheduleLayout)
	setSucceeded(&out, metav1.ConditionUnknown, cnatv1alpha1.ReasonScheduled, out.Message, now)
	return out
}

// suspended is the status of an At whose spec.suspend keeps its command from starting.
func suspended(s cnatv1alpha1.AtStatus, schedule time.Time, now time.Time) cnatv1alpha1.AtStatus {
	out := waiting(s, metav1.ConditionUnknown, cnatv1alpha1.ReasonSuspended,
		"suspended: the command, due at "+schedule.UTC().Format(cnatv1alpha1.ScheduleLayout)+", starts once suspend is false", now)
	out.NextRunTime = &metav1.Time{Time: schedule.UTC()}
	return out
}

// missed is the final status of an At whose command had not started deadline after its schedule: it never
// runs. No pod exists (the run did not start), so no time or exit code is recorded.
func missed(s cnatv1alpha1.AtStatus, schedule time.Time, deadline time.Duration, wasSuspended bool, now time.Time) cnatv1alpha1.AtStatus {
	out := *s.DeepCopy()
	out.Phase = cnatv1alpha1.PhaseMissed
	why := ""
	if wasSuspended {
		why = " (suspended)"
	}
	out.Message = fmt.Sprintf("the command, due at %s, had not started %s later%s, past startingDeadlineSeconds (%s); it is not run",
		schedule.UTC().Format(cnatv1alpha1.ScheduleLayout), now.Sub(schedule).Truncate(time.Second), why, deadline)
	setSucceeded(&out, metav1.ConditionFalse, cnatv1alpha1.ReasonMissed, out.Message, now)
	return out
}

// waiting is the status of a due At that cannot start (reason says why), still PENDING.
func waiting(s cnatv1alpha1.AtStatus, status metav1.ConditionStatus, reason, msg string, now time.Time) cnatv1alpha1.AtStatus {
	out := *s.DeepCopy()
	out.Phase = cnatv1alpha1.PhasePending
	out.Message = msg
	setSucceeded(&out, status, reason, msg, now)
	return out
}

// podLost is the final status of an At whose pod disappeared before it finished: the command may have run,
// so it is not run again.
func podLost(s cnatv1alpha1.AtStatus, podName string, now time.Time) cnatv1alpha1.AtStatus {
	out := *s.DeepCopy()
	out.Phase = cnatv1alpha1.PhaseFailed
	out.CompletionTime = &metav1.Time{Time: now}
	out.Message = fmt.Sprintf("pod %s was deleted before it finished; the command is not run again", podName)
	finishLastAttempt(&out, cnatv1alpha1.ReasonPodDeleted, now)
	setSucceeded(&out, metav1.ConditionFalse, cnatv1alpha1.ReasonPodDeleted, out.Message, now)
	return out
}

// finishLastAttempt records the end of the last attempt, which the pod did not tell.
func finishLastAttempt(s *cnatv1alpha1.AtStatus, reason string, now time.Time) {
	if n := len(s.Attempts); n > 0 && s.Attempts[n-1].CompletionTime == nil {
		s.Attempts[n-1].CompletionTime = &metav1.Time{Time: now}
		s.Attempts[n-1].Reason = reason
	}
}

// verdict is what generic tools are told of an At with status s. Ready means the At is on track and needs
// nobody: scheduled (PENDING with a schedule and time zone it can read, or suspended as its spec asks),
// RUNNING, or DONE. A far-off schedule is therefore Ready at once, so that `kubectl wait --for=condition=Ready`
// and Flux's health checks do not wait until the command runs, which may be days ahead; whether the command
// succeeded is Succeeded (`kubectl wait --for=condition=Succeeded`). FAILED, MISSED, a schedule or time zone
// it cannot read, and a pod name taken by another pod need a person: Stalled. A due At whose pod is not made
// yet is Reconciling.
func verdict(s cnatv1alpha1.AtStatus) health.Verdict {
	v := health.Verdict{State: health.InProgress, Reason: cnatv1alpha1.ReasonScheduled, Message: s.Message}
	c := succeededCondition(s)
	if c != nil {
		v.Reason, v.Message = c.Reason, c.Message
	}
	if v.Reason == cnatv1alpha1.ReasonPodNameTaken {
		v.State = health.Failed // PENDING, or RUNNING between two attempts
		return v
	}
	switch s.Phase {
	case cnatv1alpha1.PhaseFailed, cnatv1alpha1.PhaseMissed:
		v.State = health.Failed
	case cnatv1alpha1.PhaseDone, cnatv1alpha1.PhaseRunning:
		v.State = health.Current
	case cnatv1alpha1.PhasePending:
		switch v.Reason {
		case cnatv1alpha1.ReasonScheduled, cnatv1alpha1.ReasonSuspended:
			v.State = health.Current
		case cnatv1alpha1.ReasonInvalidSchedule, cnatv1alpha1.ReasonUnknownTimeZone:
			v.State = health.Failed
		}
	}
	return v
}

func succeededCondition(s cnatv1alpha1.AtStatus) *metav1.Condition {
	return meta.FindStatusCondition(s.Conditions, cnatv1alpha1.ConditionSucceeded)
}

func setSucceeded(s *cnatv1alpha1.AtStatus, status metav1.ConditionStatus, reason, msg string, now time.Time) {
	meta.SetStatusCondition(&s.Conditions, metav1.Condition{
		Type:               cnatv1alpha1.ConditionSucceeded,
		Status:             status,
		Reason:             reason,
		Message:            msg,
		LastTransitionTime: metav1.NewTime(now),
	})
}

// conditionReason makes a pod's reason (such as "Error", "OOMKilled", "DeadlineExceeded") a valid condition
// reason: letters first, then letters, digits and underscores.
func conditionReason(r string) string {
	b := make([]byte, 0, len(r))
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			b = append(b, c)
		case (c >= '0' && c <= '9') || c == '_':
			if len(b) > 0 {
				b = append(b, c)
			}
		}
	}
	if len(b) == 0 {
		return cnatv1alpha1.ReasonFailed
	}
	return string(b)
}

func terminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == containerName && cs.State.Terminated != nil {
			return cs.State.Terminated
		}
	}
	return nil
}

func exitCode(t *corev1.ContainerStateTerminated, fallback int32) *int32 {
	if t != nil {
		c := t.ExitCode
		return &c
	}
	if fallback < 0 {
		return nil
	}
	return &fallback
}

func finishedAt(t *corev1.ContainerStateTerminated, now time.Time) *metav1.Time {
	if t != nil && !t.FinishedAt.IsZero() {
		f := t.FinishedAt
		return &f
	}
	return &metav1.Time{Time: now}
}
