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

// Package security tests properties of what operator101 ships, against a real API server.
package security

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"k8s.io/utils/ptr"

	appv1 "github.com/operator101/operator101/api/app/v1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/appservice"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/myweb"
	"github.com/operator101/operator101/internal/proxyenv"
	"github.com/operator101/operator101/test/olmrbac"
	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

// managerDeployment renders config/default with kustomize, as make deploy does, and returns the manager's
// Deployment.
func managerDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	out := env.Kustomize(t, "config/default")
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var d appsv1.Deployment
		if err := dec.Decode(&d); err != nil {
			break
		}
		if d.Kind == "Deployment" {
			return &d
		}
	}
	t.Fatal("config/default renders no Deployment")
	return nil
}

// TestManagerPodMeetsRestrictedPodSecurity admits the manager's pod, exactly as config/default renders it,
// into a namespace that enforces the restricted Pod Security Standard: the API server's PodSecurity admission
// refuses any pod that runs as root, may escalate privileges, keeps capabilities or lacks a seccomp profile.
func TestManagerPodMeetsRestrictedPodSecurity(t *testing.T) {
	ctx := context.Background()
	d := managerDeployment(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "restricted", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}

	// The control: a pod that breaks the standard is refused here, so the namespace really enforces it.
	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: ns.Name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	if err := env.Client.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
		t.Fatalf("a root pod was not refused by the restricted namespace: %v", err)
	}

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "manager", Namespace: ns.Name}, Spec: d.Spec.Template.Spec}
	pod.Spec.ServiceAccountName = "" // the ServiceAccount does not exist here; it changes nothing PodSecurity checks
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatalf("the manager pod is refused under the restricted Pod Security Standard: %v", err)
	}

	// And the properties themselves, so a regression names what broke.
	c := d.Spec.Template.Spec.Containers[0]
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("the manager container has no securityContext")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("the manager's root filesystem is not read-only")
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Error("the manager may run as root")
	}
}

// TestManagerHasNoFixedUID: neither the manager's pod as config/default renders it nor the CSV's Deployment
// (what OLM installs) sets runAsUser, on the pod or on any container, and both set runAsNonRoot. OpenShift's
// restricted-v2 SCC refuses a UID outside the namespace's range (openshift.io/sa.scc.uid-range), and
// assigns one when none is set; the image's numeric USER (test/images) is what runs elsewhere.
func TestManagerHasNoFixedUID(t *testing.T) {
	s, err := olmrbac.Strategy(env.Root)
	if err != nil {
		t.Fatal(err)
	}
	for what, spec := range map[string]corev1.PodSpec{
		"config/default":   managerDeployment(t).Spec.Template.Spec,
		"the bundle's CSV": s.DeploymentSpecs[0].Spec.Template.Spec,
	} {
		if psc := spec.SecurityContext; psc == nil || psc.RunAsUser != nil {
			t.Errorf("%s: the pod's securityContext %+v: want one without runAsUser", what, psc)
		}
		nonRoot := spec.SecurityContext != nil && ptr.Deref(spec.SecurityContext.RunAsNonRoot, false)
		for _, c := range append(spec.InitContainers, spec.Containers...) {
			if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
				t.Errorf("%s: container %s sets runAsUser %d: a fixed UID is refused by OpenShift's restricted-v2 SCC",
					what, c.Name, *c.SecurityContext.RunAsUser)
			}
			if !nonRoot && (c.SecurityContext == nil || !ptr.Deref(c.SecurityContext.RunAsNonRoot, false)) {
				t.Errorf("%s: container %s may run as root: want runAsNonRoot", what, c.Name)
			}
		}
	}
}

