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

package benchutil

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OperatorConditionName is the OperatorCondition the bench creates in the manager's namespace, as OLM would,
// and names in the manager's OPERATOR_CONDITION_NAME: the At controller's Upgradeable gate is active.
const OperatorConditionName = "operator101.v0.0.0-bench"

// AtPodWaiting tells whether pod is an At's pod that the bench has not yet marked Running: created by the
// operator (an At controls it) and without a phase or Pending.
func AtPodWaiting(pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.Kind == "At" && (pod.Status.Phase == "" || pod.Status.Phase == corev1.PodPending)
}

// RunningStatusPatch is the merge patch of a pod's status subresource that does what the kubelet does once
// the command's container runs: phase Running, started now. No kubelet runs in the bench, so the bench writes
// it; a Running At pod holds the Upgradeable gate (until its activeDeadlineSeconds, an hour by default).
func RunningStatusPatch(pod *corev1.Pod, now metav1.Time) []byte {
	st := corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}}}
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID: c.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
	}
	b, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		panic(err) // plain structs always encode
	}
	return b
}

// DeploymentAvailable tells whether the bench already marked dep as rolled out and available.
func DeploymentAvailable(dep *appsv1.Deployment) bool {
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	s := dep.Status
	if s.ObservedGeneration < dep.Generation || s.AvailableReplicas != want || s.UpdatedReplicas != want ||
		s.Replicas != want || s.ReadyReplicas != want {
		return false
	}
	for _, c := range s.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// AvailableStatusPatch is the merge patch of a Deployment's status subresource that does what the deployment
// controller and the kubelet would do once every pod runs: all replicas updated, ready and available.
// No kubelet runs in the bench, so the bench writes it.
func AvailableStatusPatch(dep *appsv1.Deployment, now metav1.Time) []byte {
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	st := appsv1.DeploymentStatus{
		ObservedGeneration: dep.Generation, Replicas: want, UpdatedReplicas: want, ReadyReplicas: want,
		AvailableReplicas: want,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
				Message: "Deployment has minimum availability.", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
				Message: "ReplicaSet has successfully progressed.", LastUpdateTime: now, LastTransitionTime: now},
		},
	}
	b, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		panic(err) // plain structs always encode
	}
	return b
}
