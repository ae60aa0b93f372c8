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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The phases of an At. The book's three (PENDING, RUNNING, DONE) plus FAILED for a command that exits non-zero,
// and MISSED for a command that never started because startingDeadlineSeconds passed first. DONE, FAILED and
// MISSED are final.
const (
	PhasePending = "PENDING"
	PhaseRunning = "RUNNING"
	PhaseDone    = "DONE"
	PhaseFailed  = "FAILED"
	PhaseMissed  = "MISSED"
)

// ScheduleLayout is the format of spec.schedule without timeZone: a UTC time to the second.
const ScheduleLayout = "2006-01-02T15:04:05Z"

// LocalScheduleLayout is the format of spec.schedule with a timeZone: a wall-clock time to the second, read in
// that zone (no "Z", no offset).
const LocalScheduleLayout = "2006-01-02T15:04:05"

// DefaultImage runs the command when spec.image is empty and the operator's DefaultImageEnv is unset.
const DefaultImage = "docker.io/library/busybox:1.36"

// DefaultImageEnv names the operator's environment variable that overrides DefaultImage. The CSV sets it and
// lists the same image in relatedImages (operator-sdk's RELATED_IMAGE_ convention), so a mirror of the bundle's
// related images holds what an At runs by default.
const DefaultImageEnv = "RELATED_IMAGE_BUSYBOX"

// The bounds of spec.activeDeadlineSeconds; keep them equal to the field's markers below.
const (
	// DefaultActiveDeadlineSeconds is the run's deadline when the At sets none: one hour.
	DefaultActiveDeadlineSeconds = 3600
	// MaxActiveDeadlineSeconds is the longest deadline an At may ask for: one day.
	MaxActiveDeadlineSeconds = 86400
)

// MaxRetries is the most spec.retries may allow; keep it equal to the field's marker below.
const MaxRetries = 5

// ConditionSucceeded tells whether the command ran and exited 0: Unknown while PENDING or RUNNING, True once
// DONE, False once FAILED or MISSED (and while PENDING when the schedule or the time zone cannot be read).
const ConditionSucceeded = "Succeeded"

