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

package kit

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestProxyEnvWithoutCredentials(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        string // "-": left out
	}{
		{"HTTP_PROXY", "http://user:s3cret@proxy.example:3128", "http://proxy.example:3128"},
		{"https_proxy", "https://user:s3cret@proxy.example:3128/", "https://proxy.example:3128/"},
		{"HTTPS_PROXY", "http://user@proxy.example:3128", "http://proxy.example:3128"},
		{"HTTP_PROXY", "http://:s3cret@proxy.example", "http://proxy.example"},
		{"HTTP_PROXY", "http://user:s3cret@[fd00::1]:3128", "http://[fd00::1]:3128"},
		{"HTTP_PROXY", "http://user:s3%40cret@proxy.example:3128", "http://proxy.example:3128"},
		{"HTTP_PROXY", "http://user:s3@cret@proxy.example:3128", "http://proxy.example:3128"},
		{"http_proxy", "user:s3cret@proxy.example:3128", "proxy.example:3128"}, // no scheme, as Go's clients read it
		{"HTTP_PROXY", "http://user:s3/cret@proxy.example:3128", "-"},          // does not parse
		{"HTTP_PROXY", "http://user:s3#cret@proxy.example:3128", "-"},          // "#" ends the authority early
		{"HTTP_PROXY", "http://proxy.example:3128/a@b", "-"},
		{"HTTP_PROXY", "http://user:s3cret@", "-"},
		{"HTTP_PROXY", "http://proxy.example:3128", "http://proxy.example:3128"},
		{"NO_PROXY", ".cluster.local,10.0.0.0/8", ".cluster.local,10.0.0.0/8"},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			in := []corev1.EnvVar{{Name: "NO_PROXY", Value: ".svc"}, {Name: tc.name, Value: tc.value}}
			out, stripped, omitted := ProxyEnvWithoutCredentials(in)
			if in[1].Value != tc.value {
				t.Fatalf("the input was changed: %v", in)
			}
			for _, e := range out {
				if strings.Contains(e.Value, "s3") || strings.Contains(e.Value, "@") {
					t.Errorf("%s=%q passed on", e.Name, e.Value)
				}
			}
			if len(out) == 0 || out[0] != in[0] {
				t.Errorf("NO_PROXY not passed on first: %v", out)
			}
			switch tc.want {
			case "-":
				if len(out) != 1 || !slices.Equal(omitted, []string{tc.name}) || stripped != nil {
					t.Errorf("out %v, stripped %v, omitted %v; want %s left out", out, stripped, omitted, tc.name)
				}
			case tc.value:
				if !slices.Equal(out, in) || stripped != nil || omitted != nil {
					t.Errorf("out %v, stripped %v, omitted %v; want the input", out, stripped, omitted)
				}
			default:
				if len(out) != 2 || out[1] != (corev1.EnvVar{Name: tc.name, Value: tc.want}) ||
					!slices.Equal(stripped, []string{tc.name}) || omitted != nil {
					t.Errorf("out %v, stripped %v, omitted %v; want %s=%s", out, stripped, omitted, tc.name, tc.want)
				}
			}
		})
	}
}

// Nothing to take out costs nothing: the builders call it on every reconcile.
func TestProxyEnvWithoutCredentialsAllocatesNothingWhenClean(t *testing.T) {
	env := []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy:3128"}, {Name: "http_proxy", Value: "http://proxy:3128"},
		{Name: "NO_PROXY", Value: ".svc"}, {Name: "no_proxy", Value: ".svc"}}
	if n := testing.AllocsPerRun(100, func() { ProxyEnvWithoutCredentials(env) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// Every controller's reconciler gets its options through WithDefaults (NewBase): the At's pod, whose builder
// passes ProxyEnv on as it is, never gets the proxy's credentials either.
func TestOptionsWithDefaultsDropsProxyCredentials(t *testing.T) {
	o := Options{Reader: struct{ client.Reader }{}, ProxyEnv: []corev1.EnvVar{
		{Name: "HTTPS_PROXY", Value: "http://operator:s3cret@proxy.example:3128"}, {Name: "NO_PROXY", Value: ".svc"}}}
	got := o.WithDefaults(nil).ProxyEnv
	want := []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy.example:3128"}, {Name: "NO_PROXY", Value: ".svc"}}
	if !slices.Equal(got, want) {
		t.Errorf("ProxyEnv %v, want %v", got, want)
	}
	if o.ProxyEnv[0].Value != "http://operator:s3cret@proxy.example:3128" {
		t.Errorf("the caller's options were changed: %v", o.ProxyEnv)
	}
}
