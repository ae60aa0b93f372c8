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

// Package e2e installs operator101 the ways its users do, on the real local cluster (hack/cluster) with real
// OLM: from the catalog through a Subscription, with `operator-sdk run bundle`, and checks it with
// `operator-sdk scorecard`. hack/cluster/e2e.sh (make test-e2e) brings up the cluster, OLM, the images and a
// MariaDB on the node address, then runs these tests with the facts in the environment (see facts below).
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	operatorsv2 "github.com/operator-framework/api/pkg/operators/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	operator101 "github.com/operator101/operator101/api"
	"github.com/operator101/operator101/test/olmrbac"
)

// facts are what hack/cluster/e2e.sh prepared, read from the environment.
type facts struct {
	kubeconfig  string // the cluster's admin kubeconfig
	kubectl     string // bin/kubectl
	operatorSDK string // bin/operator-sdk
	nodeIP      string // a node's address, from the Node objects (or NODE_ADDRESS): NodePorts
	catalogImg  string // the catalog image nodes pull (IMAGE_TAG_BASE-catalog): the releases and this tree
	tightImg    string // the same catalog with a next version that tightens a CRD (hack/cluster/release-images.sh)
	bundleImgs  string // the bundle image name without tag, as pods and this machine name it (for run bundle)
	opmImg      string // the opm image, named so (run bundle's index image)
	helperImg   string // busybox: scorecard's untar and storage images
	probeImg    string // hack/cluster/images/probe: checks from inside a pod (a login with a connection Secret)
	certDir     string // the CAs of the registry bundleImgs names, when the system's do not sign it (else empty)
	mariadbEnv  string // hack/mariadb.sh's env file: MARIADB_HOST, MARIADB_PORT, admin user and password
	root        string // the repository
}

var (
	f facts
	c client.Client
	// newVersion is the version of this tree (bundle/), which the e2e installs after the releases; newCSV its CSV.
	newVersion, newCSV string
	// The newest release (config/catalog/releases): the head of the committed catalog's channel.
	headVersion, headCSV string
)