// Reasons of the Succeeded condition. A FAILED At whose pod failed carries the pod's own reason instead
// (Error, OOMKilled, DeadlineExceeded, ...), or ReasonFailed when the pod gives none.
const (
	// ReasonScheduled: PENDING, waiting for the schedule.
	ReasonScheduled = "Scheduled"
	// ReasonInvalidSchedule: PENDING, the schedule is not a UTC time (only an At stored before the schema
	// checked it).
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonUnknownTimeZone: PENDING, spec.timeZone names no zone of the operator's time zone database; the At
	// runs once the zone is fixed (an edit of timeZone, allowed while PENDING).
	ReasonUnknownTimeZone = "UnknownTimeZone"
	// ReasonSuspended: PENDING, spec.suspend keeps the command from starting.
	ReasonSuspended = "Suspended"
	// ReasonMissed: MISSED, the command had not started startingDeadlineSeconds after the schedule (the
	// operator was down, the At was created or resumed too late); it is never run.
	ReasonMissed = "Missed"
	// ReasonRetrying: RUNNING between two attempts: one failed and spec.retries allows another, which starts
	// at once under its own pod name.
	ReasonRetrying = "Retrying"
	// ReasonPodNameTaken: PENDING and due, but a pod the At does not own has its pod's name.
	ReasonPodNameTaken = "PodNameTaken"
	// ReasonRunning: RUNNING, the pod runs the command.
	ReasonRunning = "Running"
	// ReasonCompleted: DONE, the command exited 0.
	ReasonCompleted = "Completed"
	// ReasonPodDeleted: FAILED, the pod was deleted before it finished; the command is not run again.
	ReasonPodDeleted = "PodDeleted"
	// ReasonFailed: FAILED, the pod failed without saying why.
	ReasonFailed = "Failed"
	// ReasonDeadlineExceeded: FAILED, the kubelet killed the pod at its activeDeadlineSeconds (the pod's own
	// reason, kept as it is).
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonStartDeadlineExceeded: FAILED, the pod never started (its image could not be pulled, it could
	// not be scheduled, ...) within the operator's start deadline; it was deleted and the command is not run.
	// The message carries the pod's own reason, such as ImagePullBackOff.
	ReasonStartDeadlineExceeded = "StartDeadlineExceeded"
)

// Reasons of the Upgradeable condition the operator reports to OLM in its OperatorCondition: an upgrade
// waits while an At runs its command.
const (
	ReasonAtRunning   = "AtRunning"
	ReasonNoAtRunning = "NoAtRunning"
)

// AtSpec is a command to run once, at a given time.
// +kubebuilder:validation:XValidation:rule="has(self.timeZone) ? !self.schedule.endsWith('Z') : self.schedule.endsWith('Z')",message="schedule ends in Z (UTC) without timeZone, and has no Z with timeZone (a wall-clock time in that zone, such as 2019-04-12T12:12:00)"
type AtSpec struct {
	// schedule has a calendar rule of its own rather than format date-time: CEL would read a date-time as a
	// timestamp and not see whether it ends in Z (the rule on AtSpec). The rule checks the shape first, so a
	// malformed schedule meets the pattern's message, not a conversion error.

	// schedule is when the command runs: a UTC time such as "2019-04-12T10:12:00Z", or, with timeZone, a
	// wall-clock time in that zone without "Z" or offset, such as "2019-04-12T12:12:00". A time in the past
	// runs the command at once.
	// +required
	// +kubebuilder:validation:MaxLength=20
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?$`
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?$') || (int(self.substring(5, 7)) >= 1 && int(self.substring(5, 7)) <= 12 && int(self.substring(8, 10)) >= 1 && int(self.substring(8, 10)) <= (self.substring(5, 7) == '02' ? ((int(self.substring(0, 4)) % 4 == 0 && int(self.substring(0, 4)) % 100 != 0) || int(self.substring(0, 4)) % 400 == 0 ? 29 : 28) : (self.substring(5, 7) in ['04', '06', '09', '11'] ? 30 : 31)) && int(self.substring(11, 13)) <= 23 && int(self.substring(14, 16)) <= 59 && int(self.substring(17, 19)) <= 59)",message="schedule must be a date and time that exist on the calendar, such as 2019-04-12T10:12:00Z"
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Schedule",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Schedule string `json:"schedule"`

	// timeZone is the IANA time zone (such as "Europe/Berlin") the schedule is read in; without it the
	// schedule is UTC and ends in "Z". With it the schedule has no "Z" and no offset: one time, one meaning
	// (as CronJob refuses CRON_TZ in a schedule with timeZone). A wall-clock time the zone skips (a
	// daylight-saving gap) runs as much later as the gap is long (02:30 on a night that jumps from 02:00 to
	// 03:00 runs at 03:30); one the zone has twice (the hour repeated in autumn) runs at the first. A name the
	// operator's zone database does not know leaves the At PENDING with reason UnknownTimeZone.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*$`
	// +kubebuilder:validation:XValidation:rule="self != 'Local'",message="timeZone Local would be the operator's zone, not yours: name an IANA zone such as Europe/Berlin"
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Time Zone",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	TimeZone *string `json:"timeZone,omitempty"`

	// suspend, while true, keeps the command from starting: the At stays PENDING (reason Suspended) past its
	// schedule, and runs once it is set false again, if startingDeadlineSeconds has not passed by then. It
	// does not stop a command that already started.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Suspend",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	Suspend *bool `json:"suspend,omitempty"`

	// startingDeadlineSeconds is how late after the schedule the command may still start, as CronJob's: a run
	// that could not start by then (the operator was down, the At was created or resumed too late) is never
	// started, and the At is MISSED (reason Missed). Unset, the command runs however late.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Starting Deadline Seconds",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number","urn:alm:descriptor:com.tectonic.ui:advanced"}
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// command runs in a shell, as `/bin/sh -c "<command>"`, so quoting, pipes and redirections work.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Command",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Command string `json:"command"`

	// image runs the command (default busybox, the image the operator's RELATED_IMAGE_BUSYBOX names). It must have /bin/sh and run as a non-root user (65534).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// env is the command's environment, after the operator's proxy settings: literal values, or a key of a
	// Secret or ConfigMap of the At's own namespace (valueFrom), which the kubelet reads when it starts the
	// pod, so the operator never reads it. A missing Secret or key keeps the pod from starting (unless
	// optional), and the At ends FAILED, reason StartDeadlineExceeded, after the start deadline.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	Env []AtEnvVar `json:"env,omitempty"`

	// resources are the command's container's requests and limits of cpu, memory and ephemeral-storage.
	// +optional
	Resources *AtResources `json:"resources,omitempty"`

	// retries is how many more attempts a failed command gets (default 0: at most once, as always). Each
	// attempt runs in a pod whose name is fixed in advance (<name>-pod for the first, as before, then
	// <name>-pod-1, <name>-pod-2, ...), only once the one before failed, never two at once, and is recorded in
	// status.attempts. All attempts share the run's activeDeadlineSeconds, counted from the first one's start
	// (as a Job's), so retries never hold operator upgrades longer than one run could. A pod that never
	// started (StartDeadlineExceeded), was deleted (PodDeleted) or reached the deadline is not retried. It
	// cannot change once the command started.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Retries",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number","urn:alm:descriptor:com.tectonic.ui:advanced"}
	Retries *int32 `json:"retries,omitempty"`

	// ttlSecondsAfterFinished deletes the pod that ran the command this many seconds after it finished. The
	// At stays, with its phase and exit code; it never runs again.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="TTL Seconds After Finished",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number","urn:alm:descriptor:com.tectonic.ui:advanced"}
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// activeDeadlineSeconds bounds the run: it becomes the pod's activeDeadlineSeconds, which the kubelet
	// counts from the moment it accepted the pod (an image pull included). A command still running then is
	// killed and the At is FAILED with reason DeadlineExceeded. While a command runs it holds operator
	// upgrades (OLM's Upgradeable condition), so every run needs an end: the default is one hour (3600), for
	// the short one-off commands an At is made for, and the maximum is one day (86400); a longer task belongs
	// in a Job. It cannot change once the command started.
	// +optional
	// +kubebuilder:default=3600
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Active Deadline Seconds",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number","urn:alm:descriptor:com.tectonic.ui:advanced"}
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
}

