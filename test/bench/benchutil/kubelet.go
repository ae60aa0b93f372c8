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

package benchutil

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