func TestMain(m *testing.M) {
	f = facts{
		kubeconfig:  os.Getenv("KUBECONFIG"),
		kubectl:     os.Getenv("E2E_KUBECTL"),
		operatorSDK: os.Getenv("E2E_OPERATOR_SDK"),
		nodeIP:      os.Getenv("E2E_NODE_IP"),
		catalogImg:  os.Getenv("E2E_CATALOG_IMAGE"),
		tightImg:    os.Getenv("E2E_TIGHTENED_CATALOG_IMAGE"),
		bundleImgs:  os.Getenv("E2E_BUNDLE_REPO"),
		opmImg:      os.Getenv("E2E_OPM_IMAGE"),
		helperImg:   os.Getenv("E2E_HELPER_IMAGE"),
		probeImg:    os.Getenv("E2E_PROBE_IMAGE"),
		certDir:     os.Getenv("E2E_REGISTRY_CERT_DIR"),
		mariadbEnv:  os.Getenv("E2E_MARIADB_ENV"),
		root:        os.Getenv("E2E_ROOT"),
	}
	for k, v := range map[string]string{"KUBECONFIG": f.kubeconfig, "E2E_KUBECTL": f.kubectl,
		"E2E_OPERATOR_SDK": f.operatorSDK, "E2E_NODE_IP": f.nodeIP, "E2E_CATALOG_IMAGE": f.catalogImg, "E2E_TIGHTENED_CATALOG_IMAGE": f.tightImg,
		"E2E_BUNDLE_REPO": f.bundleImgs, "E2E_OPM_IMAGE": f.opmImg, "E2E_HELPER_IMAGE": f.helperImg,
		"E2E_PROBE_IMAGE": f.probeImg,
		"E2E_MARIADB_ENV": f.mariadbEnv, "E2E_ROOT": f.root} {
		if v == "" {
			fmt.Fprintf(os.Stderr, "e2e: %s is not set: run these tests through make test-e2e (hack/cluster/e2e.sh)\n", k)
			os.Exit(2)
		}
	}
	// The clients log nothing the tests use; without a logger controller-runtime prints a stack trace.
	ctrllog.SetLogger(logr.Discard())
	cfg, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err == nil {
		// client-go's default rate (5 requests a second) would make the permission tables' thousands of
		// SubjectAccessReviews take minutes; the API server's own flow control is the limit that matters.
		cfg.QPS, cfg.Burst = 200, 400
		scheme := runtime.NewScheme()
		for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, operator101.AddToScheme,
			operatorsv1alpha1.AddToScheme, operatorsv1.AddToScheme, operatorsv2.AddToScheme, apiextensionsv1.AddToScheme} {
			if err = add(scheme); err != nil {
				break
			}
		}
		if err == nil {
			c, err = client.New(cfg, client.Options{Scheme: scheme})
		}
	}
	if err == nil {
		newVersion, err = bundleVersion(f.root)
		newCSV = "operator101.v" + newVersion
	}
	if err == nil {
		headVersion, err = newestRelease(f.root)
		headCSV = "operator101.v" + headVersion
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// bundleVersion is the version of the CSV in root's bundle/.
// release is one record of config/catalog/releases.
type release struct{ version, commit, operator, bundle string }

// readReleases reads config/catalog/releases, oldest first.
func readReleases(root string) ([]release, error) {
	raw, err := os.ReadFile(filepath.Join(root, "config", "catalog", "releases"))
	if err != nil {
		return nil, err
	}
	var out []release
	for _, line := range strings.Split(string(raw), "\n") {
		if fields := strings.Fields(line); len(fields) >= 5 && !strings.HasPrefix(fields[0], "#") {
			out = append(out, release{fields[0], fields[1], fields[2], fields[4]})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("config/catalog/releases records no release")
	}
	return out, nil
}

// newestRelease is the version of config/catalog/releases' last record.
func newestRelease(root string) (string, error) {
	rs, err := readReleases(root)
	if err != nil {
		return "", err
	}
	return rs[len(rs)-1].version, nil
}

func bundleVersion(root string) (string, error) {
	csv, err := olmrbac.CSV(root)
	if err != nil {
		return "", err
	}
	if csv.Spec.Version.String() == "0.0.0" {
		return "", fmt.Errorf("bundle/'s CSV has no version")
	}
	return csv.Spec.Version.String(), nil
}

// run runs a command (kubectl, operator-sdk) and returns its output; the test fails when it fails.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	out, err := tryRun(env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

func tryRun(env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(append(os.Environ(), "KUBECONFIG="+f.kubeconfig), env...)
	cmd.Dir = f.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// kubectl runs bin/kubectl against the cluster.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	return run(t, nil, f.kubectl, args...)
}

// eventually polls check every second until it reports done, failing the test after timeout with the last
// state check described.
func eventually(t *testing.T, timeout time.Duration, what string, check func() (bool, string)) {
	t.Helper()
	start := time.Now()
	last := ""
	for {
		done, state := check()
		if done {
			t.Logf("%s (%.0fs)", what, time.Since(start).Seconds())
			return
		}
		if state != last {
			t.Logf("waiting: %s: %s", what, state)
			last = state
		}
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %v: %s; last state: %s", timeout, what, state)
		}
		time.Sleep(time.Second)
	}
}

// get reads one object; a missing object is reported as not done by the callers' checks.
func get(obj client.Object, ns, name string) error {
	return c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj)
}

// freshNamespace creates ns (deleting a leftover from an earlier, interrupted run first) and deletes it when the
// test ends.
func freshNamespace(t *testing.T, ns string) {
	t.Helper()
	deleteNamespace(t, ns)
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	t.Cleanup(func() { deleteNamespace(t, ns) })
}

func deleteNamespace(t *testing.T, ns string) {
	t.Helper()
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := c.Delete(context.Background(), obj); apierrors.IsNotFound(err) {
		return
	} else if err != nil {
		t.Errorf("deleting namespace %s: %v", ns, err)
		return
	}
	eventually(t, 3*time.Minute, "namespace "+ns+" deleted", func() (bool, string) {
		err := get(&corev1.Namespace{}, "", ns)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}
