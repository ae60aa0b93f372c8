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
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDevAPIServerScript runs hack/dev-apiserver.sh as make run does: the local API server starts,
// its kubeconfig works, the CRDs are installed, and stop stops it.
func TestDevAPIServerScript(t *testing.T) {
	dir := t.TempDir()
	script := func(arg string) (string, error) {
		cmd := exec.Command(filepath.Join(env.Root, "hack", "dev-apiserver.sh"), arg)
		cmd.Env = append(os.Environ(), "DEV_DIR="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := script("start"); err != nil {
		t.Fatalf("start: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := script("stop"); err != nil {
			t.Errorf("stop: %v\n%s", err, out)
		}
		if out, err := script("status"); err == nil {
			t.Errorf("still running after stop: %s", out)
		}
	})
	if out, err := script("start"); err != nil {
		t.Fatalf("a second start must be a no-op: %v\n%s", err, out)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = apiextensionsv1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	var crds apiextensionsv1.CustomResourceDefinitionList
	if err := c.List(context.Background(), &crds); err != nil {
		t.Fatalf("listing CRDs through the written kubeconfig: %v", err)
	}
	want, _ := filepath.Glob(filepath.Join(env.Root, "config", "crd", "bases", "*.yaml"))
	if len(crds.Items) != len(want) || len(want) == 0 {
		t.Errorf("the local API server serves %d CRDs, want the %d of config/crd/bases", len(crds.Items), len(want))
	}
}
