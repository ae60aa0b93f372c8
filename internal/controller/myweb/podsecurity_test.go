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

package myweb_test

import (
	"testing"
	"time"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/operator101/operator101/api/conditions"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/test/testenv"
)

// TestMyWebPodsRefusedByPodSecurity: in a namespace enforcing the restricted Pod Security Standard, the pods of
// a MyWeb whose image runs as root (nginx's official one: no runAsNonRoot) are refused; the Deployment says so
// (ReplicaFailure, with PodSecurity's message, fed here from a real refusal by the API server), and the MyWeb
// reports it as Degraded=True, ReplicaFailure, with that message, and one Warning Event, however often it is
// reconciled.
func TestMyWebPodsRefusedByPodSecurity(t *testing.T) {
	_, rec := startOperator(t, nil)
	ns := env.RestrictedNamespace(t, "web-restricted")
	key := testenv.Create(t, env.Client, newWeb(ns, "root", 30177))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { getChildren(g, key) })

	msg := testenv.RefuseDeploymentPods(t, env.Client, key)
	if !gomega.NewWithT(t).Expect(msg).To(gomega.ContainSubstring(`violates PodSecurity "restricted:latest"`)) {
		return
	}
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, getWeb(g, key).Status.Conditions, conditions.Degraded, metav1.ConditionTrue,
			conditions.ReasonReplicaFailure, msg)
		g.Expect(testenv.EventsOfReason(t, env.Client, ns, key.Name, conditions.ReasonReplicaFailure)).To(gomega.HaveLen(1))
	})
	for range 3 {
		testenv.WaitReconciled(t, rec, key, timeout, func() { testenv.Poke(t, env.Client, key, &operatorv1.MyWeb{}) })
	}
	gomega.NewWithT(t).Consistently(func(g gomega.Gomega) {
		evs := testenv.EventsOfReason(t, env.Client, ns, key.Name, conditions.ReasonReplicaFailure)
		g.Expect(evs).To(gomega.HaveLen(1))
		g.Expect(evs[0].Type).To(gomega.Equal("Warning"))
		g.Expect(evs[0].Series).To(gomega.BeNil(), "the Event was repeated")
		g.Expect(evs[0].Note).To(gomega.ContainSubstring("violates PodSecurity"))
	}, 300*time.Millisecond).Should(gomega.Succeed())
}
