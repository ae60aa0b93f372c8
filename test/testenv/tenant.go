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

package testenv

// What a cluster admin gives a tenant, for the tests of what a tenant can do with it: one of the bundle's
// editor ClusterRoles bound alone, and a ResourceQuota on node ports (docs/admin/security.md).

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// EditorOnly creates the ClusterRole of config/rbac/<file> (an editor role the bundle ships), renamed for ns,
// binds it in ns, with a RoleBinding, to a new user who is granted nothing else, and returns that user's
// config. The ClusterRole goes when the test ends.
func (e *Env) EditorOnly(t testing.TB, ns, file string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join(e.Root, "config", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, role); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	role.Name += "-" + ns
	if err := e.Client.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Client.Delete(ctx, role) })
	user := "editor-" + ns
	if err := e.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}); err != nil {
		t.Fatal(err)
	}
	cfg, err := e.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// ExpectForbidden fails the test unless c (a tenant's client) is refused, 403, creating a pod in ns and
// reading the Secret of that name there (unless secret is empty): what the tenant could do only through the
// operator.
func ExpectForbidden(t testing.TB, c client.Client, ns, secret string) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "any"}}}}
	if err := c.Create(ctx, pod); !apierrors.IsForbidden(err) {
		t.Errorf("the editor creating a pod: %v, want 403 Forbidden", err)
	}
	if secret == "" {
		return
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: secret}, &corev1.Secret{}); !apierrors.IsForbidden(err) {
		t.Errorf("the editor reading Secret %s: %v, want 403 Forbidden", secret, err)
	}
}

// NodePortQuotaName is the name of the ResourceQuota NodePortQuota creates.
const NodePortQuotaName = "nodeports"

// NodePortQuota creates in ns a ResourceQuota that allows n node ports (services.nodeports) and writes its
// status as the ResourceQuota controller, which envtest does not run, would: the API server's quota admission
// enforces a quota only once its status has hard and used.
func NodePortQuota(t testing.TB, c client.Client, ns string, n int64) {
	t.Helper()
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: NodePortQuotaName},
		Spec:       corev1.ResourceQuotaSpec{Hard: nodePorts(n)},
	}
	if err := c.Create(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	q.Status = corev1.ResourceQuotaStatus{Hard: nodePorts(n), Used: nodePorts(0)}
	if err := c.Status().Update(context.Background(), q); err != nil {
		t.Fatal(err)
	}
}

// SetNodePortQuota raises (or lowers) the quota NodePortQuota created in ns to n node ports, in its spec and,
// as the ResourceQuota controller would, its status.
func SetNodePortQuota(t testing.TB, c client.Client, ns string, n int64) {
	t.Helper()
	ctx := context.Background()
	q := &corev1.ResourceQuota{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: NodePortQuotaName}, q); err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard = nodePorts(n)
	if err := c.Update(ctx, q); err != nil {
		t.Fatal(err)
	}
	q.Status.Hard = nodePorts(n)
	if err := c.Status().Update(ctx, q); err != nil {
		t.Fatal(err)
	}
}

func nodePorts(n int64) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceServicesNodePorts: *resource.NewQuantity(n, resource.DecimalSI)}
}

// ExpectBackoffWhileServiceRefused measures, over 3 seconds, what the owner key costs while the API server
// refuses its Service (a quota, say): a handful of reconciles and attempts to apply the Service (backoff; 7 to
// 11 seen, a loop on the status's own events or a fixed requeue would make hundreds), and one Warning Event of
// reason for the whole refusal (Events on transitions only).
func ExpectBackoffWhileServiceRefused(t testing.TB, c client.Client, rec *Reconciles, counter *Counter,
	key types.NamespacedName, reason string) {
	t.Helper()
	counter.Reset()
	before := rec.Get(key)
	time.Sleep(3 * time.Second) // measuring a rate over a fixed window
	reconciles, applies := rec.Get(key)-before, counter.Writes(false)["PATCH services"]
	t.Logf("while the Service is refused, over 3s: %d reconciles, %d attempts to apply it", reconciles, applies)
	if reconciles > 20 || applies > 20 {
		t.Errorf("%d reconciles, %d attempts to apply the Service in 3s: a hot loop (%s)", reconciles, applies, counter)
	}
	evs := EventsOfReason(t, c, key.Namespace, key.Name, reason)
	if len(evs) != 1 || evs[0].Type != corev1.EventTypeWarning || evs[0].Series != nil {
		t.Errorf("%s Events %+v, want one Warning (Events on transitions only)", reason, evs)
	}
}
