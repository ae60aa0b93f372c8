//go:build faults

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

package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/operator101/operator101/test/testenv"
)

// cluster is an API server of the test's own: a fixed certificate directory (so that it can be stopped and
// started again with the same certificates and port) and an audit log of every pod creation.
type cluster struct {
	te         *envtest.Environment
	cfg        *rest.Config
	client     client.Client
	kubeconfig string // an administrator's kubeconfig file, for the manager binary
	auditLog   string
}

// auditPolicy records every pod creation, at the end of the request, with its status code and the pod it
// created (its UID).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: RequestResponse
  verbs: ["create"]
  resources: [{group: "", resources: ["pods"]}]
- level: None
`

// startCluster starts etcd and kube-apiserver with operator101's CRDs and stops them when the test ends.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir := t.TempDir()
	c := &cluster{auditLog: filepath.Join(dir, "audit.log")}
	policy := filepath.Join(dir, "audit-policy.yaml")
	must(t, os.WriteFile(policy, []byte(auditPolicy), 0o600))
	certs := filepath.Join(dir, "certs")
	must(t, os.MkdirAll(certs, 0o700))
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(env.Root, "bin", "k8s")
	}
	c.te = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(env.Root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                env.Scheme,
		// kube-apiserver drains its requests on SIGTERM; give it time rather than SIGKILL it.
		ControlPlaneStopTimeout: 2 * time.Minute,
	}
	api := c.te.ControlPlane.GetAPIServer()
	api.CertDir = certs
	api.Configure().Set("audit-policy-file", policy).Set("audit-log-path", c.auditLog).Set("audit-log-mode", "blocking").
		// On SIGTERM, end the watches after 2 s instead of serving them until the 60 s shutdown timeout.
		Set("shutdown-watch-termination-grace-period", "2s")
	cfg, err := c.te.Start()
	if err != nil {
		t.Fatalf("starting the API server: %v", err)
	}
	t.Cleanup(func() {
		if err := c.te.Stop(); err != nil {
			t.Errorf("stopping the API server: %v", err)
		}
	})
	c.cfg = cfg
	c.client, err = client.New(cfg, client.Options{Scheme: env.Scheme})
	must(t, err)
	user, err := c.te.AddUser(envtest.User{Name: "operator", Groups: []string{"system:masters"}}, cfg)
	must(t, err)
	kc, err := user.KubeConfig()
	must(t, err)
	c.kubeconfig = filepath.Join(dir, "kubeconfig")
	must(t, os.WriteFile(c.kubeconfig, kc, 0o600))
	return c
}

// podCreates is what the API server's audit log says of pod creations, per namespace/name.
type podCreates struct {
	// created counts the creations answered 201, and uids holds the UID of each pod they created (from the
	// response; a 201 without one counts as a pod of its own).
	created map[string]int
	uids    map[string]map[types.UID]bool
	// disconnected counts the creations that ended "client disconnected" (500): the client was killed while
	// its request ran. One whose body was read may still have created its pod (the API server finishes the
	// write, and the log shows no UID); one that ended before its body was read names no pod and created none.
	disconnected map[string]int
}

// podCreations reads the API server's audit log.
func (c *cluster) podCreations(t *testing.T) podCreates {
	t.Helper()
	f, err := os.Open(c.auditLog)
	must(t, err)
	defer func() { _ = f.Close() }()
	out, err := parsePodCreations(f)
	must(t, err)
	return out
}

// parsePodCreations reads the pod creations of an audit log.
func parsePodCreations(r io.Reader) (podCreates, error) {
	out := podCreates{created: map[string]int{}, uids: map[string]map[types.UID]bool{}, disconnected: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Verb      string `json:"verb"`
			Stage     string `json:"stage"`
			AuditID   string `json:"auditID"`
			ObjectRef struct {
				Resource  string `json:"resource"`
				Namespace string `json:"namespace"`
			} `json:"objectRef"`
			ResponseStatus struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"responseStatus"`
			RequestObject struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"requestObject"`
			ResponseObject struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"responseObject"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return out, fmt.Errorf("audit log: %w", err)
		}
		if ev.Verb != "create" || ev.ObjectRef.Resource != "pods" || ev.Stage != "ResponseComplete" {
			continue
		}
		key := ev.ObjectRef.Namespace + "/" + ev.RequestObject.Metadata.Name
		switch {
		case ev.ResponseStatus.Code == 201:
			out.created[key]++
			uid := ev.ResponseObject.Metadata.UID
			if uid == "" {
				uid = types.UID("no-uid-in-the-audit-log/" + ev.AuditID)
			}
			addUID(out.uids, key, uid)
		case ev.ResponseStatus.Code == 500 && ev.ResponseStatus.Message == "client disconnected" && ev.RequestObject.Metadata.Name != "":
			out.disconnected[key]++
		}
	}
	return out, sc.Err()
}

// podsPerAt is the pods (UIDs) created for each At's pod name in ns: those of the creations answered 201 and
// those the kubelet saw. unanswered counts the pods no 201 tells of (their creation's client was killed); strays
// are pods of names that belong to no At.
func podsPerAt(ns string, ats []string, creates podCreates, seen map[string]map[types.UID]bool) (
	perAt map[string]map[types.UID]bool, unanswered int, strays map[string]map[types.UID]bool) {
	all := map[string]map[types.UID]bool{}
	for _, m := range []map[string]map[types.UID]bool{creates.uids, seen} {
		for key, uids := range m {
			for u := range uids {
				addUID(all, key, u)
			}
		}
	}
	perAt = map[string]map[types.UID]bool{}
	for _, name := range ats {
		key := ns + "/" + name + "-pod"
		perAt[name] = all[key]
		for u := range all[key] {
			if !creates.uids[key][u] {
				unanswered++
			}
		}
		delete(all, key)
	}
	return perAt, unanswered, all
}

func addUID(m map[string]map[types.UID]bool, key string, uid types.UID) {
	if m[key] == nil {
		m[key] = map[types.UID]bool{}
	}
	m[key][uid] = true
}

// podsSeen records the UID of every pod the stand-in kubelet saw, per namespace/name: the pods that a
// creation whose client was killed made anyway are among them (every pod is seen within 100 ms, and none is
// deleted before it finished).
type podsSeen struct {
	mu   sync.Mutex
	uids map[string]map[types.UID]bool
}

func (p *podsSeen) add(pod *corev1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.uids == nil {
		p.uids = map[string]map[types.UID]bool{}
	}
	addUID(p.uids, pod.Namespace+"/"+pod.Name, pod.UID)
}

func (p *podsSeen) get() map[string]map[types.UID]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]map[types.UID]bool{}
	for k, uids := range p.uids {
		for u := range uids {
			addUID(out, k, u)
		}
	}
	return out
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// managerBinary builds the manager (once per test binary) into a temporary directory.
func managerBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "operator101-faults")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "manager")
		cmd := exec.Command("go", "build", "-o", binary, "./cmd")
		cmd.Dir = env.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building the manager: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// process is a running manager binary with its output captured.
type process struct {
	cmd  *exec.Cmd
	out  testenv.SyncBuffer
	done chan struct{}
	err  error
}

func (p *process) log() string { return p.out.String() }

// startManager runs the manager binary against c with the given environment (added to the test's) and
// kills it when the test ends.
func startManager(t *testing.T, c *cluster, extraEnv []string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(managerBinary(t), args...), done: make(chan struct{})}
	p.cmd.Env = append(append(os.Environ(), "KUBECONFIG="+c.kubeconfig, "WATCH_NAMESPACE="), extraEnv...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	must(t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill(t) })
	return p
}

// kill sends SIGKILL and waits until the process is gone.
func (p *process) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Errorf("manager %d did not exit after SIGKILL", p.cmd.Process.Pid)
	}
}

// exited says whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// eventually polls ok every 100 ms until it is true or within has passed.
func eventually(t *testing.T, within time.Duration, what string, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for {
		done, detail := ok()
		if done {
			return
		}
		last = detail
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, within, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// completePods plays the kubelet, which envtest does not have: every operator101 pod in ns that has not
// finished succeeds. It records every pod it sees in seen (when not nil), and returns how many it moved.
func completePods(ctx context.Context, c client.Client, ns string, seen *podsSeen) (int, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/managed-by": "operator101"}); err != nil {
		return 0, err
	}
	n := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if seen != nil {
			seen.add(p)
		}
		if p.Status.Phase == corev1.PodSucceeded || p.DeletionTimestamp != nil {
			continue
		}
		now := metav1.Now()
		p.Status.Phase = corev1.PodSucceeded
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
				StartedAt: now, FinishedAt: now}}}}
		if err := c.Status().Update(ctx, p); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				continue // the next round sees the newer pod
			}
			return n, err
		}
		n++
	}
	return n, nil
}
