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

package bundle

import (
	"os/exec"
	"strings"
	"testing"
)

// target runs script after sourcing hack/cluster/lib.sh and target.sh with env, as make test-e2e and make demo
// do; it returns the output and whether the shell succeeded.
func target(t *testing.T, env []string, script string) (string, bool) {
	t.Helper()
	cmd := exec.Command("bash", "-c", "set -euo pipefail; source hack/cluster/lib.sh; source hack/cluster/target.sh; "+script)
	cmd.Dir = repoRoot(t)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err == nil
}

// TestTargetCluster: a kubeconfig given (an exported KUBECONFIG too) without IMAGE_TAG_BASE stops before anything
// touches that cluster; with it, that cluster and registry are the target; without either, the local cluster.
func TestTargetCluster(t *testing.T) {
	out, ok := target(t, []string{"EXISTING_KUBECONFIG=/theirs/kubeconfig"}, `echo reached`)
	if ok || strings.Contains(out, "reached") || !strings.Contains(out, "give IMAGE_TAG_BASE too") {
		t.Errorf("a kubeconfig without IMAGE_TAG_BASE: ok=%v, output %q; want a stop that asks for IMAGE_TAG_BASE", ok, out)
	}
	out, ok = target(t, []string{"EXISTING_KUBECONFIG=/theirs/kubeconfig", "IMAGE_TAG_BASE=registry.example.com/me/operator101"},
		`echo "$existing $TARGET_KUBECONFIG $IMAGE_TAG_BASE $POD_IMAGE_TAG_BASE"`)
	if want := "true /theirs/kubeconfig registry.example.com/me/operator101 registry.example.com/me/operator101"; !ok || out != want {
		t.Errorf("a cluster of your own: ok=%v, %q, want %q", ok, out, want)
	}
	out, ok = target(t, nil, `echo "$existing $IMAGE_TAG_BASE $POD_IMAGE_TAG_BASE"`)
	if want := "false localhost:5000/operator101/operator101 198.18.255.254:5000/operator101/operator101"; !ok || out != want {
		t.Errorf("the local cluster: ok=%v, %q, want %q", ok, out, want)
	}
}

// TestTargetNodeAddress: the address comes from the Node objects: a Ready node's ExternalIP, else its
// InternalIP; NODE_ADDRESS overrides it; no Ready node stops the run.
func TestTargetNodeAddress(t *testing.T) {
	const nodes = `{"items":[
	  {"status":{"conditions":[{"type":"Ready","status":"False"}],"addresses":[{"type":"InternalIP","address":"10.0.0.9"}]}},
	  {"status":{"conditions":[{"type":"Ready","status":"True"}],"addresses":[{"type":"Hostname","address":"n2"},{"type":"InternalIP","address":"10.0.0.2"}%s]}}]}`
	env := []string{"EXISTING_KUBECONFIG=/theirs/kubeconfig", "IMAGE_TAG_BASE=registry.example.com/me/operator101"}
	for _, c := range []struct {
		external, override, want string
	}{
		{"", "", "10.0.0.2"},
		{`,{"type":"ExternalIP","address":"203.0.113.7"}`, "", "203.0.113.7"},
		{"", "192.0.2.1", "192.0.2.1"},
	} {
		e := append(env, "NODES="+strings.ReplaceAll(nodes, "%s", c.external), "NODE_ADDRESS="+c.override)
		out, ok := target(t, e, `tk() { echo "$NODES"; }; target_node_address`)
		if !ok || out != c.want {
			t.Errorf("external %q, NODE_ADDRESS %q: ok=%v, %q, want %q", c.external, c.override, ok, out, c.want)
		}
	}
	e := append(env, `NODES={"items":[]}`)
	if out, ok := target(t, e, `tk() { echo "$NODES"; }; target_node_address`); ok || !strings.Contains(out, "give NODE_ADDRESS") {
		t.Errorf("no Ready node: ok=%v, %q, want a stop that asks for NODE_ADDRESS", ok, out)
	}
}
