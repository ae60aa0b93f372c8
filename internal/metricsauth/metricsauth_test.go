/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package metricsauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
)

// fakeReviewer knows two tokens: "reader" (allowed to get /metrics) and "stranger" (allowed nothing).
type fakeReviewer struct {
	tokenReviews, accessReviews int
	fail                        bool
	allowReader                 bool
	lastSpec                    authorizationv1.SubjectAccessReviewSpec
}

func (r *fakeReviewer) TokenReview(_ context.Context, token string) (*authenticationv1.TokenReviewStatus, error) {
	r.tokenReviews++
	if r.fail {
		return nil, errors.New("connection refused")
	}
	switch token {
	case "reader", "stranger":
		return &authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
			Username: "system:serviceaccount:default:" + token, UID: "uid-" + token,
			Groups: []string{"system:serviceaccounts", "system:authenticated"}}}, nil
	case "expired":
		return &authenticationv1.TokenReviewStatus{Error: "token has expired"}, nil
	}
	return &authenticationv1.TokenReviewStatus{}, nil
}

func (r *fakeReviewer) SubjectAccessReview(_ context.Context, spec authorizationv1.SubjectAccessReviewSpec) (*authorizationv1.SubjectAccessReviewStatus, error) {
	r.accessReviews++
	r.lastSpec = spec
	allowed := r.allowReader && spec.User == "system:serviceaccount:default:reader" &&
		spec.NonResourceAttributes != nil && spec.NonResourceAttributes.Path == "/metrics" &&
		spec.NonResourceAttributes.Verb == "get"
	return &authorizationv1.SubjectAccessReviewStatus{Allowed: allowed}, nil
}

func TestFilter(t *testing.T) {
	r := &fakeReviewer{allowReader: true}
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	h, err := Filter(r, func() time.Time { return now })(logr.Discard(),
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	if err != nil {
		t.Fatal(err)
	}
	get := func(auth string) int {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
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
}

func TestCacheBounded(t *testing.T) {
	c := ttlCache[bool]{}
	now := time.Now()
	for i := range 3 * maxEntries {
		c.put(string(rune(i)), true, now, time.Minute)
		if len(c) > maxEntries {
			t.Fatalf("%d entries, want at most %d", len(c), maxEntries)
		}
	}
	if _, ok := c.get(string(rune(3*maxEntries-1)), now); !ok {
		t.Error("the latest entry is missing")
	}
	if _, ok := c.get(string(rune(3*maxEntries-1)), now.Add(time.Minute)); ok {
		t.Error("an entry outlived its lifetime")
	}
}
