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

// Package metricsauth guards the manager's metrics endpoint as controller-runtime's
// filters.WithAuthenticationAndAuthorization does: the caller's bearer token goes to the API server in a
// TokenReview, and the user it names must be allowed to "get" the path (a SubjectAccessReview of a
// non-resource URL, e.g. the metrics-reader ClusterRole's "get /metrics"). No token, or one the API server
// does not authenticate: 401. A user not allowed: 403. A review that fails: 500. Answers are cached as
// controller-runtime caches them: a TokenReview for 1 minute (one that authenticated no one too), an allowed
// access for 5 minutes, a denied one for 30 seconds.
//
// Unlike controller-runtime's filter, which makes the lower-cased HTTP method the verb, it serves GET and HEAD
// alone, both as "get", and answers any other method 405 before any review: a client cannot make it send a
// review per method it invents. Each cache holds at most maxEntries answers, dropping the least recently used,
// so a flood of new tokens cannot flush the answer a scraper keeps using; tokens the API server did not
// authenticate have a cache of their own and push out none of the users'. At most maxInFlight reviews are
// sent at a time; a request that finds no free slot within the review timeout is answered 429.
//
// It exists because controller-runtime's filter builds on k8s.io/apiserver's delegating authenticator and
// authorizer factories, which link gRPC, OpenTelemetry, CEL and ANTLR into the manager: 20 MB of its 55 MB
// of code and read-only data, pages the manager keeps resident (docs/contributing/performance.md). The two reviews are all
// the filter needs of them.
package metricsauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Cache lifetimes, as controller-runtime's filter sets them, and the bounds of the caches and of the reviews
// in flight.
const (
	authnTTL      = time.Minute // an authenticated token's and a rejected one's, as controller-runtime's
	allowTTL      = 5 * time.Minute
	denyTTL       = 30 * time.Second
	reviewTimeout = 10 * time.Second
	maxEntries    = 1024 // per cache
	maxInFlight   = 8    // reviews sent at a time, TokenReviews and SubjectAccessReviews together
)

// verb is the one verb reviewed: the method of every request served (GET, HEAD) is read as "get", as the API
// server reads GET and HEAD of a resource.
const verb = "get"

// errBusy is returned when no review slot frees within the review timeout.
var errBusy = errors.New("too many reviews in flight")

// Reviewer sends the two reviews; the API server's typed clients in production.
type Reviewer interface {
	TokenReview(ctx context.Context, token string) (*authenticationv1.TokenReviewStatus, error)
	SubjectAccessReview(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (*authorizationv1.SubjectAccessReviewStatus, error)
}

// FilterProvider is a metricsserver.Options.FilterProvider.
func FilterProvider(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("TokenReview client: %w", err)
	}
	authz, err := authorizationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("SubjectAccessReview client: %w", err)
	}
	return Filter(apiReviewer{authn, authz}, time.Now), nil
}

type apiReviewer struct {
	authn authenticationclient.AuthenticationV1Interface
	authz authorizationclient.AuthorizationV1Interface
}

func (r apiReviewer) TokenReview(ctx context.Context, token string) (*authenticationv1.TokenReviewStatus, error) {
	tr, err := r.authn.TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return &tr.Status, nil
}

func (r apiReviewer) SubjectAccessReview(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (*authorizationv1.SubjectAccessReviewStatus, error) {
	sar, err := r.authz.SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return &sar.Status, nil
}

// clockFunc is a cache.Clock.
type clockFunc func() time.Time

func (c clockFunc) Now() time.Time { return c() }

// Filter is the metrics filter over reviewer; now is the clock of its caches.
func Filter(reviewer Reviewer, now func() time.Time) metricsserver.Filter {
	// apimachinery's LRUExpireCache (linked already, by client-go) is the bounded cache: LRU eviction, per-entry TTL.
	f := &filter{reviewer: reviewer,
		users:    cache.NewLRUExpireCacheWithClock(maxEntries, clockFunc(now)),
		rejected: cache.NewLRUExpireCacheWithClock(maxEntries, clockFunc(now)),
		access:   cache.NewLRUExpireCacheWithClock(maxEntries, clockFunc(now)),
		slots:    make(chan struct{}, maxInFlight)}
	return func(log logr.Logger, handler http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			f.serve(log, handler, w, req)
		}), nil
	}
}

type filter struct {
	reviewer Reviewer
	users    *cache.LRUExpireCache // authnResult by SHA-256 of the token; authenticated tokens
	rejected *cache.LRUExpireCache // authnResult by SHA-256 of the token; tokens the API server did not authenticate
	access   *cache.LRUExpireCache // bool by user, groups and path
	slots    chan struct{}         // one per review in flight
}

