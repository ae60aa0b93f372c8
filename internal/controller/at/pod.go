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
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/controller/cachetrim"
	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/internal/proxyenv"
)

// Labels on every pod of an At.
const (
	// labelAt names the At that owns a pod (when the name fits a label value).
	labelAt = "cnat.programming-kubernetes.info/at"
	// labelApp is the label the book's pods carry, app=<At name>, so `kubectl get pod -l app=<At>` works.
	labelApp      = "app"
	containerName = "command"
)

// NonRootUID is the UID (and GID) an At's pod runs as in a namespace that gives no UID range: "nobody".
// busybox has no USER, so the pod picks one to meet the restricted standard.
const NonRootUID = int64(65534)

// UIDRangeAnnotation is where OpenShift writes a namespace's UIDs ("<first>/<size>", e.g. "1000680000/10000");
// its restricted-v2 SCC admits only pods whose runAsUser lies in that range.
const UIDRangeAnnotation = "openshift.io/sa.scc.uid-range"

// PodUID is the UID an At's pod runs as in a namespace with these annotations: the first UID of its
// UIDRangeAnnotation where it has one, NonRootUID where it has none. The choice is the namespace's, never a
// guess about the cluster. A malformed range (not "<first>/<size>" in decimal, an empty range, a first UID
// of 0 or past the range of a UID) is an error: no UID of that namespace is known to be admitted, and
// NonRootUID would be refused there.
func PodUID(annotations map[string]string) (int64, error) {
	v, ok := annotations[UIDRangeAnnotation]
	if !ok {
		return NonRootUID, nil
	}
	first, size, found := strings.Cut(v, "/")
	uid, err := strconv.ParseInt(first, 10, 64)
	if err == nil && found {
		var n int64
		if n, err = strconv.ParseInt(size, 10, 64); err == nil && n <= 0 {
			err = errors.New("the range is empty")
		}
	} else if err == nil {
		err = errors.New("no /<size>")
	}
	if err == nil && (uid <= 0 || uid > math.MaxInt32) {
		err = errors.New("the first UID is not between 1 and 2147483647")
	}
	if err != nil {
		return 0, fmt.Errorf("annotation %s=%q is not <first UID>/<size>: %w", UIDRangeAnnotation, v, err)
	}
	return uid, nil
}

// PodName is the name of the one pod an At ever has. It depends only on the At's name, so that an operator that
// crashed after creating the pod, and before writing the status, finds it again (or gets AlreadyExists) instead
// of running the command twice. Long names are cut and made unique with a hash.
func PodName(atName string) string {
	name := atName + "-pod"
	if len(name) <= validation.DNS1123SubdomainMaxLength {
		return name
	}
	sum := sha256.Sum256([]byte(atName))
	suffix := "-" + hex.EncodeToString(sum[:])[:10] + "-pod"
	// Cut where the name stays valid: a kept prefix ending in '.' would leave ".-" before the suffix.
	return strings.TrimRight(atName[:validation.DNS1123SubdomainMaxLength-len(suffix)], ".-") + suffix
}

// PodDefaults is what the operator adds to an At's pod from its own configuration.
type PodDefaults struct {
	// Image runs the command when the At names none (empty: cnatv1alpha1.DefaultImage).
	Image string
	// ProxyEnv (the operator's HTTP(S)_PROXY/NO_PROXY, which OLM sets from the cluster's proxy) is passed on to
	// the command.
	ProxyEnv proxyenv.Env
	// UID is the UID and GID the command runs as: PodUID of the At's namespace (0: NonRootUID).
	UID int64
}

// Pod is the pod that runs the At's command: `/bin/sh -c <command>`, never restarted, owned by the At, bounded
// by the At's activeDeadlineSeconds, and meeting the restricted Pod Security Standard (and OpenShift's
// restricted-v2 SCC, when d.UID comes from the namespace's range).
func Pod(at *cnatv1alpha1.At, d PodDefaults) *corev1.Pod {
	return AttemptPod(at, d, 0, activeDeadlineSeconds(at))
}

// AttemptPod is Pod for the At's attempt (0 the first, which is Pod), named AttemptPodName, with
// activeDeadlineSeconds deadline (what is left of the At's for a later attempt).
func AttemptPod(at *cnatv1alpha1.At, d PodDefaults, attempt int32, deadline int64) *corev1.Pod {
	uid := d.UID
	if uid <= 0 {
		uid = NonRootUID
	}
	image := at.Spec.Image
	if image == "" {
		image = d.Image
	}
	if image == "" {
		image = cnatv1alpha1.DefaultImage
	}
	labels := map[string]string{managed.ByLabel: managed.By}
	if len(validation.IsValidLabelValue(at.Name)) == 0 {
		labels[labelAt] = at.Name
		labels[labelApp] = at.Name // the book's label: kubectl get pod -l app=<at>
	}
	// The At's own variables come after the proxy settings, so that one of the same name wins (the kubelet
	// takes the last): the command is the tenant's, and so is its proxy.
	env := append(d.ProxyEnv.Vars(), envVars(at.Spec.Env)...)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      AttemptPodName(at.Name, attempt),
			Namespace: at.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         cnatv1alpha1.GroupVersion.String(),
				Kind:               "At",
				Name:               at.Name,
				UID:                at.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:        ptr.To(deadline),
			AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To(uid),
				RunAsGroup:     ptr.To(uid),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:    containerName,
				Image:   image,
				Command: []string{"/bin/sh", "-c", at.Spec.Command},
				Env:     env,
				SecurityContext: &corev1.SecurityContext{
					RunAsNonRoot:             ptr.To(true),
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Resources:                resources(at.Spec.Resources),
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
		},
	}
}

