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

	"github.com/operator101/operator101/test/testenv"
)

// TestAppServicePodsRefusedByPodSecurity: in a namespace enforcing the restricted Pod Security Standard, the
// pods of an AppService whose image runs as root (no runAsNonRoot) are refused; the Deployment says so
// (ReplicaFailure, with PodSecurity's message, fed here from a real refusal by the API server), and the
// AppService reports it as Degraded=True, ReplicaFailure, with that message, and one Warning Event, however
// often it is reconciled (testenv.ExpectPodsRefusedByPodSecurity).
func TestAppServicePodsRefusedByPodSecurity(t *testing.T) {
	_, rec := startOperator(t, nil)
	testenv.ExpectPodsRefusedByPodSecurity(t, env, rec, timeout, "appservice-restricted", newApp("", "root", 30277), getDeployment, conditionsOf)
}
