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

package proxyenv

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestProxyEnvWithoutCredentials: New passes on each proxy variable without the user and password of its URL, or
// leaves it out, and names what it did.
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
			env := New(in)
			out, stripped, omitted := env.Vars(), env.Stripped(), env.Omitted()
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

// Reading the variables costs nothing: the builders do it on every reconcile.
func TestAllAllocatesNothing(t *testing.T) {
	env := New([]corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy:3128"}, {Name: "http_proxy", Value: "http://proxy:3128"},
		{Name: "NO_PROXY", Value: ".svc"}, {Name: "no_proxy", Value: ".svc"}})
	n := 0
	if a := testing.AllocsPerRun(100, func() {
		for range env.All() {
			n++
		}
	}); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

// New copies what it is given: changing the caller's slice afterwards changes no Env.
func TestNewCopies(t *testing.T) {
	in := []corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy:3128"}}
	env := New(in)
	in[0].Value = "http://user:s3cret@proxy:3128"
	if got := env.Vars(); got[0].Value != "http://proxy:3128" {
		t.Errorf("Env changed with its input: %v", got)
	}
	if (Env{}).Vars() != nil || (Env{}).Len() != 0 {
		t.Error("the zero Env holds variables")
	}
}
