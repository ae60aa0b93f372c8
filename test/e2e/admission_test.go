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
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The annotation OpenShift gives every namespace, and the local cluster's admission policies too
// (hack/cluster/admission/scc.yaml).
const uidRangeAnnotation = "openshift.io/sa.scc.uid-range"

// sccMessage starts what OpenShift's SCC admission answers when no SCC admits a pod.
const sccMessage = "unable to validate against any security context constraint: [provider restricted-v2: "

// TestAdmissionLikeOpenShift proves that the cluster the e2e runs on admits as OpenShift does (its file sorts
// first, so it runs first): a namespace gets a UID range; a pod created by a user who has only the
// restricted-v2 SCC runs as the range's first UID when it names none, and is refused with the SCC admission's
// message when it names one outside the range or asks for what restricted-v2 forbids; nonroot-v2, granted the
// way OpenShift grants it, admits any UID but root; and OwnerReferencesPermissionEnforcement refuses an owner
// reference with blockOwnerDeletion from a user who may not update the owner's finalizers.
func TestAdmissionLikeOpenShift(t *testing.T) {
	const ns = "operator101-e2e-admission"
	ctx := context.Background()
	freshNamespace(t, ns)
	first, last := uidRange(t, ns)
	t.Logf("namespace %s: UIDs %d-%d", ns, first, last)

	// A tenant: a ServiceAccount with the namespace's edit role, and nothing on SCCs (restricted-v2 only).
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: ns}})
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant-edit", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "tenant", Namespace: ns}}})
	tenant := impersonate(t, "system:serviceaccount:"+ns+":tenant", "system:serviceaccounts", "system:serviceaccounts:"+ns)
	eventually(t, time.Minute, "the tenant may create pods (RBAC loaded)", func() (bool, string) {
		err := tenant.Create(ctx, testPod(ns, "probe", nil), client.DryRunAll)
		return err == nil, fmt.Sprint(err)
	})

	// No runAsUser: the range's first UID, which the container really runs as.
	p := testPod(ns, "assigned", nil)
	if err := tenant.Create(ctx, p); err != nil {
		t.Fatalf("a pod without runAsUser: %v", err)
	}
	if sc := p.Spec.Containers[0].SecurityContext; sc == nil || ptr.Deref(sc.RunAsUser, -1) != first {
		t.Errorf("a pod without runAsUser got container securityContext %+v, want runAsUser %d", sc, first)
	}
	eventually(t, 2*time.Minute, "the pod without runAsUser ran", func() (bool, string) {
		var got corev1.Pod
		if err := get(&got, ns, p.Name); err != nil {
			return false, err.Error()
		}
		return got.Status.Phase == corev1.PodSucceeded, string(got.Status.Phase)
	})
	if out := strings.TrimSpace(kubectl(t, "logs", "-n", ns, p.Name)); out != strconv.FormatInt(first, 10) {
		t.Errorf("the pod ran as UID %q, want %d", out, first)
	}

	// A UID inside the range is admitted as it is; one outside is refused, with the SCC admission's words.
	inside := testPod(ns, "inside", func(p *corev1.Pod) {
		p.Spec.Containers[0].SecurityContext.RunAsUser = ptr.To(last)
	})
	if err := tenant.Create(ctx, inside, client.DryRunAll); err != nil {
		t.Errorf("a pod with UID %d (in the range): %v", last, err)
	}
	for _, c := range []struct {
		what   string
		mutate func(*corev1.Pod)
		want   string
	}{
		{"a fixed UID outside the range", func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.RunAsUser = ptr.To[int64](65532) },
			fmt.Sprintf("spec.containers[0].securityContext.runAsUser: Invalid value: 65532: must be in the ranges: [%d, %d]", first, last)},
		{"a pod-level UID outside the range", func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsUser = ptr.To[int64](0) },
			fmt.Sprintf("spec.securityContext.runAsUser: Invalid value: 0: must be in the ranges: [%d, %d]", first, last)},
		{"privileged", func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.Privileged = ptr.To(true) },
			"spec.containers[0].securityContext.privileged: Invalid value: true: Privileged containers are not allowed"},
		{"allowPrivilegeEscalation", func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true) },
			"spec.containers[0].securityContext.allowPrivilegeEscalation: Invalid value: true: Allowing privilege escalation for containers is not allowed"},
		{"an added capability", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "SYS_ADMIN"}}
		}, `spec.containers[0].securityContext.capabilities.add: Invalid value: "SYS_ADMIN": capability may not be added`},
		{"hostNetwork", func(p *corev1.Pod) { p.Spec.HostNetwork = true },
			"spec.securityContext.hostNetwork: Invalid value: true: Host network is not allowed to be used"},
		{"a hostPath volume", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}, `spec.volumes[0]: Invalid value: "hostPath": hostPath volumes are not allowed to be used`},
	} {
		err := tenant.Create(ctx, testPod(ns, "refused", c.mutate), client.DryRunAll)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), sccMessage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want Forbidden: %s...%s", c.what, err, sccMessage, c.want)
		}
	}
	withNetBind := testPod(ns, "net-bind", func(p *corev1.Pod) {
		p.Spec.Containers[0].SecurityContext.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}}
	})
	if err := tenant.Create(ctx, withNetBind, client.DryRunAll); err != nil {
		t.Errorf("a pod adding NET_BIND_SERVICE (restricted-v2 allows it): %v", err)
	}

	// nonroot-v2, granted as `oc adm policy add-scc-to-user nonroot-v2 -z tenant` does: any UID but root.
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant-nonroot-v2", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:openshift:scc:nonroot-v2"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "tenant", Namespace: ns}}})
	fixed := func(uid int64) *corev1.Pod {
		return testPod(ns, "fixed", func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.RunAsUser = ptr.To(uid) })
	}
	eventually(t, time.Minute, "nonroot-v2 admits a fixed UID outside the range", func() (bool, string) {
		err := tenant.Create(ctx, fixed(65532), client.DryRunAll)
		return err == nil, fmt.Sprint(err)
	})
	if err := tenant.Create(ctx, fixed(0), client.DryRunAll); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), "provider nonroot-v2: spec.containers[0].securityContext.runAsUser: Invalid value: 0: running with the root UID is forbidden") {
		t.Errorf("UID 0 with nonroot-v2: %v; want refused by nonroot-v2 too", err)
	}

	// The cluster's admin may use every SCC (cluster-admin's `*`), as on OpenShift: root is admitted, no UID assigned.
	root := fixed(0)
	if err := c.Create(ctx, root, client.DryRunAll); err != nil {
		t.Errorf("the admin's pod running as root: %v", err)
	}
	admins := testPod(ns, "admins", nil)
	if err := c.Create(ctx, admins, client.DryRunAll); err != nil || admins.Spec.Containers[0].SecurityContext.RunAsUser != nil {
		t.Errorf("the admin's pod without runAsUser: %v, runAsUser %v; want admitted as it is", err, admins.Spec.Containers[0].SecurityContext.RunAsUser)
	}

	// OwnerReferencesPermissionEnforcement: an owner reference with blockOwnerDeletion needs update on the
	// owner's finalizers, which the edit role does not grant.
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := tenant.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	child := func(block bool) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(block)}}}}
	}
	if err := tenant.Create(ctx, child(false), client.DryRunAll); err != nil {
		t.Errorf("a child without blockOwnerDeletion: %v", err)
	}
	const ownerRefsMessage = "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on"
	if err := tenant.Create(ctx, child(true), client.DryRunAll); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), ownerRefsMessage) {
		t.Errorf("a child with blockOwnerDeletion, by a user who may not update configmaps/finalizers: %v; want Forbidden: %s", err, ownerRefsMessage)
	}
	create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "configmap-finalizers", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps/finalizers"}, Verbs: []string{"update"}}}})
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant-configmap-finalizers", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "configmap-finalizers"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "tenant", Namespace: ns}}})
	eventually(t, time.Minute, "with update on configmaps/finalizers, the child with blockOwnerDeletion is admitted", func() (bool, string) {
		err := tenant.Create(ctx, child(true), client.DryRunAll)
		return err == nil, fmt.Sprint(err)
	})
}

