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

// Package kindlimit limits a manager's requests to the API server per kind (API group and resource), whatever
// client sends them.
//
// client-go limits requests per REST client, and controller-runtime makes one REST client per kind for its
// typed client and its informers, so --kube-api-qps reads as a limit per kind. Its metadata client, through
// which operator101 sends every apply and status patch (the answer is the object's metadata only), is one REST
// client for all kinds: every write of every kind shared one token bucket, and at 200 requests per second that
// bucket, not the API server, set the pace of a burst of new objects (docs/contributing/performance.md). Limiting in the
// transport, by the resource the request's path names, gives every kind its own bucket again. Its own code
// because neither client-go nor controller-runtime offers a limiter keyed by resource.
package kindlimit

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/rest"
)

// Limiter holds one token bucket per kind.
type Limiter struct {
	qps   rate.Limit
	burst int
	// now and sleep are the clock (time.Now, and a sleep that ends early when ctx does); tests replace them.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu    sync.Mutex
	kinds map[string]*rate.Limiter
}

// New is a Limiter of qps requests per second per kind, with bursts of burst.
func New(qps float32, burst int) *Limiter {
	return &Limiter{qps: rate.Limit(qps), burst: max(burst, 1), now: time.Now, sleep: sleepCtx,
		kinds: map[string]*rate.Limiter{}}
}

// Configure makes every client built from cfg wait for the Limiter's bucket of the kind it asks for, and
// turns client-go's limiter of each REST client off (a negative QPS), so no request waits twice.
func (l *Limiter) Configure(cfg *rest.Config) {
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &transport{limiter: l, next: rt} })
}

// Wait waits until the bucket of key has a token, or ctx ends.
func (l *Limiter) Wait(ctx context.Context, key string) error {
	l.mu.Lock()
	b, ok := l.kinds[key]
	if !ok {
		b = rate.NewLimiter(l.qps, l.burst)
		l.kinds[key] = b
	}
	l.mu.Unlock()
	now := l.now()
	r := b.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	if err := l.sleep(ctx, d); err != nil {
		r.CancelAt(l.now())
		return fmt.Errorf("waiting %v for the client-side limit of %s: %w", d, key, err)
	}
	return nil
}

type transport struct {
	limiter *Limiter
	next    http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.limiter.Wait(req.Context(), KindOf(req.URL.Path)); err != nil {
		return nil, err
	}
	return t.next.RoundTrip(req)
}

// KindOf is the API group and resource a request path names ("apps/deployments"; the core group is empty:
// "/services"), a subresource counting as its resource's; "" for a path that names none (discovery, /version).
func KindOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api": // /api/v1/...
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis": // /apis/<group>/<version>/...
		group, parts = parts[1], parts[3:]
	default:
		return ""
	}
	if len(parts) >= 3 && parts[0] == "namespaces" { // namespaces/<ns>/<resource>/...
		if len(parts) == 3 && (parts[2] == "status" || parts[2] == "finalize") { // a namespace's own
			return group + "/namespaces"
		}
		parts = parts[2:]
	}
	return group + "/" + parts[0]
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
