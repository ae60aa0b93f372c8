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

package manager

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/test/testenv"
)

// `make run`, as a reader of kubebuilder's or operator-sdk's tutorial types it, acts on the cluster kubectl
// talks to: with no KUBECONFIG exported, the current context of ~/.kube/config (here this test's API server),
// not the project's own local API server; it says so first, and the manager it runs reconciles there.
func TestMakeRunActsOnKubectlsCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make (go vet, go run): minutes; make ci runs this test")
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(adminKubeconfig(t), filepath.Join(home, ".kube", "config")); err != nil {
		t.Fatal(err)
	}
	// make run's prerequisites manifests, generate, fmt and vet are taken as done (-o): they would rewrite the
	// CRDs and generated code that the test packages running beside this one read, and they are checked by make
	// ci on their own.
	cmd := exec.Command("make", "-o", "manifests", "-o", "generate", "-o", "fmt", "-o", "vet", "run")
	cmd.Dir = env.Root
	cmd.Env = append(withoutHomeOrKubeconfig(os.Environ()), "HOME="+home, "WATCH_NAMESPACE=")
	// The Go and tool caches stay where they are: HOME moved only for kubectl's sake.
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(cmd.Env, v+"="+strings.TrimSpace(string(out)))
	}
	if os.Getenv("XDG_CACHE_HOME") == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+cache)
	}
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // make, go run and the manager: stopped together
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done: //nolint:errcheck // the end of make run after SIGTERM: its exit status says nothing
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done //nolint:errcheck // as above, after SIGKILL
		}
		if t.Failed() {
			t.Logf("make run:\n%s", out)
		}
	})

	ctx := context.Background()
	ns := env.NewNamespace(t, "makerun")
	web := &operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "site"},
		Spec: operatorv1.MyWebSpec{Image: "nginx", NodePortNumber: 30190, PageContentHtml: "<h1>make run</h1>\n"}}
	if err := env.Client.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	g := gomega.NewWithT(t)
	g.Eventually(func() error {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("make run ended: %v", err)
		default:
		}
		return env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "site"}, &corev1.ConfigMap{})
	}, 5*time.Minute, time.Second).Should(gomega.Succeed(), "the manager of make run did not reconcile the MyWeb")
	if !strings.Contains(out.String(), "(kubeconfig "+filepath.Join(home, ".kube", "config")+")") ||
		!strings.Contains(out.String(), "server "+strings.TrimSuffix(env.Config.Host, "/")) {
		t.Errorf("make run did not say it acts on %s through ~/.kube/config:\n%s", env.Config.Host, out)
	}
	if strings.Contains(out.String(), "dev-apiserver.sh start") {
		t.Error("make run started the local API server although a kubeconfig exists")
	}
}

// withoutHomeOrKubeconfig is environ without HOME and KUBECONFIG, which each test sets its own way.
func withoutHomeOrKubeconfig(environ []string) []string {
	out := environ[:0:0]
	for _, e := range environ {
		if !strings.HasPrefix(e, "KUBECONFIG=") && !strings.HasPrefix(e, "HOME=") {
			out = append(out, e)
		}
	}
	return out
}

// Which cluster install, deploy and run act on, as make plans them (make -n): $KUBECONFIG when exported;
// else ~/.kube/config; the local API server, started first, only where there is no kubeconfig at all.
func TestMakeTargetsPickKubectlsCluster(t *testing.T) {
	withHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(withHome, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(withHome, ".kube", "config"), []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(env.Root, "bin", "dev-apiserver", "kubeconfig")
	for _, tc := range []struct {
		name, home, kubeconfig, want string
		startsLocal                  bool
	}{
		{"KUBECONFIG exported", withHome, "/elsewhere/kubeconfig", "/elsewhere/kubeconfig", false},
		{"~/.kube/config", withHome, "", filepath.Join(withHome, ".kube", "config"), false},
		{"no kubeconfig at all", t.TempDir(), "", local, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, target := range []string{"run", "install", "deploy"} {
				cmd := exec.Command("make", "-n", target)
				cmd.Dir = env.Root
				cmd.Env = append(withoutHomeOrKubeconfig(os.Environ()), "HOME="+tc.home)
				if tc.kubeconfig != "" {
					cmd.Env = append(cmd.Env, "KUBECONFIG="+tc.kubeconfig)
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("make -n %s: %v\n%s", target, err, out)
				}
				if !strings.Contains(string(out), "==> cluster: ") || !strings.Contains(string(out), "(kubeconfig "+tc.want+")") {
					t.Errorf("make %s does not say it acts on %s:\n%s", target, tc.want, out)
				}
				if starts := strings.Contains(string(out), "dev-apiserver.sh start"); starts != (tc.startsLocal && target != "deploy") {
					t.Errorf("make %s starts the local API server: %v, want %v", target, starts, tc.startsLocal && target != "deploy")
				}
			}
		})
	}
}