// envVars are the At's env as a container's: a literal value or a key of a Secret or ConfigMap of the pod's
// own namespace, nothing else a pod's env could name (fieldRef, resourceFieldRef, files).
func envVars(in []cnatv1alpha1.AtEnvVar) []corev1.EnvVar {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.EnvVar, 0, len(in))
	for _, e := range in {
		v := corev1.EnvVar{Name: e.Name, Value: e.Value}
		if from := e.ValueFrom; from != nil {
			switch {
			case from.SecretKeyRef != nil:
				v.ValueFrom = &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: from.SecretKeyRef.Name},
					Key:                  from.SecretKeyRef.Key, Optional: from.SecretKeyRef.Optional}}
			case from.ConfigMapKeyRef != nil:
				v.ValueFrom = &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: from.ConfigMapKeyRef.Name},
					Key:                  from.ConfigMapKeyRef.Key, Optional: from.ConfigMapKeyRef.Optional}}
			}
		}
		out = append(out, v)
	}
	return out
}

// resources are the At's requests and limits as a container's (no claims: the pod has none).
func resources(r *cnatv1alpha1.AtResources) corev1.ResourceRequirements {
	if r == nil {
		return corev1.ResourceRequirements{}
	}
	return corev1.ResourceRequirements{Requests: r.Requests.DeepCopy(), Limits: r.Limits.DeepCopy()}
}

// activeDeadlineSeconds is the deadline of the At's run: its spec's (which the API server defaults), or the
// default for an At that has none (one built in Go, not read from the API server).
func activeDeadlineSeconds(at *cnatv1alpha1.At) int64 {
	if d := at.Spec.ActiveDeadlineSeconds; d != nil && *d > 0 {
		return *d
	}
	return cnatv1alpha1.DefaultActiveDeadlineSeconds
}

// nameLabel is the label of the application a pod belongs to, which the pods of MyWebs and AppServices carry
// (app.kubernetes.io/name=myweb or appservice) and an At's pods never have, in this release or an earlier one.
const nameLabel = "app.kubernetes.io/name"

// PodSelector selects the pods the cache holds: those labelled as operator101's (managed.ByLabel) without
// nameLabel, which are the At pods of every release (0.2.0's included, so that the At controller still finds
// the pods they ran: exactly once holds across an upgrade). The pods of MyWebs' and AppServices' Deployments,
// which carry operator101's label too, stay out: nothing reads them. Pods of an At whose name does not fit a
// label value carry no label of their own (labelAt), so nothing narrower selects every At pod.
func PodSelector() labels.Selector {
	noName, err := labels.NewRequirement(nameLabel, selection.DoesNotExist, nil)
	if err != nil {
		panic(err) // a constant, valid key
	}
	return managed.Selector().Add(*noName)
}

// PodCache is how the manager's cache holds pods: only those PodSelector selects, as trimPod leaves them.
func PodCache() cache.ByObject {
	return cache.ByObject{Label: PodSelector(), Transform: trimPod}
}

// trimPod is the cache transform of pods: the At controller reads a pod's metadata (name, controller,
// creation time, deletion timestamp, resourceVersion), its activeDeadlineSeconds, and the parts of its status
// fromPod, the start deadline and the Upgradeable gate use (phase, reason, message, start time, why it is not
// scheduled, the command's container state). The rest of the spec (the command, the env and the security
// context) and of the status, every label but operator101's, every annotation, the other owner references and
// the finalizers are dropped, so a thousand Ats' pods cost the cache a fraction of their size, and a pod a
// tenant labelled as operator101's costs no more whatever it carries. Pods are never written from the cache:
// they are created from Pod() and deleted by name.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	var kept map[string]string
	if v, ok := pod.Labels[managed.ByLabel]; ok {
		kept = map[string]string{managed.ByLabel: v}
	}
	pod.Labels, pod.Annotations, pod.Finalizers, pod.GenerateName = kept, nil, nil, ""
	pod.OwnerReferences = cachetrim.ControllerOnly(pod.OwnerReferences)
	pod.Spec = corev1.PodSpec{ActiveDeadlineSeconds: pod.Spec.ActiveDeadlineSeconds}
	pod.Status = corev1.PodStatus{Phase: pod.Status.Phase, Reason: pod.Status.Reason, Message: pod.Status.Message,
		StartTime: pod.Status.StartTime, Conditions: trimConditions(pod.Status.Conditions),
		ContainerStatuses: trimContainerStatuses(pod.Status.ContainerStatuses)}
	pod.ManagedFields = nil
	return pod, nil
}

// trimConditions keeps the one pod condition the At controller reads: PodScheduled when it is False (why the
// pod found no node).
func trimConditions(in []corev1.PodCondition) []corev1.PodCondition {
	for _, c := range in {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return []corev1.PodCondition{{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}}
		}
	}
	return nil
}

func trimContainerStatuses(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	for _, cs := range in {
		if cs.Name == containerName {
			return []corev1.ContainerStatus{{Name: cs.Name,
				State: corev1.ContainerState{Waiting: cs.State.Waiting, Terminated: cs.State.Terminated}}}
		}
	}
	return nil
}
