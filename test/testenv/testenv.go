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

// Package testenv runs a real API server (etcd + kube-apiserver, built by hack/tools) with operator101's CRDs
// for integration tests, and starts managers against it.
//
// A suite starts one Env in TestMain and stops it when done:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }
package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/operator101/operator101/api"
)

// OwnerReferencesPlugin is the admission plugin every Env's API server enables beside its defaults.
const OwnerReferencesPlugin = "OwnerReferencesPermissionEnforcement"

// Env is a running API server with operator101's CRDs installed.
type Env struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is an uncached administrator client, for tests to create objects and read the truth.
	Client client.Client
	// Scheme knows the built-in types and every operator101 API.
	Scheme *runtime.Scheme
	// Root is the repository's top directory.
	Root string

	env *envtest.Environment
	// serverPIDs are etcd's and kube-apiserver's; stopReaper ends the process that stops them should this test
	// binary die without Stop (reaper.go).
	serverPIDs []int
	stopReaper func()
}

// Run starts an Env into *env, runs the tests, stops the Env, and returns the exit code for os.Exit.
func Run(m *testing.M, env **Env) int { return RunWith(m, env) }

// RunWith is Run with the CRDs of crds (files or directories) installed beside operator101's.
func RunWith(m *testing.M, env **Env, crds ...string) int {
	// go test -fuzz runs TestMain again in every fuzzing worker; fuzz targets build objects without an API
	// server, so the workers start none.
	flag.Parse()
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		return m.Run()
	}
	e, err := Start(crds...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: stopping: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Start starts etcd and kube-apiserver from KUBEBUILDER_ASSETS (bin/k8s, which make sets up) and installs
// the CRDs from config/crd/bases, and those of crds (files or directories).
func Start(crds ...string) (*Env, error) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(assets, b)); err != nil {
			return nil, fmt.Errorf("%s not found in %s: run the tests through 'make test', which builds it", b, assets)
		}
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(api.AddToScheme(scheme))

	te := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     append([]string{filepath.Join(root, "config", "crd", "bases")}, crds...),
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	// OwnerReferencesPermissionEnforcement, as OpenShift's API server runs it: a request that sets
	// blockOwnerDeletion on an owner reference is admitted only from a user who may update the owner's
	// finalizers subresource. Requests made as the CSV's identity (test/rbac) meet it as they would there.
	te.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", OwnerReferencesPlugin)
	cfg, err := te.Start()
	if err != nil {
		return nil, fmt.Errorf("starting the API server: %w", err)
	}
	serverPIDs, stopReaper, err := startReaper("etcd", "kube-apiserver")
	if err != nil {
		_ = te.Stop()
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		stopReaper()
		_ = te.Stop()
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return &Env{Config: cfg, Client: c, Scheme: scheme, Root: root, env: te, serverPIDs: serverPIDs,
		stopReaper: stopReaper}, nil
}

// Stop stops the API server and etcd.
func (e *Env) Stop() error {
	e.stopReaper()
	return e.env.Stop()
}

// AddUser creates a user on the API server (no groups unless given) and returns a config that
// authenticates as that user.
func (e *Env) AddUser(name string, groups ...string) (*rest.Config, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, e.Config)
	if err != nil {
		return nil, err
	}
	return u.Config(), nil
}

// Kubeconfig returns a kubeconfig file's content for a new user of the API server.
func (e *Env) Kubeconfig(name string, groups ...string) ([]byte, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, e.Config)
	if err != nil {
		return nil, err
	}
	return u.KubeConfig()
}

// Manager is a manager running in the background of a test.
type Manager struct {
	ctrl.Manager
	// Reconciles counts the finished reconciles of each object, from the manager's log.
	Reconciles *Reconciles
	cancel     context.CancelFunc
	done       chan error
	once       sync.Once
}

// StartManager creates a manager on cfg (e.Config when nil), lets setup register controllers, starts it,
// waits for its caches, and stops it when the test ends. Stop it earlier to simulate a crash or restart.
func (e *Env) StartManager(t testing.TB, cfg *rest.Config, setup func(ctrl.Manager) error, opts ...func(*ctrl.Options)) *Manager {
	t.Helper()
	if cfg == nil {
		cfg = e.Config
	}
	o := ctrl.Options{
		Scheme:                 e.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlConfigForTests(),
	}
	for _, f := range opts {
		f(&o)
	}
	rec := NewReconciles()
	o.Logger = rec.observe(o.Logger)
	mgr, err := ctrl.NewManager(cfg, o)
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	if err := setup(mgr); err != nil {
		t.Fatalf("setting up controllers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{Manager: mgr, Reconciles: rec, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		cancel()
		t.Fatalf("manager caches did not sync")
	}
	t.Cleanup(func() { m.Stop(t) })
	return m
}

// Stop stops the manager and waits until it has.
func (m *Manager) Stop(t testing.TB) {
	m.once.Do(func() {
		m.cancel()
		select {
		case err := <-m.done:
			if err != nil {
				t.Errorf("manager stopped with error: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("manager did not stop within 60s")
		}
	})
}

// GatewayAPICRDs are the files of the Gateway API's HTTPRoute and Gateway CRDs, from the config/crd/standard
// directory of the module go.mod requires (sigs.k8s.io/gateway-api, in the module cache).
func GatewayAPICRDs() ([]string, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("locating sigs.k8s.io/gateway-api: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	var files []string
	for _, kind := range []string{"httproutes", "gateways"} {
		f := filepath.Join(dir, "gateway.networking.k8s.io_"+kind+".yaml")
		if _, err := os.Stat(f); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// RepoRoot finds the repository's top directory (the one holding go.mod) from the working directory up.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "PROJECT")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no repository root (go.mod and PROJECT) above the working directory")
		}
		dir = parent
	}
}

// zapLevel keeps test output to errors unless TEST_DEBUG is set.
func zapLevel() zapcore.Level {
	if os.Getenv("TEST_DEBUG") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// ctrlConfigForTests lets several managers in one test binary register controllers of the same name, as
// the restart tests do.
func ctrlConfigForTests() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true)}
}
