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
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/internal/controller"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/olmrbac"
	"github.com/operator101/operator101/test/scorecard/almready"
)

// denials records every request the API server refused with 403.
type denials struct {
	mu   sync.Mutex
	seen map[string]int
}

func (d *denials) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			d.mu.Lock()
			d.seen[r.Method+" "+r.URL.Path]++
			d.mu.Unlock()
		}
		return resp, err
	})
}

func (d *denials) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for k, n := range d.seen {
		out = append(out, fmt.Sprintf("%s (%d)", k, n))
	}
	sort.Strings(out)
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestManagerRunsWithCSVIdentity runs every controller of the manager as the CSV's ServiceAccount (RBAC as
// OLM creates it for an AllNamespaces install, requests impersonated), creates every alm-examples object,
// and checks that each is reconciled (its status written for its generation) while the API server refuses
// the manager nothing: not a single 403. The manager elects itself leader through its Lease, as cmd/main.go
// has it do, and gives the Lease up when it stops. With no database target configured, a DatabaseUser is
// reconciled to Ready=False (UnknownTarget); `make scorecard` adds a MariaDB and checks Ready.
func TestManagerRunsWithCSVIdentity(t *testing.T) {
	ctx := context.Background()
	s := strategy(t)
	admin := kubernetes.NewForConfigOrDie(env.Config)
	m := olmrbac.Mode{Name: "identity", OperatorNS: "identity-op"}
	grant(ctx, t, admin, m, s)
	const ns = "identity-examples"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	user, groups := olmrbac.User(m.OperatorNS, olmrbac.ServiceAccount(s))
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	d := &denials{seen: map[string]int{}}
	cfg.Wrap(d.wrap)

	opts := controller.Options{Workers: 2, AtWorkers: 2, OperatorNamespace: m.OperatorNS}
	// Leader election as cmd/main.go runs it: the controllers start only once the manager holds its Lease, and
	// it gives the Lease up when it stops.
	memory := reconciler.NewMemory()
	mgr := env.StartManager(t, cfg, func(mgr ctrl.Manager) error { return controller.SetupWithManager(mgr, opts, memory) },
		func(o *ctrl.Options) {
			o.Cache = controller.CacheOptions(opts, memory)
			o.LeaderElection = true
			o.LeaderElectionID = controller.LeaderElectionID
			o.LeaderElectionNamespace = m.OperatorNS
			o.LeaderElectionReleaseOnCancel = true
		})

	examples, err := almready.Examples(env.Root + "/bundle")
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	standIn, stop := context.WithCancel(ctx)
	defer stop()
	go almready.KubeletStandIn(standIn, admin, ns)

	created, outcomes := almready.CreateAll(ctx, c, ns, examples)
	t.Cleanup(func() {
		for _, o := range created {
			_ = c.Delete(context.Background(), o)
		}
	})
	for _, o := range outcomes {
		if o.Detail != "" && !o.Ready { // Ready already: a cluster-scoped example, the cluster admin's
			t.Fatalf("%s %s: %s", o.Kind, o.Name, o.Detail)
		}
	}
	for i, ex := range examples {
		if outcomes[i].Ready {
			continue
		}
		key := client.ObjectKey{Namespace: ns, Name: ex.GetName()}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(ex.GroupVersionKind())
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, key, obj); err != nil {
				return false, nil
			}
			og, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
			conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
			phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
			return og == obj.GetGeneration() && len(conds) > 0 || phase != "", nil
		})
		if err != nil {
			t.Errorf("%s %s was not reconciled as the CSV's identity within 30s (status %v)",
				ex.GetKind(), ex.GetName(), obj.Object["status"])
		} else {
			t.Logf("%s %s reconciled: status %v", ex.GetKind(), ex.GetName(), obj.Object["status"])
		}
	}
	mgr.Stop(t)
	lease, err := admin.CoordinationV1().Leases(m.OperatorNS).Get(ctx, controller.LeaderElectionID, metav1.GetOptions{})
	if err != nil {
		t.Errorf("the manager's Lease: %v", err)
	} else if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h != "" {
		t.Errorf("the manager stopped and its Lease is still held by %q", h)
	}
	if den := d.list(); len(den) > 0 {
		t.Errorf("the API server refused the manager %d kinds of request:\n%s", len(den), strings.Join(den, "\n"))
	}
}
