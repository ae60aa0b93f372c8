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

package kindlimit

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestKindOf(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces/bench/services/web-00001":          "/services",
		"/api/v1/namespaces/bench/pods":                        "/pods",
		"/api/v1/pods":                                         "/pods",
		"/api/v1/namespaces":                                   "/namespaces",
		"/api/v1/namespaces/bench":                             "/namespaces",
		"/api/v1/namespaces/bench/status":                      "/namespaces",
		"/apis/apps/v1/namespaces/bench/deployments/web-00001": "apps/deployments",
		"/apis/operator.k8s-summit.org/v1/namespaces/bench/mywebs/web-00001/status":   "operator.k8s-summit.org/mywebs",
		"/apis/app.example.com/v1/appservices":                                        "app.example.com/appservices",
		"/apis/operators.coreos.com/v2/namespaces/ops/operatorconditions/operator101": "operators.coreos.com/operatorconditions",
		"/apis/events.k8s.io/v1/namespaces/bench/events":                              "events.k8s.io/events",
		"/api":          "",
		"/api/v1":       "",
		"/apis/apps/v1": "",
		"/version":      "",
	} {
		if got := KindOf(path); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// fakeClock is a clock whose sleeps pass at once and are recorded.
type fakeClock struct {
	t      time.Time
	slept  []time.Duration
	cancel bool
}

func (c *fakeClock) limiter(qps float32, burst int) *Limiter {
	l := New(qps, burst)
	l.now = func() time.Time { return c.t }
	l.sleep = func(ctx context.Context, d time.Duration) error {
		if c.cancel {
			return context.Canceled
		}
		c.slept = append(c.slept, d)
		return nil
	}
	return l
}

// TestOneBucketPerKind: a kind past its burst waits 1/qps per request; another kind, and the first once time has
// passed, does not wait for it.
func TestOneBucketPerKind(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	l := c.limiter(10, 2)
	ctx := context.Background()
	for range 4 {
		if err := l.Wait(ctx, "apps/deployments"); err != nil {
			t.Fatal(err)
		}
	}
	if want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}; !equal(c.slept, want) {
		t.Fatalf("4 deployments at 10/s with a burst of 2 slept %v, want %v", c.slept, want)
	}
	c.slept = nil
	for _, kind := range []string{"/services", "/configmaps", "operator.k8s-summit.org/mywebs"} {
		if err := l.Wait(ctx, kind); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.slept) != 0 {
		t.Fatalf("other kinds waited for the deployments' bucket: slept %v", c.slept)
	}
	c.t = c.t.Add(time.Second)
	if err := l.Wait(ctx, "apps/deployments"); err != nil || len(c.slept) != 0 {
		t.Fatalf("a deployment a second later waited (%v, slept %v)", err, c.slept)
	}
}

// TestWaitEndsWithTheContext: a request whose context ends while it waits fails, says for which kind, and gives
// its token back.
func TestWaitEndsWithTheContext(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	l := c.limiter(1, 1)
	ctx := context.Background()
	if err := l.Wait(ctx, "/services"); err != nil {
		t.Fatal(err)
	}
	c.cancel = true
	err := l.Wait(ctx, "/services")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	c.cancel = false
	if err := l.Wait(ctx, "/services"); err != nil {
		t.Fatal(err)
	}
	// The cancelled reservation was given back: the next request waits one interval, not two.
	if want := []time.Duration{time.Second}; !equal(c.slept, want) {
		t.Fatalf("after a cancelled wait slept %v, want %v", c.slept, want)
	}
}

// TestConfigure: a client built from the configured rest.Config sends through the Limiter, and client-go's own
// limiter is off.
func TestConfigure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	defer srv.Close()
	c := &fakeClock{t: time.Unix(0, 0)}
	l := c.limiter(1, 1)
	cfg := &rest.Config{Host: srv.URL, QPS: 5, Burst: 10}
	l.Configure(cfg)
	if cfg.QPS >= 0 {
		t.Fatalf("client-go's limiter is still on: QPS %v", cfg.QPS)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		resp, err := hc.Get(srv.URL + "/api/v1/namespaces/bench/services")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if want := []time.Duration{time.Second}; !equal(c.slept, want) {
		t.Fatalf("two service requests at 1/s slept %v, want %v", c.slept, want)
	}
}

func equal(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
