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

package reconciler

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/internal/proxyenv"
)

// Every controller's reconciler gets its options through WithDefaults (NewBase): the At's pod, whose builder
// passes ProxyEnv on as it is, never gets the proxy's credentials either, since a proxyenv.Env holds none.
func TestOptionsWithDefaultsDropsProxyCredentials(t *testing.T) {
	o := Options{Reader: struct{ client.Reader }{}, ProxyEnv: proxyenv.New([]corev1.EnvVar{
		{Name: "HTTPS_PROXY", Value: "http://operator:s3cret@proxy.example:3128"}, {Name: "NO_PROXY", Value: ".svc"}})}
	var got []string
	for e := range o.WithDefaults(nil).ProxyEnv.All() {
		got = append(got, e.Name+"="+e.Value)
	}
	if strings.Join(got, " ") != "HTTPS_PROXY=http://proxy.example:3128 NO_PROXY=.svc" {
		t.Errorf("ProxyEnv %v", got)
	}
}
