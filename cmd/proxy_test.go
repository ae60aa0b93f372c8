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

package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appv1 "github.com/operator101/operator101/api/app/v1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/appservice"
	"github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/myweb"
)

// The proxy OLM gives the operator reaches every workload it runs in tenants' namespaces (MyWeb's and
// AppService's Deployments, an At's pod) without the user and password its URL holds: the controllers are
// never given them, and the log says once which variables lost them, naming none of their values.
func TestProxyCredentialsStayWithTheOperator(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://operator:s3cret@proxy.example:3128")
	t.Setenv("HTTPS_PROXY", "operator:s3cret@proxy.example:3129")
	t.Setenv("NO_PROXY", ".svc")
	cfg, err := parseConfig(nil, func(string) string { return "" }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for e := range cfg.controllers.ProxyEnv.All() {
		env = append(env, e.Name+"="+e.Value)
	}
	want := []string{"HTTP_PROXY=http://proxy.example:3128", "http_proxy=http://proxy.example:3128",
		"HTTPS_PROXY=proxy.example:3129", "https_proxy=proxy.example:3129", "NO_PROXY=.svc", "no_proxy=.svc"}
	if !slices.Equal(env, want) {
		t.Errorf("the controllers' proxy env %v, want %v", env, want)
	}

	meta := metav1.ObjectMeta{Name: "x", Namespace: "tenant", UID: "u"}
	web := myweb.Deployment(&operatorv1.MyWeb{ObjectMeta: meta}, cfg.controllers.ProxyEnv)
	app, err := appservice.Deployment(&appv1.AppService{ObjectMeta: meta}, cfg.controllers.ProxyEnv)
	if err != nil {
		t.Fatal(err)
	}
	pod := at.Pod(&cnatv1alpha1.At{ObjectMeta: meta}, at.PodDefaults{ProxyEnv: cfg.controllers.ProxyEnv})
	for kind, child := range map[string]any{"MyWeb's Deployment": web, "AppService's Deployment": app, "At's pod": pod} {
		raw, err := json.Marshal(child)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(raw); strings.Contains(s, "s3cret") || strings.Contains(s, "operator:") || !strings.Contains(s, "proxy.example:3128") {
			t.Errorf("%s: want the proxy's address without its credentials: %s", kind, s)
		}
	}

	var lines []string
	log := funcr.NewJSON(func(obj string) { lines = append(lines, obj) }, funcr.Options{})
	logProxyCredentials(log, cfg)
	var line struct {
		Stripped []string `json:"withoutCredentials"`
		Omitted  []string `json:"leftOut"`
	}
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &line) != nil || strings.Contains(lines[0], "s3cret") ||
		strings.Contains(lines[0], "proxy.example") || len(line.Omitted) != 0 ||
		!slices.Equal(line.Stripped, []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"}) {
		t.Errorf("log: %q; want one line naming the four variables, and none of their values", lines)
	}

	// Without credentials there is nothing to say.
	t.Setenv("HTTP_PROXY", "http://proxy.example:3128")
	t.Setenv("HTTPS_PROXY", "http://proxy.example:3128")
	if cfg, err = parseConfig(nil, func(string) string { return "" }, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	lines = nil
	logProxyCredentials(log, cfg)
	if len(lines) != 0 {
		t.Errorf("log without credentials: %q", lines)
	}
}
