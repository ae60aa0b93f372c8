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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	appv1 "github.com/operator101/operator101/api/app/v1"
	batchv1alpha1 "github.com/operator101/operator101/api/batch/v1alpha1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/api/conditions"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
)

// What make demo leaves running (hack/demo.sh): operator101 installed by OLM in demoOperatorNS, the samples in
// demoNS.
const (
	demoOperatorNS = "operator101-system"
	demoNS         = "demo"
)

// Each tutorial's example manifest, as its reader types it (docs/guides/seeds.md says what differs from the samples).
const (
	seed000MyWeb = `apiVersion: operator.k8s-summit.org/v1
kind: MyWeb
metadata:
  name: myweb
  namespace: default
spec:
  image: nginx
  nodePortNumber: 30100
  pageContentHtml: |
    <html>
      <body>
        <h1>Hello, World!</h1>
      </body>
    </html>
`
	seed001At = `apiVersion: cnat.programming-kubernetes.info/v1alpha1
kind: At
metadata:
  labels:
    controller-tools.k8s.io: "1.0"
  name: example-at
spec:
  schedule: "2019-04-12T10:12:00Z"
  command: "echo YAY"
`
	// The blog's second and third manifests with the change docs/guides/seeds.md names (the group), and the third's
	// metadata.label as metadata.labels; the Secret the blog has its reader create.
	seed002Secret = `apiVersion: v1
kind: Secret
metadata:
  name: my-secret
stringData:
  my-key: changeit
`
	seed002NoLabel = `apiVersion: mygroup.handsomeguy.cn/v1alpha1
kind: DatabaseUser
metadata:
  name: cnhandsomeguy
spec:
  user: cnhandsomeguy
  password:
    name: my-secret
    key: my-key
`
	seed002Labelled = `apiVersion: mygroup.handsomeguy.cn/v1alpha1
kind: DatabaseUser
metadata:
  labels:
    target: that-database
  name: cnhandsomeguy
spec:
  user: cnhandsomeguy
  password:
    name: my-secret
    key: my-key
`
	seed003AppService = `apiVersion: app.example.com/v1
kind: AppService
metadata:
  name: nginx-app
spec:
  size: 2
  image: nginx:1.7.9
  ports:
    - port: 80
      targetPort: 80
      nodePort: 30002
`
	seed004AppService = `apiVersion: batch.schwarzeni.github.com/v1alpha1
kind: AppService
metadata:
  name: nginx-app
spec:
  replicas: %d
  image: nginx:alpine
  ports:
  - port: 80
    targetPort: 80
    nodePort: 30002
`
)

// TestSeedsAfterDemo follows each tutorial's own steps, typed as its reader types them, on the cluster make demo
// left running (hack/cluster/e2e.sh runs make demo, then this test alone), and checks that each gives what the
// tutorial shows, or what docs/guides/seeds.md says instead, and that none of them disturbs the demo's samples.
func TestSeedsAfterDemo(t *testing.T) {
	if err := get(&operatorv1.MyWeb{}, demoNS, "myweb"); err != nil {
		t.Fatalf("make demo's samples are not running (run this test through make test-e2e): %v", err)
	}
	for _, seed := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"000MyWeb", seed000},
		{"001At", seed001},
		{"002DatabaseUser", seed002},
		{"003AppService", seed003},
		{"004AppService", seed004},
	} {
		t.Run(seed.name, seed.fn)
	}
	// The demo's samples are as the README's path left them: every one still Available, Succeeded or Ready.
	kubectl(t, "-n", demoNS, "wait", "--timeout", "60s", "--for", "condition=Available", "myweb/myweb",
		"appservices.app.example.com/nginx-app", "appservices.batch.schwarzeni.github.com/nginx-app-v1alpha1")
	kubectl(t, "-n", demoNS, "wait", "--timeout", "60s", "--for", "condition=Succeeded", "at/example-at")
	kubectl(t, "-n", demoNS, "wait", "--timeout", "60s", "--for", "condition=Ready", "databaseuser/cnhandsomeguy", "mydb/demo-app")
	waitHTTP(t, servedAt(t, demoNS, "myweb"), "<h1>Hello, World!</h1>")
}

