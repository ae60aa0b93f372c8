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

package cnat

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	cnatv1alpha1 "github.com/operator101/operator101/apis/cnat/v1alpha1"
	"github.com/operator101/operator101/controllers/internal/kit"
)

// Labels on every pod of an At.
const (
	// labelAt names the At that owns a pod (when the name fits a label value).
	labelAt = "cnat.programming-kubernetes.info/at"
	// labelApp is the label the book's pods carry, app=<At name>, so `kubectl get pod -l app=<At>` works.
	labelApp      = "app"
	containerName = "command"
	// nonRootUID is "nobody": busybox has no USER, so the pod picks one to meet the restricted standard.
	nonRootUID = int64(65534)
)

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

// Pod is the pod that runs the At's command: `/bin/sh -c <command>`, never restarted, owned by the At, and
// meeting the restricted Pod Security Standard. proxyEnv (the operator's HTTP(S)_PROXY/NO_PROXY, which OLM sets
// from the cluster's proxy) is passed on to the command.
func Pod(at *cnatv1alpha1.At, proxyEnv []corev1.EnvVar) *corev1.Pod {
	image := at.Spec.Image
	if image == "" {
		image = cnatv1alpha1.DefaultImage
	}
	labels := map[string]string{kit.ManagedByLabel: kit.ManagedBy}
	if len(validation.IsValidLabelValue(at.Name)) == 0 {
		labels[labelAt] = at.Name
		labels[labelApp] = at.Name // the book's label: kubectl get pod -l app=<at>
	}
	var env []corev1.EnvVar
	if len(proxyEnv) > 0 {
		env = append([]corev1.EnvVar(nil), proxyEnv...)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      PodName(at.Name),
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
			AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To(nonRootUID),
				RunAsGroup:     ptr.To(nonRootUID),
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
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
		},
	}
}

// TrimPodForCache is the cache transform of pods: the At controller reads a pod's metadata (name, owner,
// creation time) and the parts of its status FromPod uses (phase, reason, message, the command's container
// state), never its spec. The spec (with the command, the env and the security context) and the rest of the
// status are dropped, so a thousand Ats' pods cost the cache a fraction of their size. Pods are never written
// from the cache: they are created from Pod() and deleted by name.
func TrimPodForCache(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	pod.Spec = corev1.PodSpec{}
	pod.Status = corev1.PodStatus{Phase: pod.Status.Phase, Reason: pod.Status.Reason, Message: pod.Status.Message,
		ContainerStatuses: trimContainerStatuses(pod.Status.ContainerStatuses)}
	pod.ManagedFields = nil
	return pod, nil
}

func trimContainerStatuses(in []corev1.ContainerStatus) []corev1.ContainerStatus {
	for _, cs := range in {
		if cs.Name == containerName {
			return []corev1.ContainerStatus{{Name: cs.Name, State: corev1.ContainerState{Terminated: cs.State.Terminated}}}
		}
	}
	return nil
}
