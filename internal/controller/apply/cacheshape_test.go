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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
		cached := read(t, out)
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

// read is the Deployment a read from the cache gets of the cache's copy out: controller-runtime's cache hands
// out what the stored object's DeepCopyObject returns.
func read(t *testing.T, out any) *appsv1.Deployment {
	t.Helper()
	obj, ok := out.(runtime.Object)
	if !ok {
		t.Fatalf("the cache's copy is a %T, not a runtime.Object", out)
	}
	dep, ok := obj.DeepCopyObject().(*appsv1.Deployment)
	if !ok {
		t.Fatalf("a read of the cache's copy (%T) is a %T, not a Deployment", out, obj.DeepCopyObject())
	}
	return dep
}

// TestCachedChildrenShareNothingWritable: the copies of two children share their labels (one map for all), and a
// read from the cache (DeepCopyObject) that changes its labels, owner references or status changes neither copy.
func TestCachedChildrenShareNothingWritable(t *testing.T) {
	transform := deploymentTransform(t)
	var copies []client.Object
	for _, uid := range []string{"a", "b"} {
		out, err := transform(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: uid, Namespace: "ns", UID: types.UID("u-" + uid),
			Generation: 1, Labels: map[string]string{managed.ByLabel: managed.By},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "MyWeb", Name: uid, UID: "o", Controller: ptr.To(true)}}},
			Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}}})
		if err != nil {
			t.Fatal(err)
		}
		copies = append(copies, out.(client.Object))
	}
	r := read(t, copies[0])
	r.Labels["team"] = "shop"
	r.OwnerReferences[0].Name = "other"
	r.Status.Conditions[0].Status = corev1.ConditionFalse
	for _, c := range copies {
		again := read(t, c)
		if len(c.GetLabels()) != 1 || c.GetLabels()[managed.ByLabel] != managed.By || c.GetOwnerReferences()[0].Name != c.GetName() ||
			again.Status.Conditions[0].Status != corev1.ConditionTrue {
			t.Errorf("%s: labels %v, owner %s, %+v after a read changed its own", c.GetName(), c.GetLabels(),
				c.GetOwnerReferences()[0].Name, again.Status.Conditions)
		}
	}
}
