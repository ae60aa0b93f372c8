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

package metricsauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
)

// fakeReviewer knows "reader" (allowed to get /metrics), "stranger" and every "user-<n>" (allowed nothing), and
// "expired" (the API server reports an error); any other token is not authenticated. It counts the reviews,
// in all and per token or user.
type fakeReviewer struct {
	tokenReviews, accessReviews int
	tokenReviewsOf              map[string]int // by token
	accessReviewsOf             map[string]int // by user name
	fail                        bool
	allowReader                 bool
	lastSpec                    authorizationv1.SubjectAccessReviewSpec
}

func (r *fakeReviewer) TokenReview(_ context.Context, token string) (*authenticationv1.TokenReviewStatus, error) {
	r.tokenReviews++
	if r.tokenReviewsOf == nil {
		r.tokenReviewsOf = map[string]int{}
	}
	r.tokenReviewsOf[token]++
	if r.fail {
		return nil, errors.New("connection refused")
	}
	switch {
	case token == "reader", token == "stranger", strings.HasPrefix(token, "user-"):
		return &authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
			Username: "system:serviceaccount:default:" + token, UID: "uid-" + token,
			Groups: []string{"system:serviceaccounts", "system:authenticated"}}}, nil
	case token == "expired":
		return &authenticationv1.TokenReviewStatus{Error: "token has expired"}, nil
	}
	return &authenticationv1.TokenReviewStatus{}, nil
}

func (r *fakeReviewer) SubjectAccessReview(_ context.Context, spec authorizationv1.SubjectAccessReviewSpec) (*authorizationv1.SubjectAccessReviewStatus, error) {
	r.accessReviews++
	if r.accessReviewsOf == nil {
		r.accessReviewsOf = map[string]int{}
	}
	r.accessReviewsOf[spec.User]++
	r.lastSpec = spec
	allowed := r.allowReader && spec.User == "system:serviceaccount:default:reader" &&
		spec.NonResourceAttributes != nil && spec.NonResourceAttributes.Path == "/metrics" &&
		spec.NonResourceAttributes.Verb == "get"
	return &authorizationv1.SubjectAccessReviewStatus{Allowed: allowed}, nil
}

