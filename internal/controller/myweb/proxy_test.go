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

package myweb

import (
	"testing"

	"github.com/operator101/operator101/test/testenv"
)

// The operator's proxy reaches the web servers' pods (OLM's cluster-proxy convention), but not the user and
// password its URL carries: those are the operator's, and the pods are the tenant's.
func TestDeploymentDropsProxyCredentials(t *testing.T) {
	d := Deployment(newWeb("p", nil, "x", 30100), testenv.ProxyWithCredentials(t, ".svc,.cluster.local"))
	testenv.ExpectProxyEnv(t, d, []string{"HTTP_PROXY=http://proxy.example:3128", "http_proxy=http://proxy.example:3128",
		"HTTPS_PROXY=http://proxy.example:3129", "https_proxy=http://proxy.example:3129",
		"NO_PROXY=.svc,.cluster.local", "no_proxy=.svc,.cluster.local"})
}