// TestAtPodMeetsRestrictedPodSecurity admits the pod At's controller creates, as its builder renders it, into a
// namespace enforcing the restricted Pod Security Standard, without the user asking for anything.
func TestAtPodMeetsRestrictedPodSecurity(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "restricted-at", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	at := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Name: "example-at", Namespace: ns.Name, UID: "00000000-0000-0000-0000-000000000001"},
		Spec: cnatv1alpha1.AtSpec{Schedule: "2019-04-12T10:12:00Z", Command: "echo YAY"}}
	pod := atctl.Pod(at, atctl.PodDefaults{})
	pod.OwnerReferences = nil // the At is not stored here; ownership changes nothing PodSecurity checks
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatalf("the At's pod is refused under the restricted Pod Security Standard: %v", err)
	}
}

// workloadPod is a pod of the Deployment a MyWeb or an AppService gets, as its builder renders it.
func workloadPod(t *testing.T, name, ns string, d *appsv1ac.DeploymentApplyConfiguration) *corev1.Pod {
	t.Helper()
	raw, err := json.Marshal(d.Spec.Template.Spec)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := json.Unmarshal(raw, &pod.Spec); err != nil {
		t.Fatal(err)
	}
	return pod
}

// TestWorkloadPodsUnderPodSecurity admits the pods of MyWeb's and AppService's Deployments, as their builders
// render them, into namespaces enforcing the restricted and the baseline Pod Security Standards. With
// runAsNonRoot they meet restricted. Without it (an image such as nginx's official one, which runs as root)
// restricted refuses them for running as root and keeping capabilities only, never for the seccomp profile or
// privilege escalation, and baseline admits them.
func TestWorkloadPodsUnderPodSecurity(t *testing.T) {
	ctx := context.Background()
	level := func(name, lvl string) string {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce":         lvl,
			"pod-security.kubernetes.io/enforce-version": "latest",
		}}}
		if err := env.Client.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
		return name
	}
	restricted, baseline := level("restricted-workloads", "restricted"), level("baseline-workloads", "baseline")
	builders := map[string]func(nonRoot bool) *appsv1ac.DeploymentApplyConfiguration{
		"myweb": func(nonRoot bool) *appsv1ac.DeploymentApplyConfiguration {
			return myweb.Deployment(&operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "x"},
				Spec: operatorv1.MyWebSpec{Image: "nginx", NodePortNumber: 30080, RunAsNonRoot: &nonRoot}}, proxyenv.Env{})
		},
		"appservice": func(nonRoot bool) *appsv1ac.DeploymentApplyConfiguration {
			d, err := appservice.Deployment(&appv1.AppService{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "x"},
				Spec: appv1.AppServiceSpec{Application: appv1.Application{Image: "nginx", RunAsNonRoot: &nonRoot,
					Ports: []appv1.ServicePort{{Port: 80}}}}}, proxyenv.Env{})
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
	}
	for kind, build := range builders {
		if err := env.Client.Create(ctx, workloadPod(t, kind+"-nonroot", restricted, build(true))); err != nil {
			t.Errorf("%s with runAsNonRoot: refused under the restricted Pod Security Standard: %v", kind, err)
		}
		err := env.Client.Create(ctx, workloadPod(t, kind+"-root", restricted, build(false)))
		switch {
		case err == nil || !strings.Contains(err.Error(), "violates PodSecurity"):
			t.Errorf("%s without runAsNonRoot: want refused under restricted, got %v", kind, err)
		case strings.Contains(err.Error(), "seccompProfile") || strings.Contains(err.Error(), "allowPrivilegeEscalation"):
			t.Errorf("%s without runAsNonRoot: refused for what the operator sets anyway: %v", kind, err)
		case !strings.Contains(err.Error(), "runAsNonRoot") || !strings.Contains(err.Error(), "capabilities"):
			t.Errorf("%s without runAsNonRoot: refused, but not for running as root with capabilities: %v", kind, err)
		}
		if err := env.Client.Create(ctx, workloadPod(t, kind+"-root", baseline, build(false))); err != nil {
			t.Errorf("%s without runAsNonRoot: refused under the baseline Pod Security Standard: %v", kind, err)
		}
	}
}
