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

// Package manager tests the manager binary as a user runs it: flags, logs, probes, secure metrics, shutdown.
package manager

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/operator101/operator101/test/testenv"
)

var (
	env    *testenv.Env
	binary string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "operator101-manager")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "manager")
	root, err := testenv.RepoRoot()
	if err != nil {
		panic(err)
	}
	build := exec.Command("go", "build", "-o", binary, "./cmd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the manager: %v\n%s", err, out)
		os.Exit(1)
	}
	code := testenv.Run(m, &env)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// process is a running manager binary with its output captured.
type process struct {
	cmd  *exec.Cmd
	out  testenv.SyncBuffer
	done chan error
}

func (p *process) log() string { return p.out.String() }

func start(t *testing.T, kubeconfig string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(binary, args...), done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "WATCH_NAMESPACE=", "POD_NAMESPACE=default")
	p.cmd.Stderr = &p.out
	p.cmd.Stdout = &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done //nolint:errcheck // only reaps the process: its error is expected after the Kill; tests check exits via wait
	})
	return p
}

func (p *process) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(within):
		t.Fatalf("manager still running after %s; log:\n%s", within, p.log())
		return nil
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func adminKubeconfig(t *testing.T) string {
	t.Helper()
	user, err := env.Kubeconfig("admin", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, user, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUnreachableAPIServerFailsFastWithOneLine(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://" + freePort(t) + "'}\n" +
		"contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: x}\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, kc, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
	err := p.wait(t, 60*time.Second)
	if code := exitCode(err); code == 0 {
		t.Fatalf("exit code 0 against an unreachable API server; log:\n%s", p.log())
	}
	last := lastLine(p.log())
	if !strings.HasPrefix(last, "operator101: API server ") || !strings.Contains(last, "is not reachable") {
		t.Errorf("last line = %q, want one clear line naming the unreachable API server", last)
	}
}

func TestBadFlagFailsWithOneLine(t *testing.T) {
	p := start(t, "/nonexistent", "--no-such-flag")
	if code := exitCode(p.wait(t, 30*time.Second)); code == 0 {
		t.Fatal("exit code 0 on an unknown flag")
	}
	if last := lastLine(p.log()); !strings.Contains(last, "flag provided but not defined: -no-such-flag") {
		t.Errorf("last line = %q", last)
	}
}

// TestRunsServesProbesAndSecureMetricsAndStopsOnSIGTERM runs the manager against the test API server.
func TestRunsServesProbesAndSecureMetricsAndStopsOnSIGTERM(t *testing.T) {
	ctx := context.Background()
	metrics, probes := freePort(t), freePort(t)
	p := start(t, adminKubeconfig(t), "--leader-elect=false", "--metrics-bind-address="+metrics,
		"--health-probe-bind-address="+probes)

	// Probes answer once the manager runs.
	waitFor(t, p, 60*time.Second, func() bool {
		resp, err := http.Get("http://" + probes + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	// Metrics: HTTPS only, and only for callers allowed to "get /metrics".
	cs := kubernetes.NewForConfigOrDie(env.Config)
	token := func(name string) string {
		t.Helper()
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	stranger, scraper := token("stranger"), token("scraper")
	// The scraper gets the project's own metrics-reader ClusterRole, as config/rbac ships it. (Bound before its
	// first scrape: the filter caches a denial for a while.)
	var reader rbacv1.ClusterRole
	raw, err := os.ReadFile(filepath.Join(env.Root, "config", "rbac", "metrics_reader_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &reader); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &reader, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "scraper-metrics"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: reader.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scraper", Namespace: "default"}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var body string // of the last scrape
	scrape := func(token string) int {
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed test certificate
		req, _ := http.NewRequest(http.MethodGet, "https://"+metrics+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return -1
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode
	}
	waitFor(t, p, 30*time.Second, func() bool { return scrape("") > 0 })
	if code := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("metrics without a token: %d, want 401", code)
	}
	// A token the API server rejects: controller-runtime's filter answers 500 ("Authentication failed") when the
	// TokenReview carries an error, 401 when it is a plain "not authenticated". Either way, nothing is served.
	if code := scrape("not-a-token"); code != http.StatusUnauthorized && code != http.StatusInternalServerError {
		t.Errorf("metrics with a bad token: %d, want 401 or 500", code)
	}
	if code := scrape(stranger); code != http.StatusForbidden {
		t.Errorf("metrics for a ServiceAccount without the metrics-reader role: %d, want 403", code)
	}
	if code := scrape(scraper); code != http.StatusOK {
		t.Errorf("metrics for a ServiceAccount bound to metrics-reader: %d, want 200", code)
	}
	// operator101's own metrics are registered (docs/reference/metrics.md); the histogram without labels is
	// served before anything is counted.
	if !strings.Contains(body, "# TYPE operator101_at_start_delay_seconds histogram") {
		t.Errorf("operator101's metrics are not served: %.500s", body)
	}

	// Production logs are JSON, one object a line.
	sc := bufio.NewScanner(strings.NewReader(p.log()))
	lines := 0
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("log line is not JSON: %q", sc.Text())
			continue
		}
		lines++
	}
	if lines == 0 {
		t.Error("the manager logged nothing")
	}

	// SIGTERM stops it cleanly.
	stopAt := time.Now()
	defer func() { t.Logf("stopped %s after SIGTERM", time.Since(stopAt).Round(time.Millisecond)) }()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t, 45*time.Second); err != nil {
		t.Errorf("exit after SIGTERM: %v; log:\n%s", err, p.log())
	}
}

func waitFor(t *testing.T, p *process, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("manager exited (%v); log:\n%s", err, p.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s; log:\n%s", within, p.log())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
