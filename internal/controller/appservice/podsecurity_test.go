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

package appservice_test

import (
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/test/testenv"
)

// TestAppServicePodsRefusedByPodSecurity: in a namespace enforcing the restricted Pod Security Standard, the
// pods of an AppService whose image runs as root (no runAsNonRoot) are refused; the Deployment says so
// (ReplicaFailure, with PodSecurity's message, fed here from a real refusal by the API server), and the
// AppService reports it as Degraded=True, ReplicaFailure, with that message, and one Warning Event, however
// often it is reconciled.
func TestAppServicePodsRefusedByPodSecurity(t *testing.T) {
	_, rec := startOperator(t, nil)
	ns := env.RestrictedNamespace(t, "appservice-restricted")
	key := testenv.Create(t, env.Client, newApp(ns, "root", 30277))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { getDeployment(g, key) })

	msg := testenv.RefuseDeploymentPods(t, env.Client, key)
	if !gomega.NewWithT(t).Expect(msg).To(gomega.ContainSubstring(`violates PodSecurity "restricted:latest"`)) {
		return
	}
	testenv.ExpectReplicaFailureReportedOnce(t, env.Client, rec, key, timeout, msg, &appv1.AppService{},
		func(g gomega.Gomega) []metav1.Condition { return getApp(g, key).Status.Conditions })
}
