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

// Command scorecard-local runs every test of bundle/tests/scorecard/config.yaml on this machine, without
// pods, and prints a pass/fail table (`make scorecard`). `operator-sdk scorecard` runs each test as a pod
// and reads its v1alpha3 TestStatus from the pod's log; here each test runs the same code another way:
//
//   - basic and olm suites (image scorecard-test): the scorecard-test binary built from operator-sdk v1.33.0
//     (bin/scorecard-test) runs with the bundle at /bundle, as in its pod, inside a private root directory
//     (`unshare --user --map-root-user --root DIR`), and its JSON TestStatus is read from stdout.
//   - operator101 suite (image operator101-scorecard): the same check (test/scorecard/almready) runs
//     in-process against a local API server (etcd + kube-apiserver from bin/k8s) with the CRDs installed,
//     the real manager binary running as the CSV's ServiceAccount (RBAC created as OLM would, requests
//     impersonated), a private MariaDB as the DatabaseUser target, and a kubelet stand-in: this API server
//     has no kubelet, so the stand-in marks Deployments rolled out and Pods Succeeded, as a node would.
//
// Exit status 1 when any test does not pass.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	scapiv1alpha3 "github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/test/mariadbtest"
	"github.com/operator101/operator101/test/olmrbac"
	"github.com/operator101/operator101/test/scorecard/almready"
	"github.com/operator101/operator101/test/scorecard/descriptors"
	"github.com/operator101/operator101/test/testenv"
)

const (
	operatorNS = "operator101-system"
	testNS     = "scorecard"
	targetName = "mariadb-target"
)

type row struct {
	suite, test, state, detail string
}