// AtEnvVar is an environment variable of the command: value, or valueFrom, as in a pod.
// +kubebuilder:validation:XValidation:rule="!(has(self.value) && has(self.valueFrom))",message="an env entry has value or valueFrom, not both"
type AtEnvVar struct {
	// name of the variable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Name string `json:"name"`

	// value is the variable's literal value. Readers of the At read it: keep secrets in Secrets (valueFrom).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Value string `json:"value,omitempty"`

	// valueFrom takes the value from a key of a Secret or a ConfigMap of the At's namespace.
	// +optional
	ValueFrom *AtEnvVarSource `json:"valueFrom,omitempty"`
}

// AtEnvVarSource names one key of a Secret or of a ConfigMap in the At's own namespace (a pod can reach no
// other).
// +kubebuilder:validation:XValidation:rule="has(self.secretKeyRef) != has(self.configMapKeyRef)",message="valueFrom names exactly one of secretKeyRef and configMapKeyRef"
type AtEnvVarSource struct {
	// secretKeyRef is a key of a Secret of the At's namespace.
	// +optional
	SecretKeyRef *AtKeySelector `json:"secretKeyRef,omitempty"`
	// configMapKeyRef is a key of a ConfigMap of the At's namespace.
	// +optional
	ConfigMapKeyRef *AtKeySelector `json:"configMapKeyRef,omitempty"`
}

