//go:build e2e

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

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// everyKindReady: `kubectl wait --for=condition=Ready`, as docs/guides/status.md shows it, works for every kind
// of the quick start, on this tree's operator.
func everyKindReady(t *testing.T) {
	t.Helper()
	for _, o := range []string{
		"myweb.operator.k8s-summit.org/myweb",
		"appservice.app.example.com/nginx-app",
		"appservice.batch.schwarzeni.github.com/nginx-app-v1alpha1",
		"at.cnat.programming-kubernetes.info/example-at",
		"databaseuser.mygroup.handsomeguy.cn/cnhandsomeguy",
		"database.mygroup.handsomeguy.cn/demo-app",
	} {
		kubectl(t, "wait", "-n", quickSamples, o, "--for=condition=Ready", "--timeout=3m")
	}
	kubectl(t, "wait", "databasetarget.mygroup.handsomeguy.cn/"+quickTarget, "--for=condition=Ready", "--timeout=3m")
}

// noPrometheusOperatorCRDs: the cluster serves no ServiceMonitor or PrometheusRule, so the install that got here
// from the catalog did not need them (test/monitoring applies config/prometheus where they are served).
func noPrometheusOperatorCRDs(t *testing.T) {
	t.Helper()
	for _, crd := range []string{"servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com"} {
		out, err := tryRun(nil, f.kubectl, "get", "crd", crd, "-o", "name")
		if err == nil || !strings.Contains(out, "NotFound") {
			t.Errorf("kubectl get crd %s: %v, %s; want NotFound (the local cluster has no Prometheus Operator)", crd, err, out)
		}
	}
}

// scrapeWithMonitorCredentials: the metrics endpoint, scraped with the token config/prometheus/base gives the
// ServiceMonitor (its scraper ServiceAccount, bound to the bundle's metrics-reader ClusterRole), returns the
// series docs/reference/metrics.md documents; without a token it refuses. The local cluster has neither
// OpenShift's service CA nor cert-manager, so the manager serves its self-signed certificate here, and this
// check cannot verify it: what it proves is the credentials and the series.
func scrapeWithMonitorCredentials(t *testing.T) {
	t.Helper()
	scraper := filepath.Join(f.root, "config", "prometheus", "base", "scraper.yaml")
	kubectl(t, "apply", "-n", quickNS, "-f", scraper)
	t.Cleanup(func() { _, _ = tryRun(nil, f.kubectl, "delete", "-n", quickNS, "--ignore-not-found", "-f", scraper) })
	var token string
	eventually(t, time.Minute, "the scraper's token", func() (bool, string) {
		out, err := tryRun(nil, f.kubectl, "get", "secret", "-n", quickNS, "operator101-metrics-scraper-token", "-o", "jsonpath={.data.token}")
		if err != nil || out == "" {
			return false, out
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(out))
		token = string(raw)
		return err == nil, fmt.Sprint(err)
	})

	port := portForward(t, quickNS, "svc/operator101-controller-manager-metrics-service", 8443)
	url := fmt.Sprintf("https://127.0.0.1:%d/metrics", port)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed on the local cluster, see above
	}}
	scrape := func(token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("scraping %s: %v", url, err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := scrape(""); code != http.StatusUnauthorized && code != http.StatusForbidden {
		t.Errorf("a scrape without a token got %d", code)
	}
	var body string
	eventually(t, 2*time.Minute, "the documented series", func() (bool, string) {
		code, b := scrape(token)
		if code != http.StatusOK {
			return false, fmt.Sprintf("HTTP %d: %.200s", code, b)
		}
		body = b
		for _, want := range []string{
			`operator101_objects{condition="Ready",group="operator.k8s-summit.org",kind="MyWeb"`,
			`operator101_objects{condition="Ready",group="cnat.programming-kubernetes.info",kind="At"`,
			`operator101_databasetarget_up{target="` + quickTarget + `"} 1`,
			`operator101_databaseuser_checks_total{result="Ready",target="` + quickTarget + `"}`,
			`# TYPE operator101_at_start_delay_seconds histogram`,
		} {
			if !strings.Contains(b, want) {
				return false, "no " + want
			}
		}
		return true, ""
	})
	t.Logf("scraped %d lines with the monitor's credentials", strings.Count(body, "\n"))
}

// portForward forwards a free local port to port of target in ns with kubectl port-forward until the test
// ends, and returns the local port.
func portForward(t *testing.T, ns, target string, port int) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, f.kubectl, "port-forward", "-n", ns, target, fmt.Sprintf(":%d", port))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+f.kubeconfig)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	// "Forwarding from 127.0.0.1:43567 -> 8443"
	lines := bufio.NewScanner(out)
	found := make(chan int, 1)
	go func() {
		for lines.Scan() {
			var local, remote int
			if n, _ := fmt.Sscanf(lines.Text(), "Forwarding from 127.0.0.1:%d -> %d", &local, &remote); n == 2 {
				found <- local
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case p := <-found:
		return p
	case <-time.After(time.Minute):
		t.Fatalf("kubectl port-forward %s did not start", target)
	}
	return 0
}