// manifest writes a tutorial's manifest to a file, as its reader has it.
func manifest(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Seed 000: the MyWeb in namespace default on node port 30100; its page answers there.
func seed000(t *testing.T) {
	p := manifest(t, "myweb.yaml", seed000MyWeb)
	t.Cleanup(func() {
		_, _ = tryRun(nil, f.kubectl, "delete", "--ignore-not-found", "--wait=true", "--timeout=120s", "-f", p)
	})
	kubectl(t, "apply", "-f", p)
	waitCondition(t, &operatorv1.MyWeb{}, "default", "myweb", conditions.Available)
	waitHTTP(t, fmt.Sprintf("http://%s:30100/", f.nodeIP), "<h1>Hello, World!</h1>")
}

// Seed 001: the book's reader makes namespace cnat their context's default, applies the example, and finds the
// At DONE, its pod Completed and the log YAY.
func seed001(t *testing.T) {
	const ns = "cnat"
	deleteNamespace(t, ns)
	t.Cleanup(func() { deleteNamespace(t, ns) })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	raw, err := os.ReadFile(f.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kubeconfig, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	reader := []string{"KUBECONFIG=" + kubeconfig}
	run(t, reader, f.kubectl, "create", "ns", ns)
	run(t, reader, f.kubectl, "config", "set-context", "--current", "--namespace="+ns)
	run(t, reader, f.kubectl, "apply", "-f", manifest(t, "cnat-example.yaml", seed001At))
	waitAtPhase(t, ns, "example-at", cnatv1alpha1.PhaseDone, 3*time.Minute)
	eventually(t, time.Minute, "kubectl get at,pods: example-at DONE, example-at-pod Completed", func() (bool, string) {
		out := run(t, reader, f.kubectl, "get", "at,pods")
		return strings.Contains(out, "example-at ") && strings.Contains(out, "DONE") &&
			strings.Contains(out, "example-at-pod") && strings.Contains(out, "Completed"), out
	})
	if logs := run(t, reader, f.kubectl, "logs", "example-at-pod"); strings.TrimSpace(logs) != "YAY" {
		t.Errorf("kubectl logs example-at-pod: %q, want YAY", logs)
	}
}

// Seed 002: the blog's reader works in namespace default. The manifest without a target label goes to the
// target named default, which make demo does not declare: UnknownTarget. With the label, the target is the
// demo's that-database, which admits namespace demo only: TargetNotAllowed. The account cnhandsomeguy, which
// the demo's own DatabaseUser holds, is neither touched nor taken over, and the reader's DatabaseUser deletes
// at once (its finalizer has no account to drop).
func seed002(t *testing.T) {
	secret := manifest(t, "secret.yaml", seed002Secret)
	first := manifest(t, "dbu.yaml", seed002NoLabel)
	t.Cleanup(func() {
		_, _ = tryRun(nil, f.kubectl, "delete", "-n", "default", "--ignore-not-found", "--wait=true", "--timeout=120s", "-f", first, "-f", secret)
	})
	kubectl(t, "apply", "-n", "default", "-f", secret)
	kubectl(t, "apply", "-n", "default", "-f", first)
	waitReadyReason(t, "default", "cnhandsomeguy", mygroupv1alpha1.ReasonUnknownTarget)
	kubectl(t, "apply", "-n", "default", "-f", manifest(t, "dbu-labelled.yaml", seed002Labelled))
	waitReadyReason(t, "default", "cnhandsomeguy", mygroupv1alpha1.ReasonTargetNotAllowed)
	if out := kubectl(t, "get", "dbu", "-n", "default", "-o", "wide"); !strings.Contains(out, "TargetNotAllowed") {
		t.Errorf("kubectl get dbu -o wide does not show the reason:\n%s", out)
	}
	kubectl(t, "delete", "-n", "default", "dbu", "cnhandsomeguy", "--wait=true", "--timeout=60s")
	if n := accounts(t, "cnhandsomeguy"); n != 1 {
		t.Errorf("%d accounts cnhandsomeguy after the reader's DatabaseUser came and went, want the demo's one", n)
	}
	if who := login(t, "cnhandsomeguy", "changeit"); who != "cnhandsomeguy@%" {
		t.Errorf("the demo's account logs in as %q, want cnhandsomeguy@%%", who)
	}
}

func waitReadyReason(t *testing.T, ns, name, reason string) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("DatabaseUser %s/%s Ready=False %s", ns, name, reason), func() (bool, string) {
		var u mygroupv1alpha1.DatabaseUser
		if err := get(&u, ns, name); err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(u.Status.Conditions, mygroupv1alpha1.ConditionReady)
		if cond == nil {
			return false, "no Ready condition yet"
		}
		return cond.Status == "False" && cond.Reason == reason && cond.ObservedGeneration == u.Generation,
			fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
	})
}