func (f *filter) serve(log logr.Logger, handler http.Handler, w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
	defer cancel()
	token := bearerToken(req)
	if token == "" {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	user, ok, err := f.authenticate(ctx, token)
	if errors.Is(err, errBusy) {
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	}
	if err != nil {
		log.Error(err, "Authentication failed") // the error names no token
		http.Error(w, "Authentication failed", http.StatusInternalServerError)
		return
	}
	if !ok {
		log.V(4).Info("Authentication failed")
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	allowed, err := f.authorize(ctx, user, req.URL.Path)
	if errors.Is(err, errBusy) {
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	}
	if err != nil {
		msg := fmt.Sprintf("Authorization for user %s failed", user.Username)
		log.Error(err, msg)
		http.Error(w, msg, http.StatusInternalServerError)
		return
	}
	if !allowed {
		msg := fmt.Sprintf("Authorization denied for user %s", user.Username)
		log.V(4).Info(msg)
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	handler.ServeHTTP(w, req)
}

// bearerToken is the token of an "Authorization: Bearer <token>" header, as the API server reads it.
func bearerToken(req *http.Request) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// acquire takes a review slot, waiting for one until ctx ends; release gives it back.
func (f *filter) acquire(ctx context.Context) (release func(), err error) {
	select {
	case f.slots <- struct{}{}:
		return func() { <-f.slots }, nil
	case <-ctx.Done():
		return nil, errBusy
	}
}

// authnResult is a TokenReview's answer: the user, or, for a token not authenticated, the API server's
// reason if it gave one.
type authnResult struct {
	user          authenticationv1.UserInfo
	authenticated bool
	reason        string
}

func (r authnResult) answer() (authenticationv1.UserInfo, bool, error) {
	if !r.authenticated && r.reason != "" {
		return r.user, false, fmt.Errorf("TokenReview: %s", r.reason)
	}
	return r.user, r.authenticated, nil
}

func (f *filter) cachedAuthn(key string) (authnResult, bool) {
	for _, c := range []*cache.LRUExpireCache{f.users, f.rejected} {
		if v, ok := c.Get(key); ok {
			return v.(authnResult), true
		}
	}
	return authnResult{}, false
}

func (f *filter) authenticate(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	sum := sha256.Sum256([]byte(token))
	key := string(sum[:])
	if r, ok := f.cachedAuthn(key); ok {
		return r.answer()
	}
	release, err := f.acquire(ctx)
	if err != nil {
		return authenticationv1.UserInfo{}, false, err
	}
	defer release()
	if r, ok := f.cachedAuthn(key); ok { // reviewed for another request while this one waited
		return r.answer()
	}
	st, err := f.reviewer.TokenReview(ctx, token)
	if err != nil {
		return authenticationv1.UserInfo{}, false, fmt.Errorf("TokenReview: %w", err)
	}
	r := authnResult{user: st.User, authenticated: st.Authenticated, reason: st.Error}
	if r.authenticated {
		f.users.Add(key, r, authnTTL)
	} else {
		f.rejected.Add(key, r, authnTTL)
	}
	return r.answer()
}

func (f *filter) authorize(ctx context.Context, u authenticationv1.UserInfo, path string) (bool, error) {
	groups := append([]string(nil), u.Groups...)
	sort.Strings(groups)
	key := fmt.Sprintf("%q %q %q %q", u.Username, u.UID, strings.Join(groups, ","), path)
	if len(u.Extra) > 0 {
		key += fmt.Sprint(u.Extra) // fmt prints maps sorted by key
	}
	if v, ok := f.access.Get(key); ok {
		return v.(bool), nil
	}
	release, err := f.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	if v, ok := f.access.Get(key); ok { // reviewed for another request while this one waited
		return v.(bool), nil
	}
	spec := authorizationv1.SubjectAccessReviewSpec{User: u.Username, UID: u.UID, Groups: u.Groups,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb}}
	if len(u.Extra) > 0 {
		spec.Extra = map[string]authorizationv1.ExtraValue{}
		for k, v := range u.Extra {
			spec.Extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	st, err := f.reviewer.SubjectAccessReview(ctx, spec)
	if err != nil {
		return false, fmt.Errorf("SubjectAccessReview: %w", err)
	}
	ttl := denyTTL
	if st.Allowed {
		ttl = allowTTL
	}
	f.access.Add(key, st.Allowed, ttl)
	return st.Allowed, nil
}
