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

package testenv

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/operator-lib/proxy"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	"github.com/operator101/operator101/internal/proxyenv"
)

// ProxyWithCredentials sets the operator's proxy variables for t, HTTP_PROXY (port 3128) and HTTPS_PROXY (port
// 3129) of proxy.example with the user and password operator:s3cret, and NO_PROXY to noProxy, and returns them
// as cmd/config.go reads them for the controllers.
func ProxyWithCredentials(t *testing.T, noProxy string) proxyenv.Env {
	t.Setenv("HTTP_PROXY", "http://operator:s3cret@proxy.example:3128")
	t.Setenv("HTTPS_PROXY", "http://operator:s3cret@proxy.example:3129")
	t.Setenv("NO_PROXY", noProxy)
	return proxyenv.New(proxy.ReadProxyVarsFromEnv())
}

// ExpectProxyEnv fails t unless the container of d, a Deployment a builder rendered with ProxyWithCredentials's
// variables, has exactly the environment want ("NAME=value", in order) and d carries none of the proxy's
// credentials anywhere.
func ExpectProxyEnv(t *testing.T, d *appsv1ac.DeploymentApplyConfiguration, want []string) {
	t.Helper()
	var env []string
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		env = append(env, *e.Name+"="+*e.Value)
	}
	if !slices.Equal(env, want) {
		t.Errorf("env %v, want %v", env, want)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(raw); strings.Contains(s, "s3cret") || strings.Contains(s, "operator:") {
		t.Errorf("the Deployment carries the proxy's credentials: %s", s)
	}
}
