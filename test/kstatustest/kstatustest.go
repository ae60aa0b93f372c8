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

// Package kstatustest reads an operator101 object the way Flux, kpt and cli-utils do: through kstatus
// (sigs.k8s.io/cli-utils/pkg/kstatus/status), from its unstructured form, as a client would see it.
package kstatustest

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/operator101/operator101/internal/controller/apply"
)

// Compute is kstatus' verdict on obj, of kind gvk.
func Compute(t testing.TB, obj runtime.Object, gvk schema.GroupVersionKind) *status.Result {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatalf("converting %T: %v", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	res, err := status.Compute(u)
	if err != nil {
		t.Fatalf("kstatus.Compute: %v", err)
	}
	return res
}

// RolloutCase is a state of a kind that runs a Deployment (MyWeb, AppService): the Deployment observed (nil
// when not created yet), the error of writing the children, whether the object is being deleted, and the
// status kstatus must then report.
type RolloutCase struct {
	Name       string
	Deployment *appsv1.Deployment
	ApplyErr   error
	Deleting   bool
	Want       status.Status
}

// RolloutCases are the states of a kind that runs a Deployment of desired pods: converging (no Deployment
// yet, or a rollout under way), Available, Degraded (a child's name taken), failed (a rollout past its
// deadline) and deleted.
func RolloutCases(desired int32) []RolloutCase {
	dep := func(available, progressing corev1.ConditionStatus, reason string, updated int32) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 1},
			Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: desired, UpdatedReplicas: updated,
				ReadyReplicas: updated, AvailableReplicas: updated, Conditions: []appsv1.DeploymentCondition{
					{Type: appsv1.DeploymentAvailable, Status: available},
					{Type: appsv1.DeploymentProgressing, Status: progressing, Reason: reason, Message: reason},
				}},
		}
	}
	available := dep(corev1.ConditionTrue, corev1.ConditionTrue, "NewReplicaSetAvailable", desired)
	return []RolloutCase{
		{Name: "converging, no Deployment yet", Want: status.InProgressStatus},
		{Name: "converging, rollout under way", Deployment: dep(corev1.ConditionFalse, corev1.ConditionTrue, "ReplicaSetUpdated", 0),
			Want: status.InProgressStatus},
		{Name: "Available", Deployment: available, Want: status.CurrentStatus},
		{Name: "Degraded", Deployment: available, ApplyErr: fmt.Errorf("Service x: %w", apply.ErrNotOwned), Want: status.FailedStatus},
		{Name: "failed, rollout past its deadline", Deployment: dep(corev1.ConditionFalse, corev1.ConditionFalse, "ProgressDeadlineExceeded", 0),
			Want: status.FailedStatus},
		{Name: "deleted", Deployment: available, Deleting: true, Want: status.TerminatingStatus},
	}
}