// AtKeySelector is a key of a Secret or a ConfigMap of the At's namespace.
type AtKeySelector struct {
	// name of the Secret or ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// key in it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
	// optional: the command starts without the variable when the Secret, ConfigMap or key is missing.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}

// AtResources are the requests and limits of the command's container. Only cpu, memory and
// ephemeral-storage: an At is a short command, not a workload for devices or huge pages (a Job is).
// +kubebuilder:validation:XValidation:rule="!has(self.limits) || !has(self.requests) || self.requests.all(k, !(k in self.limits) || quantity(string(self.limits[k])).compareTo(quantity(string(self.requests[k]))) >= 0)",message="a request is at most its limit"
type AtResources struct {
	// requests: what the scheduler reserves for the command.
	// +optional
	// +kubebuilder:validation:MaxProperties=3
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage'])",message="resources are cpu, memory and ephemeral-storage only"
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// limits: the most the command may use.
	// +optional
	// +kubebuilder:validation:MaxProperties=3
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['cpu', 'memory', 'ephemeral-storage'])",message="resources are cpu, memory and ephemeral-storage only"
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// AtStatus is what happened to the command.
type AtStatus struct {
	// phase is PENDING until the schedule, RUNNING while the pod runs, then DONE (exit code 0) or FAILED; or
	// MISSED when the command could not start within startingDeadlineSeconds.
	// +optional
	// +kubebuilder:validation:Enum=PENDING;RUNNING;DONE;FAILED;MISSED
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Phase",xDescriptors={"urn:alm:descriptor:io.kubernetes.phase"}
	Phase string `json:"phase,omitempty"`

	// nextRunTime is when the command is due (the schedule, read in timeZone), while the At is PENDING.
	// +optional
	NextRunTime *metav1.Time `json:"nextRunTime,omitempty"`

	// startTime is when the pod was created (the first attempt's, with retries).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the command finished.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Completion Time",xDescriptors={"urn:alm:descriptor:timestamp"}
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// exitCode is the command's exit code, once it finished.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Exit Code",xDescriptors={"urn:alm:descriptor:text"}
	ExitCode *int32 `json:"exitCode,omitempty"`

	// message tells why the At is in its phase (the pod's reason on failure).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Message",xDescriptors={"urn:alm:descriptor:io.kubernetes.phase:reason"}
	Message string `json:"message,omitempty"`

	// conditions: Succeeded (see the phases); and Ready, Reconciling and Stalled as kstatus reads them (Flux,
	// kpt), exactly one of them True: Ready while the At is on track (PENDING with a schedule it can read, suspended,
	// RUNNING or DONE: a far-off schedule is Ready at once), Stalled once FAILED or MISSED, or while its schedule,
	// time zone or pod name stops it.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// attempts records each attempt to run the command, the first one first: its pod, when it was created
	// and finished, its exit code and reason.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=6
	Attempts []AtAttempt `json:"attempts,omitempty"`

	// observedGeneration is the generation of the spec this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// AtAttempt is one attempt to run an At's command.
type AtAttempt struct {
	// attempt counts from 0, the first.
	// +kubebuilder:validation:Minimum=0
	Attempt int32 `json:"attempt"`
	// podName is the attempt's pod.
	PodName string `json:"podName"`
	// startTime is when the pod was created (the first attempt's, with retries).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the command finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// exitCode is the command's exit code, once it finished (none when the pod failed without one).
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// reason is how the attempt ended: Completed, or the pod's reason (Error, OOMKilled, ...).
	// +optional
	Reason string `json:"reason,omitempty"`
}

// At runs a command once, in a pod, at the scheduled time (cnat, "cloud native at", from Programming Kubernetes).
// Once the pod exists, schedule and command cannot change: the command ran, or runs, as it was.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=operator101
// +operator-sdk:csv:customresourcedefinitions:displayName="At (scheduled command)",resources={{Pod,v1,pods},{Event,v1,events}}
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.spec.timeZone`
// +kubebuilder:printcolumn:name="Next Run",type=string,JSONPath=`.status.nextRunTime`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Result",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].reason`
// +kubebuilder:printcolumn:name="Exit",type=integer,JSONPath=`.status.exitCode`,priority=1
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.phase) || oldSelf.status.phase == 'PENDING' || (self.spec.schedule == oldSelf.spec.schedule && self.spec.command == oldSelf.spec.command)",message="schedule and command cannot change once the command started: create a new At"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.phase) || oldSelf.status.phase == 'PENDING' || (has(self.spec.retries) == has(oldSelf.spec.retries) && (!has(self.spec.retries) || self.spec.retries == oldSelf.spec.retries))",message="retries cannot change once the command started: create a new At"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.phase) || oldSelf.status.phase == 'PENDING' || (has(self.spec.timeZone) == has(oldSelf.spec.timeZone) && (!has(self.spec.timeZone) || self.spec.timeZone == oldSelf.spec.timeZone))",message="timeZone cannot change once the command started: create a new At"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.phase) || oldSelf.status.phase == 'PENDING' || !has(oldSelf.spec.activeDeadlineSeconds) || (has(self.spec.activeDeadlineSeconds) && self.spec.activeDeadlineSeconds == oldSelf.spec.activeDeadlineSeconds)",message="activeDeadlineSeconds cannot change once the command started: its pod keeps the deadline it was created with"
type At struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec AtSpec `json:"spec"`
	// +optional
	Status AtStatus `json:"status,omitempty"`
}

// AtList is a list of Ats.
// +kubebuilder:object:root=true
type AtList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []At `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &At{}, &AtList{})
		return nil
	})
}
