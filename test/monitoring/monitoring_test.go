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

// Package monitoring proves that config/prometheus applies to an API server that serves the Prometheus
// Operator's CRDs, as they are generated from its pinned API types (make prometheus-crds), with strict field
// validation: a misspelt or misplaced field of the ServiceMonitor or the PrometheusRule fails here.
package monitoring

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

// namespace is the one config/prometheus's overlays apply to.
const namespace = "operator101-system"

// TestMonitorAndRulesApply: each overlay of config/prometheus, built with kustomize, is accepted object by object
// by an API server that has the Prometheus Operator's CRDs, with strict field validation; the monitor names the
// metrics Service's DNS name in the namespace and the CA the overlay says. cert-manager's own kinds (the
// Issuers and Certificates of the cert-manager overlay) are the only ones not applied: no cert-manager API
// module is served here, so only their names are checked.
func TestMonitorAndRulesApply(t *testing.T) {
	ctx := context.Background()
	crds := filepath.Join(env.Root, "bin", "prometheus-crds")
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing the Prometheus Operator's CRDs from %s (make prometheus-crds): %v", crds, err)
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		overlay string
		// ca is the monitor's spec.endpoints[0].tlsConfig.ca.
		ca map[string]any
		// unserved are the kinds of the overlay that are not applied (group/kind, sorted).
		unserved []string
	}{
		{overlay: "openshift", ca: map[string]any{"configMap": map[string]any{"name": "openshift-service-ca.crt", "key": "service-ca.crt"}}},
		{overlay: "cert-manager", ca: map[string]any{"secret": map[string]any{"name": "operator101-metrics-cert", "key": "ca.crt"}},
			unserved: []string{"cert-manager.io/Certificate", "cert-manager.io/Certificate", "cert-manager.io/Issuer", "cert-manager.io/Issuer"}},
	} {
		t.Run(tc.overlay, func(t *testing.T) {
			objs := env.KustomizeObjects(t, filepath.Join("config", "prometheus", tc.overlay))
			var unserved []string
			kinds := map[string]*unstructured.Unstructured{}
			for _, o := range objs {
				gk := o.GroupVersionKind().GroupKind()
				if gk.Group == "cert-manager.io" {
					unserved = append(unserved, gk.Group+"/"+gk.Kind)
					continue
				}
				// Server-side apply validates fields strictly: an unknown field is an error, not a warning.
				if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("test"),
					client.ForceOwnership); err != nil {
					t.Errorf("applying %s %s/%s: %v", gk, o.GetNamespace(), o.GetName(), err)
				}
				kinds[gk.Kind] = o
			}
			sort.Strings(unserved)
			if !slices.Equal(unserved, tc.unserved) {
				t.Errorf("kinds not applied: %v; want %v", unserved, tc.unserved)
			}
			for _, k := range []string{"ServiceMonitor", "PrometheusRule", "ServiceAccount", "Secret", "ClusterRoleBinding"} {
				if kinds[k] == nil {
					t.Errorf("the overlay has no %s", k)
				}
			}
			sm := &unstructured.Unstructured{}
			sm.SetGroupVersionKind(kinds["ServiceMonitor"].GroupVersionKind())
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(kinds["ServiceMonitor"]), sm); err != nil {
				t.Fatal(err)
			}
			eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			if len(eps) != 1 {
				t.Fatalf("the monitor has %d endpoints; want 1", len(eps))
			}
			ep := eps[0].(map[string]any)
			server, _, _ := unstructured.NestedString(ep, "tlsConfig", "serverName")
			if want := "operator101-controller-manager-metrics-service." + namespace + ".svc"; server != want {
				t.Errorf("the monitor verifies the name %q; want %q", server, want)
			}
			ca, _, _ := unstructured.NestedMap(ep, "tlsConfig", "ca")
			if !reflect.DeepEqual(ca, tc.ca) {
				t.Errorf("the monitor's CA is %v; want %v", ca, tc.ca)
			}
			if skip, found, _ := unstructured.NestedBool(ep, "tlsConfig", "insecureSkipVerify"); found && skip {
				t.Error("the monitor skips verifying the endpoint's certificate")
			}
			groups, _, _ := unstructured.NestedSlice(kinds["PrometheusRule"].Object, "spec", "groups")
			if len(groups) == 0 {
				t.Error("the PrometheusRule has no rule groups")
			}
		})
	}
}
