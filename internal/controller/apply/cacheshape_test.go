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

package apply_test

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/digest"
	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/internal/controller/rollout"
)

func deploymentTransform(t *testing.T) func(any) (any, error) {
	t.Helper()
	for obj, by := range apply.AppliedChildren(apply.NewMemory(digest.New())) {
		if _, ok := obj.(*appsv1.Deployment); ok {
			return by.Transform
		}
	}
	t.Fatal("AppliedChildren has no Deployment")
	return nil
}

// TestCachedDeploymentStatusAsRead: the cache's copy of a Deployment gives the same conditions of its owner as
// the whole Deployment (rollout.Conditions reads it), for every state of a rollout, though it keeps no message
// but a stuck rollout's and a ReplicaFailure's, and no time.
func TestCachedDeploymentStatusAsRead(t *testing.T) {
	transform := deploymentTransform(t)
	long := metav1.Now()
	cond := func(typ appsv1.DeploymentConditionType, st corev1.ConditionStatus, reason, msg string) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: typ, Status: st, Reason: reason, Message: msg, LastUpdateTime: long, LastTransitionTime: long}
	}
	available := cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable", "Deployment has minimum availability.")
	for name, st := range map[string]appsv1.DeploymentStatus{
		"new":      {},
		"complete": {ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, Conditions: []appsv1.DeploymentCondition{available, cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable", `ReplicaSet "web-5d4" has successfully progressed.`)}},
		"rolling":  {ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2, Conditions: []appsv1.DeploymentCondition{available, cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "ReplicaSetUpdated", `ReplicaSet "web-5d4" is progressing.`)}},
		"stuck": {ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{
			cond(appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
			cond(appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded", `ReplicaSet "web-5d4" has timed out progressing.`)}},
		"failing": {ObservedGeneration: 2, Conditions: []appsv1.DeploymentCondition{
			cond(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue, "FailedCreate", `pods "web-5d4-" is forbidden: exceeded quota`)}},
	} {
		whole := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: types.UID("u-" + name),
			Generation: 2, ResourceVersion: "7", Labels: map[string]string{managed.ByLabel: managed.By, "app": "web"}},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}, Status: st}
		out, err := transform(whole.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		cached := out.(*appsv1.Deployment)
		for _, c := range cached.Status.Conditions {
			if !c.LastUpdateTime.IsZero() || !c.LastTransitionTime.IsZero() {
				t.Errorf("%s: the cache keeps the times of %s", name, c.Type)
			}
			if c.Message != "" && c.Type == appsv1.DeploymentAvailable {
				t.Errorf("%s: the cache keeps the message of %s", name, c.Type)
			}
		}
		if !reflect.DeepEqual(cached.Labels, map[string]string{managed.ByLabel: managed.By}) {
			t.Errorf("%s: labels %v", name, cached.Labels)
		}
		for _, gen := range []int64{1, 2} {
			in := rollout.Input{Generation: gen, Desired: 2, Where: "there", Now: metav1.Now()}
			in.Deployment = whole
			want := rollout.Conditions(nil, in)
			in.Deployment = cached
			if got := rollout.Conditions(nil, in); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: from the cache's copy\n%+v\nwant, from the whole Deployment,\n%+v", name, got, want)
			}
		}
	}
}

// TestCachedChildrenShareNothingWritable: the copies of two children share their labels (one map for all), and a
// read from the cache, a deep copy, that changes its labels changes neither copy.
func TestCachedChildrenShareNothingWritable(t *testing.T) {
	transform := deploymentTransform(t)
	var copies []*appsv1.Deployment
	for _, uid := range []string{"a", "b"} {
		out, err := transform(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "ns", UID: types.UID("u-" + uid),
			Generation: 1, Labels: map[string]string{managed.ByLabel: managed.By}}})
		if err != nil {
			t.Fatal(err)
		}
		copies = append(copies, out.(*appsv1.Deployment))
	}
	read := copies[0].DeepCopy()
	read.Labels["team"] = "shop"
	for _, c := range copies {
		if len(c.Labels) != 1 || c.Labels[managed.ByLabel] != managed.By {
			t.Errorf("%s: labels %v after a read changed its own", c.Name, c.Labels)
		}
	}
}