// uidRange is the first and last UID of ns's openshift.io/sa.scc.uid-range ("START/SIZE").
func uidRange(t *testing.T, ns string) (first, last int64) {
	t.Helper()
	var n corev1.Namespace
	if err := get(&n, "", ns); err != nil {
		t.Fatal(err)
	}
	start, size, ok := strings.Cut(n.Annotations[uidRangeAnnotation], "/")
	first, err1 := strconv.ParseInt(start, 10, 64)
	count, err2 := strconv.ParseInt(size, 10, 64)
	if !ok || err1 != nil || err2 != nil || count < 1 {
		t.Fatalf("namespace %s has no UID range (annotation %s: %q): the cluster does not admit as OpenShift does",
			ns, uidRangeAnnotation, n.Annotations[uidRangeAnnotation])
	}
	return first, first + count - 1
}

// testPod is a busybox pod that prints its UID, with an empty container securityContext for mutate to fill.
func testPod(ns, name string, mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{
		ServiceAccountName: "tenant",
		RestartPolicy:      corev1.RestartPolicyNever,
		SecurityContext:    &corev1.PodSecurityContext{},
		Containers: []corev1.Container{{Name: "id", Image: f.helperImg, Command: []string{"id", "-u"},
			SecurityContext: &corev1.SecurityContext{}}},
	}}
	if mutate != nil {
		mutate(p)
	}
	return p
}

