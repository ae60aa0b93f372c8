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

package myweb_test

import (
	"testing"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/test/webkindtest"
)

// TestMyWebEditorGetsWhatCreatingPodsGives: a user bound to myweb-editor-role alone, who may not create a pod
// in the namespace, makes the operator run pods there of the image they name, with the token of the
// namespace's default ServiceAccount when they ask for it (docs/admin/security.md, editor roles).
func TestMyWebEditorGetsWhatCreatingPodsGives(t *testing.T) {
	w := newWeb(env.NewNamespace(t, "web"), "mine", 30190)
	w.Spec.Image = webkindtest.AnyImage
	w.Spec.AutomountServiceAccountToken = ptr.To(true)
	web().ExpectEditorGetsWhatCreatingPodsGives(t, "myweb_editor_role.yaml", "", w, nil, timeout)
}

// TestMyWebNodePortQuotaRefusal: in a namespace whose ResourceQuota allows no node port (services.nodeports:
// 0), the MyWeb's Service is refused by the API server's quota admission; the MyWeb reports it, Degraded with
// the quota's message and one Warning Event, retries with backoff (no hot loop), and heals once the quota
// allows the port.
func TestMyWebNodePortQuotaRefusal(t *testing.T) {
	web().ExpectNodePortQuotaRefusal(t, "web", func(ns string) *operatorv1.MyWeb { return newWeb(ns, "quota", 30191) }, 1,
		func(g gomega.Gomega, key types.NamespacedName) { expectFollows(g, getWeb(g, key), getChildren(g, key)) }, timeout)
}

// TestMyWebNodePortOfAnotherTenant: node ports are one range for the whole cluster; a node port a Service of
// another namespace holds makes the MyWeb Degraded, NodePortInUse, with the allocator's message.
func TestMyWebNodePortOfAnotherTenant(t *testing.T) {
	web().ExpectNodePortOfAnotherTenant(t, "web", func(ns string) *operatorv1.MyWeb { return newWeb(ns, "second", 30192) }, 30192, timeout)
}