// Seed 003: the operator-sdk tutorial's AppService in namespace default: two pods, found by app=nginx-app, and
// nginx on node port 30002. Its image nginx:1.7.9 is the local cluster's stand-in (docs/guides/seeds.md). It leaves
// node port 30002 free for seed 004's.
func seed003(t *testing.T) {
	p := manifest(t, "app_v1_appservice_cr.yaml", seed003AppService)
	t.Cleanup(func() {
		_, _ = tryRun(nil, f.kubectl, "delete", "-n", "default", "--ignore-not-found", "--wait=true", "--timeout=120s", "-f", p)
	})
	kubectl(t, "apply", "-n", "default", "-f", p)
	waitCondition(t, &appv1.AppService{}, "default", "nginx-app", conditions.Available)
	podsByTutorialLabel(t, "default", "nginx-app", 2)
	waitHTTP(t, fmt.Sprintf("http://%s:30002/", f.nodeIP), "")
	kubectl(t, "delete", "-n", "default", "-f", p, "--wait=true", "--timeout=120s")
	eventually(t, 2*time.Minute, "seed 003's Service gone (node port 30002 free)", func() (bool, string) {
		err := get(&corev1.Service{}, "default", "nginx-app")
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// Seed 004: the kubebuilder tutorial's reader applies the example in kubebuilder-appservice-system and lists
// the namespace's pods (two nginx-app pods, no others: the operator runs elsewhere); then replicas: 5 and apply
// again: five.
func seed004(t *testing.T) {
	const ns = "kubebuilder-appservice-system"
	deleteNamespace(t, ns)
	t.Cleanup(func() { deleteNamespace(t, ns) })
	kubectl(t, "create", "namespace", ns)
	for _, replicas := range []int{2, 5} {
		kubectl(t, "apply", "-f", manifest(t, "batch_v1alpha1_appservice.yaml", fmt.Sprintf(seed004AppService, replicas)), "-n", ns)
		waitCondition(t, &batchv1alpha1.AppService{}, ns, "nginx-app", conditions.Available)
		eventually(t, 3*time.Minute, fmt.Sprintf("kubectl get pods -n %s: %d nginx-app pods Running", ns, replicas), func() (bool, string) {
			out := kubectl(t, "get", "pods", "-n", ns, "--no-headers")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			running := 0
			for _, l := range lines {
				if strings.HasPrefix(l, "nginx-app-") && strings.Contains(l, " Running ") {
					running++
				}
			}
			return running == replicas && len(lines) == replicas, out
		})
	}
	waitHTTP(t, fmt.Sprintf("http://%s:30002/", f.nodeIP), "")
}
