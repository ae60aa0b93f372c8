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

package appservice

import (
	"testing"

	appv1 "github.com/operator101/operator101/api/app/v1"
	"github.com/operator101/operator101/test/testenv"
)

// The operator's proxy reaches the application's pods (OLM's cluster-proxy convention), but not the user and
// password its URL carries: those are the operator's, and the pods are the tenant's. A variable the spec sets
// itself is the spec's, as always.
func TestDeploymentDropsProxyCredentials(t *testing.T) {
	a := newApp(func(s *appv1.AppServiceSpec) {
		s.Envs = []appv1.EnvVar{{Name: "https_proxy", Value: "http://tenant:theirs@proxy.tenant:8080"}}
	})
	d, err := Deployment(a, testenv.ProxyWithCredentials(t, ".svc"))
	if err != nil {
		t.Fatal(err)
	}
	testenv.ExpectProxyEnv(t, d, []string{"HTTP_PROXY=http://proxy.example:3128", "http_proxy=http://proxy.example:3128",
		"HTTPS_PROXY=http://proxy.example:3129", "NO_PROXY=.svc", "no_proxy=.svc",
		"https_proxy=http://tenant:theirs@proxy.tenant:8080"})
}