// impersonate is a client acting as user in groups (and system:authenticated).
func impersonate(t *testing.T, user string, groups ...string) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	cl, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// grantReleaseNeeds gives the operator installed in ns what the releases up to 0.2.0 need on OpenShift and its
// CSVs do not ask for, as a cluster admin grants it there: the nonroot-v2 SCC (their manager runs as UID 65532
// and their At pods as 65534, outside any namespace's range) and update on the finalizers of the kinds whose
// children carry blockOwnerDeletion. It returns the revoke, which the test's cleanup also runs; this tree's
// version needs neither (its CSV asks for the finalizers, and nothing of it names a UID).
func grantReleaseNeeds(t *testing.T, ns string) (revoke func()) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{e2eLabel: "true"}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "operator101-e2e:release-finalizers", Labels: labels},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"operator.k8s-summit.org"}, Resources: []string{"mywebs/finalizers"}, Verbs: []string{"update"}},
			{APIGroups: []string{"app.example.com"}, Resources: []string{"appservices/finalizers"}, Verbs: []string{"update"}},
			{APIGroups: []string{"batch.schwarzeni.github.com"}, Resources: []string{"appservices/finalizers"}, Verbs: []string{"update"}},
			{APIGroups: []string{"cnat.programming-kubernetes.info"}, Resources: []string{"ats/finalizers"}, Verbs: []string{"update"}},
		}}
	if err := c.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	var bindings []*rbacv1.ClusterRoleBinding
	for _, r := range []string{"system:openshift:scc:nonroot-v2", role.Name} {
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "operator101-e2e:" + ns + ":" + strings.TrimPrefix(r, "operator101-e2e:"), Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: identity, Namespace: ns}}}
		_ = c.Delete(ctx, b)
		create(t, b)
		bindings = append(bindings, b)
	}
	revoke = func() {
		for _, b := range bindings {
			if err := c.Delete(ctx, b); client.IgnoreNotFound(err) != nil {
				t.Errorf("revoking %s: %v", b.Name, err)
			}
		}
	}
	t.Cleanup(revoke)
	return revoke
}
