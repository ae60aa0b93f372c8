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

package rbac

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/test/olmrbac"
)

// TestLeaderElectionLeaseOnly: leader election needs one Lease, the one the manager's LeaderElectionID names
// (client-go's Lease lock gets, creates and updates it; giving it up on shutdown is an update). The CSV grants
// get and update on that Lease alone, and create, which Kubernetes cannot restrict by name, on Leases. In each
// install mode, as the ServiceAccount, the manager's Lease can be created, read and updated in every namespace
// the mode grants, while another Lease there (another operator's leader election) can be neither read,
// updated, patched nor deleted, and Leases can be neither listed nor watched.
func TestLeaderElectionLeaseOnly(t *testing.T) {
	ctx := context.Background()
	s := strategy(t)
	for _, p := range s.Permissions {
		for _, r := range p.Rules {
			if !slices.Contains(r.APIGroups, "coordination.k8s.io") {
				continue
			}
			if len(r.ResourceNames) == 0 && !slices.Equal(r.Verbs, []string{"create"}) {
				t.Errorf("the CSV grants %v on every Lease; only create, which cannot be restricted by name, may name none", r.Verbs)
			}
			if len(r.ResourceNames) > 0 && !slices.Equal(r.ResourceNames, []string{controller.LeaderElectionID}) {
				t.Errorf("the CSV's Lease rule names %v; the manager's Lease is %q (cmd/main.go's LeaderElectionID)",
					r.ResourceNames, controller.LeaderElectionID)
			}
		}
	}

	admin := kubernetes.NewForConfigOrDie(env.Config)
	for _, m := range modes() {
		t.Run(m.Name, func(t *testing.T) {
			grant(ctx, t, admin, m, s)
			user, groups := olmrbac.User(m.OperatorNS, olmrbac.ServiceAccount(s))
			cfg := rest.CopyConfig(env.Config)
			cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
			as := kubernetes.NewForConfigOrDie(cfg)
			forbidden := func(what string, err error) {
				t.Helper()
				if !apierrors.IsForbidden(err) {
					t.Errorf("%s: %s: want 403 Forbidden, got %v", m.Name, what, err)
				}
			}
			for _, ns := range append([]string{m.OperatorNS}, m.Targets...) {
				leases := as.CoordinationV1().Leases(ns)

				// Another operator's Lease in the same namespace.
				other := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "another-operator.example.com", Namespace: ns},
					Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("another-operator-0")}}
				other, err := admin.CoordinationV1().Leases(ns).Create(ctx, other, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				_, err = leases.Get(ctx, other.Name, metav1.GetOptions{})
				forbidden("get another Lease in "+ns, err)
				_, err = leases.Update(ctx, other, metav1.UpdateOptions{})
				forbidden("update another Lease in "+ns, err)
				_, err = leases.Patch(ctx, other.Name, types.MergePatchType,
					[]byte(`{"spec":{"holderIdentity":"operator101"}}`), metav1.PatchOptions{})
				forbidden("patch another Lease in "+ns, err)
				forbidden("delete another Lease in "+ns, leases.Delete(ctx, other.Name, metav1.DeleteOptions{}))
				_, err = leases.List(ctx, metav1.ListOptions{})
				forbidden("list Leases in "+ns, err)
				w, err := leases.Watch(ctx, metav1.ListOptions{})
				if err == nil {
					w.Stop()
				}
				forbidden("watch Leases in "+ns, err)

				// The manager's own Lease: what the Lease lock does with it.
				own, err := leases.Create(ctx, &coordinationv1.Lease{
					ObjectMeta: metav1.ObjectMeta{Name: controller.LeaderElectionID, Namespace: ns},
					Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("operator101-0")}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatalf("%s: create its Lease in %s: %v", m.Name, ns, err)
				}
				if own, err = leases.Get(ctx, own.Name, metav1.GetOptions{}); err != nil {
					t.Errorf("%s: get its Lease in %s: %v", m.Name, ns, err)
				}
				own.Spec.HolderIdentity = ptr.To("")
				if _, err := leases.Update(ctx, own, metav1.UpdateOptions{}); err != nil {
					t.Errorf("%s: update (release) its Lease in %s: %v", m.Name, ns, err)
				}
			}
			// Create names no object, so the authorizer cannot tell one Lease from another: any name may be
			// created, and only read or changed afterwards if it is the manager's.
			if !can(ctx, t, admin, user, groups, "create", "coordination.k8s.io", "leases", m.OperatorNS) {
				t.Errorf("%s: create Leases denied", m.Name)
			}
		})
	}
}

// TestPermissionTablesInDocs computes, for each install mode, the table docs/admin/security.md shows under "Per
// install mode" (olmrbac.PermissionTable, which the OLM e2e computes on a real cluster) from the authorizer's
// answers for RBAC created from the CSV as OLM creates it, and fails unless docs/admin/security.md shows that table.
func TestPermissionTablesInDocs(t *testing.T) {
	ctx := context.Background()
	s := strategy(t)
	csv, err := olmrbac.CSV(env.Root)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(env.Root, "docs", "admin", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(env.Config)
	for _, m := range []struct {
		mode, target string
		olmrbac.Mode
	}{
		{"OwnNamespace", "table-own-op", olmrbac.Mode{Name: "table-own", OperatorNS: "table-own-op", Targets: []string{}}},
		{"SingleNamespace", "table-single-a", olmrbac.Mode{Name: "table-single", OperatorNS: "table-single-op", Targets: []string{"table-single-a"}}},
		{"AllNamespaces", "table-tenant", olmrbac.Mode{Name: "table-all", OperatorNS: "table-all-op", Targets: nil}},
	} {
		t.Run(m.mode, func(t *testing.T) {
			grant(ctx, t, admin, m.Mode, s)
			user, groups := olmrbac.User(m.OperatorNS, olmrbac.ServiceAccount(s))
			got, err := olmrbac.PermissionTable(csv, m.OperatorNS, m.target, func(ra authorizationv1.ResourceAttributes) (bool, error) {
				return review(ctx, admin, user, groups, ra)
			})
			if err != nil {
				t.Fatal(err)
			}
			if want, ok := olmrbac.DocTable(string(raw), m.mode); !ok || want != got {
				t.Errorf("docs/admin/security.md does not show what the authorizer answers for %s; between \"<!-- e2e:rbac %s -->\" and \"<!-- /e2e:rbac -->\" it should read:\n%s",
					m.mode, m.mode, got)
			}
		})
	}
}