func main() {
	bundle := flag.String("bundle", "bundle", "the bundle directory")
	timeout := flag.Duration("timeout", 2*time.Minute, "time for the operator101 suite's examples to be ready")
	selector := flag.String("selector", "", "run only the tests with this label, e.g. suite=olm (like scorecard's --selector)")
	flag.Parse()
	selKey, selValue, _ := strings.Cut(*selector, "=")

	root, err := testenv.RepoRoot()
	if err != nil {
		fatal(err)
	}
	cfgPath := filepath.Join(*bundle, "tests", "scorecard", "config.yaml")
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		fatal(err)
	}
	cfg := scapiv1alpha3.Configuration{}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		fatal(fmt.Errorf("%s: %w", cfgPath, err))
	}

	var rows []row
	for _, stage := range cfg.Stages {
		for _, tc := range stage.Tests {
			suite := tc.Labels["suite"]
			if selKey != "" && tc.Labels[selKey] != selValue {
				continue
			}
			if len(tc.Entrypoint) == 0 {
				rows = append(rows, row{suite, tc.Labels["test"], "error", "no entrypoint"})
				continue
			}
			var st scapiv1alpha3.TestStatus
			switch tc.Entrypoint[0] {
			case "scorecard-test":
				st = runStatic(root, *bundle, tc.Entrypoint[1:])
			case "operator101-scorecard":
				if len(tc.Entrypoint) > 1 && tc.Entrypoint[1] == descriptors.TestName {
					st = descriptors.Run(*bundle)
				} else {
					st = runFunctional(root, *bundle, *timeout)
				}
			default:
				st = errStatus(fmt.Errorf("no local runner for entrypoint %q", tc.Entrypoint[0]))
			}
			for _, r := range st.Results {
				rows = append(rows, row{suite, r.Name, string(r.State), summary(r)})
			}
		}
	}

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SUITE\tTEST\tSTATE\tDETAIL")
	failed := 0
	for _, r := range rows {
		if r.state != string(scapiv1alpha3.PassState) {
			failed++
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.suite, r.test, r.state, r.detail)
	}
	_ = w.Flush()
	fmt.Printf("\n%d tests, %d passed, %d not passed\n", len(rows), len(rows)-failed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

func summary(r scapiv1alpha3.TestResult) string {
	if len(r.Errors) > 0 {
		return strings.Join(r.Errors, "; ")
	}
	if r.State == scapiv1alpha3.PassState && r.Name == almready.TestName {
		return strings.ReplaceAll(strings.TrimSpace(r.Log), "\n", "; ")
	}
	if len(r.Suggestions) > 0 && r.State != scapiv1alpha3.PassState {
		return "suggestions: " + strings.Join(r.Suggestions, "; ")
	}
	return ""
}

func errStatus(err error) scapiv1alpha3.TestStatus {
	return scapiv1alpha3.TestStatus{Results: []scapiv1alpha3.TestResult{{
		State: scapiv1alpha3.ErrorState, Errors: []string{err.Error()}}}}
}

// runStatic runs bin/scorecard-test as its pod would: the bundle at /bundle, here in a private root.
func runStatic(root, bundle string, args []string) scapiv1alpha3.TestStatus {
	dir, err := os.MkdirTemp("", "scorecard-root-")
	if err != nil {
		return errStatus(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin, err := filepath.EvalSymlinks(filepath.Join(root, "bin", "scorecard-test"))
	if err != nil {
		return errStatus(fmt.Errorf("bin/scorecard-test (make operator-sdk builds it): %w", err))
	}
	for _, c := range [][]string{
		{"cp", bin, filepath.Join(dir, "scorecard-test")},
		{"cp", "-a", bundle, filepath.Join(dir, "bundle")},
		{"mkdir", "-p", filepath.Join(dir, "tmp")},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return errStatus(fmt.Errorf("%v: %w: %s", c, err, out))
		}
	}
	cmd := exec.Command("unshare", append([]string{"--user", "--map-root-user", "--root", dir, "/scorecard-test"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	st := scapiv1alpha3.TestStatus{}
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil || len(st.Results) == 0 {
		// runErr and err may each be nil here, which %v prints as <nil> and %w as %!w(<nil>); errStatus keeps only the text.
		return errStatus(fmt.Errorf("scorecard-test %v: %v %v: %s%s", args, runErr, err, stdout.String(), stderr.String())) //nolint:errorlint // %w would misprint a nil runErr or err
	}
	return st
}

// runFunctional runs the operator101 suite against a local API server with the real manager.
func runFunctional(root, bundle string, timeout time.Duration) scapiv1alpha3.TestStatus {
	examples, err := almready.Examples(bundle)
	if err != nil {
		return almready.Status(nil, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Minute)
	defer cancel()

	env, err := testenv.Start()
	if err != nil {
		return almready.Status(nil, err)
	}
	defer func() { _ = env.Stop() }()
	admin := kubernetes.NewForConfigOrDie(env.Config)

	// The operator's identity, as OLM grants it for an all-namespaces OperatorGroup.
	strategy, err := olmrbac.Strategy(root)
	if err != nil {
		return almready.Status(nil, err)
	}
	if err := olmrbac.Grant(ctx, admin, olmrbac.Mode{Name: "scorecard", OperatorNS: operatorNS}, strategy); err != nil {
		return almready.Status(nil, fmt.Errorf("granting the CSV's RBAC: %w", err))
	}
	for _, ns := range []string{testNS} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return almready.Status(nil, err)
		}
	}

	// The DatabaseUser target: a private MariaDB, its admin account in a Secret of the operator's namespace.
	db, err := mariadbtest.Start()
	if err != nil {
		return almready.Status(nil, fmt.Errorf("starting MariaDB: %w", err))
	}
	defer func() { _ = db.Stop() }()
	if _, err := admin.CoreV1().Secrets(operatorNS).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: targetName, Namespace: operatorNS},
		StringData: map[string]string{"host": db.Admin.Host, "port": strconv.Itoa(db.Admin.Port),
			"username": db.Admin.User, "password": db.Admin.Password},
	}, metav1.CreateOptions{}); err != nil {
		return almready.Status(nil, err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		return almready.Status(nil, err)
	}
	// As the cluster admin: the DatabaseTargets the DatabaseUser and Database examples name (and the default
	// one), for the test namespace, on the private MariaDB (which has no TLS).
	targets := []string{"default"}
	for _, ex := range examples {
		if t := ex.GetLabels()["target"]; t != "" && (ex.GetKind() == "DatabaseUser" || ex.GetKind() == "Database") {
			targets = append(targets, t)
		}
	}
	for _, name := range targets {
		dt := &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: mygroupv1alpha1.DatabaseTargetSpec{
				AdminSecretRef:    mygroupv1alpha1.SecretReference{Namespace: operatorNS, Name: targetName},
				TLS:               mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSDisabled},
				AllowedNamespaces: []string{testNS},
			}}
		if err := c.Create(ctx, dt); err != nil && !apierrors.IsAlreadyExists(err) {
			return almready.Status(nil, fmt.Errorf("creating DatabaseTarget %s: %w", name, err))
		}
	}

	stopManager, logPath, err := startManager(ctx, root, env, strategy)
	if err != nil {
		return almready.Status(nil, err)
	}
	defer stopManager()
	standInCtx, stopStandIn := context.WithCancel(ctx)
	defer stopStandIn()
	go almready.KubeletStandIn(standInCtx, admin, testNS)

	st := almready.Status(almready.Run(ctx, c, testNS, examples, timeout), nil)
	if len(st.Results) > 0 && st.Results[0].State != scapiv1alpha3.PassState {
		st.Results[0].Errors = append(st.Results[0].Errors, "manager log: "+logPath)
	}
	return st
}

// startManager builds the manager and runs it against the API server as the CSV's ServiceAccount.
func startManager(ctx context.Context, root string, env *testenv.Env, s v1alpha1.StrategyDetailsDeployment) (func(), string, error) {
	dir, err := os.MkdirTemp("", "scorecard-manager-")
	if err != nil {
		return nil, "", err
	}
	bin := filepath.Join(dir, "manager")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("building the manager: %w: %s", err, out)
	}
	kc, err := env.Kubeconfig("scorecard-operator", "system:masters")
	if err != nil {
		return nil, "", err
	}
	kcfg, err := clientcmd.Load(kc)
	if err != nil {
		return nil, "", err
	}
	user, groups := olmrbac.User(operatorNS, olmrbac.ServiceAccount(s))
	for _, ai := range kcfg.AuthInfos {
		ai.Impersonate, ai.ImpersonateGroups = user, groups
	}
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kcfg, kcPath); err != nil {
		return nil, "", err
	}
	logPath := filepath.Join(dir, "manager.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(bin, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kcPath, "POD_NAMESPACE="+operatorNS, "WATCH_NAMESPACE=")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
		_ = logf.Close()
	}, logPath, nil
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "scorecard-local: %v\n", err)
	os.Exit(2)
}
