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

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	testenv.ExpectReplicaFailureReportedOnce(t, env.Client, rec, key, timeout, msg, &operatorv1.MyWeb{},
		func(g gomega.Gomega) []metav1.Condition { return getWeb(g, key).Status.Conditions })
}