// metricsHandler is the filter over r, with the clock now, in front of a handler writing "metrics".
func metricsHandler(t *testing.T, r Reviewer, now func() time.Time) http.Handler {
	t.Helper()
	h, err := Filter(r, now)(logr.Discard(),
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// request sends method /metrics to h with the Authorization header auth (none if empty).
func request(ctx context.Context, h http.Handler, method, auth string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(ctx, method, "/metrics", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestFilter(t *testing.T) {
	r := &fakeReviewer{allowReader: true}
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	h := metricsHandler(t, r, func() time.Time { return now })
	get := func(auth string) int { return request(t.Context(), h, http.MethodGet, auth).Code }
	for _, tc := range []struct {
		name, auth string
		want       int
	}{
		{"no header", "", http.StatusUnauthorized},
		{"not a bearer token", "Basic dXNlcjpwYXNz", http.StatusUnauthorized},
		{"empty bearer token", "Bearer ", http.StatusUnauthorized},
		{"unknown token", "Bearer nobody", http.StatusUnauthorized},
		{"token the API server reports an error for", "Bearer expired", http.StatusInternalServerError},
		{"authenticated, not allowed", "Bearer stranger", http.StatusForbidden},
		{"authenticated and allowed", "Bearer reader", http.StatusOK},
		{"scheme in lower case", "bearer reader", http.StatusOK},
	} {
		if got := get(tc.auth); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if r.lastSpec.UID != "uid-reader" || len(r.lastSpec.Groups) != 2 {
		t.Errorf("SubjectAccessReview spec = %+v, want the reviewed user's UID and groups", r.lastSpec)
	}

	// Cached: the allowed reader costs no review for 5 minutes; the denied stranger is asked again after 30 s,
	// and the TokenReviews after a minute.
	tr, ar := r.tokenReviews, r.accessReviews
	get("Bearer reader")
	get("Bearer stranger")
	if r.tokenReviews != tr || r.accessReviews != ar {
		t.Errorf("reviews within the cache lifetimes: %d TokenReviews, %d SubjectAccessReviews, want none",
			r.tokenReviews-tr, r.accessReviews-ar)
	}
	r.allowReader = false
	now = now.Add(31 * time.Second)
	if code := get("Bearer reader"); code != http.StatusOK {
		t.Errorf("reader within 5 minutes of an allowed review: %d, want 200 (cached)", code)
	}
	get("Bearer stranger")
	if r.accessReviews != ar+1 || r.tokenReviews != tr {
		t.Errorf("after 31 s: %d SubjectAccessReviews (want 1: the stranger's denial expired), %d TokenReviews (want 0)",
			r.accessReviews-ar, r.tokenReviews-tr)
	}
	now = now.Add(5 * time.Minute)
	if code := get("Bearer reader"); code != http.StatusForbidden {
		t.Errorf("reader after the allowed review expired and the role was taken away: %d, want 403", code)
	}

	// A review that cannot be sent: 500, nothing served, nothing cached.
	r.fail = true
	if code := get("Bearer someone-else"); code != http.StatusInternalServerError {
		t.Errorf("TokenReview failing: %d, want 500", code)
	}
	r.fail = false
	tr = r.tokenReviews
	if code := get("Bearer someone-else"); code != http.StatusUnauthorized || r.tokenReviews != tr+1 {
		t.Errorf("after a failed TokenReview: %d with %d TokenReviews, want 401 with 1 (the failure not cached)",
			code, r.tokenReviews-tr)
	}
}

// TestReviewsAreBounded: whatever the method, and however often a token is repeated, a client costs at most
// one TokenReview and one SubjectAccessReview per cache lifetime; a method other than GET and HEAD costs none.
func TestReviewsAreBounded(t *testing.T) {
	const n = 50 // requests per row
	invented := make([]string, n)
	for i := range invented {
		invented[i] = fmt.Sprintf("M%d", i)
	}
	reader, notAllowed := "Bearer reader", "Bearer stranger"
	for _, tc := range []struct {
		name    string
		methods []string // in turn, n requests in all
		auth    string
		want    int
		// At most this many of each review for the n requests.
		tokenReviews, accessReviews int
	}{
		{"GET", []string{"GET"}, reader, http.StatusOK, 1, 1},
		{"HEAD, reviewed as get", []string{"HEAD"}, reader, http.StatusOK, 1, 1},
		{"GET and HEAD in turn share an answer", []string{"GET", "HEAD"}, reader, http.StatusOK, 1, 1},
		{"GET, a user not allowed", []string{"GET"}, notAllowed, http.StatusForbidden, 1, 1},
		{"GET and HEAD, a user not allowed", []string{"HEAD", "GET"}, notAllowed, http.StatusForbidden, 1, 1},
		{"POST", []string{"POST"}, reader, http.StatusMethodNotAllowed, 0, 0},
		{"PUT", []string{"PUT"}, reader, http.StatusMethodNotAllowed, 0, 0},
		{"PATCH", []string{"PATCH"}, reader, http.StatusMethodNotAllowed, 0, 0},
		{"DELETE", []string{"DELETE"}, reader, http.StatusMethodNotAllowed, 0, 0},
		{"OPTIONS", []string{"OPTIONS"}, reader, http.StatusMethodNotAllowed, 0, 0},
		{"FOO", []string{"FOO"}, reader, http.StatusMethodNotAllowed, 0, 0},
		{"get in lower case, not GET", []string{"get"}, reader, http.StatusMethodNotAllowed, 0, 0},
		{"other spellings of GET and HEAD", []string{"Get", "gEt", "head"}, reader, http.StatusMethodNotAllowed, 0, 0},
		{"a new method each time", invented, reader, http.StatusMethodNotAllowed, 0, 0},
		{"a new method each time, a user not allowed", invented, notAllowed, http.StatusMethodNotAllowed, 0, 0},
		{"a new method each time, no token", invented, "", http.StatusMethodNotAllowed, 0, 0},
		{"an unknown token", []string{"GET"}, "Bearer nobody", http.StatusUnauthorized, 1, 0},
		{"an unknown token, GET and HEAD", []string{"GET", "HEAD"}, "Bearer nobody", http.StatusUnauthorized, 1, 0},
		{"a token the API server reports an error for", []string{"GET"}, "Bearer expired", http.StatusInternalServerError, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeReviewer{allowReader: true}
			now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
			h := metricsHandler(t, r, func() time.Time { return now })
			wrong := 0
			for i := range n {
				method := tc.methods[i%len(tc.methods)]
				rec := request(t.Context(), h, method, tc.auth)
				if rec.Code != tc.want {
					if wrong++; wrong == 1 {
						t.Errorf("request %d, %s: %d, want %d", i, method, rec.Code, tc.want)
					}
				} else if rec.Code == http.StatusMethodNotAllowed && rec.Header().Get("Allow") != "GET, HEAD" {
					t.Errorf("request %d, %s: Allow %q, want \"GET, HEAD\"", i, method, rec.Header().Get("Allow"))
				}
				now = now.Add(time.Second / 4) // n requests within the shortest cache lifetime
			}
			if r.tokenReviews > tc.tokenReviews || r.accessReviews > tc.accessReviews {
				t.Errorf("%d requests: %d TokenReviews and %d SubjectAccessReviews, want at most %d and %d",
					n, r.tokenReviews, r.accessReviews, tc.tokenReviews, tc.accessReviews)
			}
		})
	}
}

// TestInUseEntrySurvivesManyTokens: the caches are bounded, but a flood of new tokens does not flush the answers
// a scraper keeps using: rejected tokens have a cache of their own, and users are dropped least recently used.
func TestInUseEntrySurvivesManyTokens(t *testing.T) {
	const many = 2000 // each cache holds maxEntries
	r := &fakeReviewer{allowReader: true}
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	h := metricsHandler(t, r, func() time.Time { return now })
	get := func(token string) int { return request(t.Context(), h, http.MethodGet, "Bearer "+token).Code }
	const readerName = "system:serviceaccount:default:reader"
	readerReviewed := func(when string) {
		t.Helper()
		if code := get("reader"); code != http.StatusOK {
			t.Fatalf("reader %s: %d, want 200", when, code)
		}
		if r.tokenReviewsOf["reader"] != 1 || r.accessReviewsOf[readerName] != 1 {
			t.Fatalf("reader %s: %d TokenReviews and %d SubjectAccessReviews in all, want 1 and 1 (its answers cached)",
				when, r.tokenReviewsOf["reader"], r.accessReviewsOf[readerName])
		}
	}
	readerReviewed("first")

	// Tokens the API server does not authenticate, the reader not asking in between.
	for i := range many {
		if code := get(fmt.Sprintf("bad-%d", i)); code != http.StatusUnauthorized {
			t.Fatalf("bad-%d: %d, want 401", i, code)
		}
	}
	readerReviewed(fmt.Sprintf("after %d rejected tokens", many))

	// Authenticated users, each with its own access answer, the reader asking every 100.
	for i := range many {
		if code := get(fmt.Sprintf("user-%d", i)); code != http.StatusForbidden {
			t.Fatalf("user-%d: %d, want 403", i, code)
		}
		if i%100 == 99 {
			readerReviewed(fmt.Sprintf("after %d other users", i+1))
		}
		now = now.Add(10 * time.Millisecond) // all within the lifetimes: 20 s in all
	}

	// Bounded: the first of them, not asked since, was dropped.
	tr := r.tokenReviews
	get("user-0")
	get("bad-0")
	if r.tokenReviews != tr+2 {
		t.Errorf("user-0 and bad-0, %d tokens later: %d TokenReviews, want 2 (dropped from the bounded caches)",
			many, r.tokenReviews-tr)
	}
}

// blockingReviewer holds every TokenReview until release is closed (or its context ends), and authenticates
// no token.
type blockingReviewer struct {
	release, entered chan struct{}
	mu               sync.Mutex
	inFlight, most   int
	seen             map[string]bool
}

func (r *blockingReviewer) TokenReview(ctx context.Context, token string) (*authenticationv1.TokenReviewStatus, error) {
	r.mu.Lock()
	r.inFlight++
	r.most = max(r.most, r.inFlight)
	r.seen[token] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
	}()
	r.entered <- struct{}{}
	select {
	case <-r.release:
		return &authenticationv1.TokenReviewStatus{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *blockingReviewer) SubjectAccessReview(context.Context, authorizationv1.SubjectAccessReviewSpec) (*authorizationv1.SubjectAccessReviewStatus, error) {
	return &authorizationv1.SubjectAccessReviewStatus{}, nil
}

// TestReviewsInFlightAreBounded: at most maxInFlight reviews are sent at a time; the requests past them wait
// for a slot, and one that finds none before its context ends is answered 429 without a review.
func TestReviewsInFlightAreBounded(t *testing.T) {
	const clients = maxInFlight + 4
	r := &blockingReviewer{release: make(chan struct{}), entered: make(chan struct{}, clients+1), seen: map[string]bool{}}
	h := metricsHandler(t, r, time.Now)
	codes := make([]int, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() { codes[i] = request(t.Context(), h, http.MethodGet, fmt.Sprintf("Bearer t-%d", i)).Code })
	}
	for range maxInFlight {
		<-r.entered
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	late := request(ctx, h, http.MethodGet, "Bearer late").Code
	close(r.release)
	wg.Wait()

	if late != http.StatusTooManyRequests {
		t.Errorf("a request finding every review slot taken until its context ended: %d, want 429", late)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen["late"] {
		t.Error("the request that found no review slot was reviewed")
	}
	if r.most > maxInFlight {
		t.Errorf("%d TokenReviews in flight at once, want at most %d", r.most, maxInFlight)
	}
	for i, code := range codes {
		if code != http.StatusUnauthorized {
			t.Errorf("client %d, which waited for a slot: %d, want 401", i, code)
		}
	}
}
