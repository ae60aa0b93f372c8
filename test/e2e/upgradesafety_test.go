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
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/api/conditions"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
)

// refusesAnInvalidatingUpgrade: the catalog E2E_TIGHTENED_CATALOG_IMAGE, which ns's Subscription (Manual) installed
// this tree's version from, has after it one whose MyWeb CRD allows nodePortNumber up to 30199 only. With a MyWeb
// stored above it, OLM's CRD check refuses that upgrade: its InstallPlan fails saying so, the CRD keeps its
// schema, the refused version's CSV never succeeds, and this version's operator keeps running and reconciling the
// MyWeb.
func refusesAnInvalidatingUpgrade(t *testing.T, tightNS string) {
	t.Helper()
	myweb := sampleMyWeb(t)
	myweb.Namespace, myweb.Name, myweb.Spec.NodePortNumber = tightNS, "above-the-new-maximum", freeNodePortFrom(t, 30250)
	create(t, myweb)
	// Deleted while the operator runs, before the uninstall (cleanups run last-registered first).
	t.Cleanup(func() {
		kubectl(t, "delete", "-n", tightNS, "--wait=true", "--timeout=120s", "myweb/"+myweb.Name, "--ignore-not-found")
	})
	waitCondition(t, &operatorv1.MyWeb{}, tightNS, myweb.Name, conditions.Available)

	plan := approveNext(t, tightNS, newCSV)
	eventually(t, 3*time.Minute, "the upgrade's InstallPlan "+plan+" Failed as too restrictive", func() (bool, string) {
		var ip operatorsv1alpha1.InstallPlan
		if err := get(&ip, tightNS, plan); err != nil {
			return false, err.Error()
		}
		var msgs []string
		for _, c := range ip.Status.Conditions {
			msgs = append(msgs, c.Message)
		}
		msg := strings.Join(msgs, "; ")
		return ip.Status.Phase == operatorsv1alpha1.InstallPlanPhaseFailed &&
				strings.Contains(msg, "updated validation is too restrictive") &&
				strings.Contains(msg, "mywebs.operator.k8s-summit.org"),
			fmt.Sprintf("phase %s: %s", ip.Status.Phase, msg)
	})

	// The CRD keeps its schema.
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(context.Background(), client.ObjectKey{Name: "mywebs.operator.k8s-summit.org"}, &crd); err != nil {
		t.Fatal(err)
	}
	if max := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["nodePortNumber"].Maximum; max == nil || *max != 65535 {
		t.Errorf("the MyWeb CRD's nodePortNumber maximum is %v after the refused upgrade, want 65535", max)
	}
	// What OLM v0 leaves (seen with v0.41.0): the refused version's CSV never Succeeded (Pending,
	// RequirementsNotMet), this version's CSV Replacing with its operator still running, serving and reconciling.
	var ip operatorsv1alpha1.InstallPlan
	if err := get(&ip, tightNS, plan); err != nil {
		t.Fatal(err)
	}
	refused := ip.Spec.ClusterServiceVersionNames[0]
	var next, current operatorsv1alpha1.ClusterServiceVersion
	if err := get(&next, tightNS, refused); err == nil && next.Status.Phase == operatorsv1alpha1.CSVPhaseSucceeded {
		t.Errorf("the refused version's CSV %s Succeeded", refused)
	}
	if err := get(&current, tightNS, newCSV); err != nil {
		t.Fatalf("%s is gone after the refused upgrade: %v", newCSV, err)
	}
	t.Logf("after the refused upgrade: %s %s (%s), %s %s (%s)", newCSV, current.Status.Phase, current.Status.Reason,
		refused, next.Status.Phase, next.Status.Reason)
	eventually(t, time.Minute, "the operator Deployment available", func() (bool, string) {
		var dep appsv1.Deployment
		if err := get(&dep, tightNS, deployment); err != nil {
			return false, err.Error()
		}
		return dep.Status.AvailableReplicas == 1, fmt.Sprintf("available %d", dep.Status.AvailableReplicas)
	})
	kubectl(t, "patch", "-n", tightNS, "myweb/"+myweb.Name, "--type", "merge", "-p",
		`{"spec":{"pageContentHtml":"<h1>still reconciled</h1>\n"}}`)
	waitHTTP(t, fmt.Sprintf("http://%s:%d/", f.nodeIP, myweb.Spec.NodePortNumber), "still reconciled")
}

// freeNodePortFrom is the first node port from from on that no Service holds now (other Services' ports are
// the cluster's choice).
func freeNodePortFrom(t *testing.T, from int32) int32 {
	t.Helper()
	var svcs corev1.ServiceList
	if err := c.List(context.Background(), &svcs); err != nil {
		t.Fatal(err)
	}
	taken := map[int32]bool{}
	for _, s := range svcs.Items {
		for _, p := range s.Spec.Ports {
			taken[p.NodePort] = true
		}
	}
	for p := from; p <= 32767; p++ {
		if !taken[p] {
			return p
		}
	}
	t.Fatal("no free node port")
	return 0
}

// approveNext approves the InstallPlan in ns for a CSV other than current (the upgrade OLM offers next) and
// returns its name.
func approveNext(t *testing.T, ns, current string) string {
	t.Helper()
	return approvePlan(t, ns, "the version after "+current, func(csvs []string) bool {
		return len(csvs) > 0 && csvs[0] != current
	})
}
