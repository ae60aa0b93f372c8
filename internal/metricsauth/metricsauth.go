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

// Package metricsauth guards the manager's metrics endpoint as controller-runtime's
// filters.WithAuthenticationAndAuthorization does: the caller's bearer token goes to the API server in a
// TokenReview, and the user it names must be allowed to "get" the path (a SubjectAccessReview of a
// non-resource URL, e.g. the metrics-reader ClusterRole's "get /metrics"). No token, or one the API server
// does not authenticate: 401. A user not allowed: 403. A review that fails: 500. Answers are cached as
// controller-runtime caches them: a TokenReview for 1 minute, an allowed access for 5 minutes, a denied one for
// 30 seconds.
//
// It exists because controller-runtime's filter builds on k8s.io/apiserver's delegating authenticator and
// authorizer factories, which link gRPC, OpenTelemetry, CEL and ANTLR into the manager: 20 MB of its 55 MB
// of code and read-only data, pages the manager keeps resident (docs/performance.md). The two reviews are all
// the filter needs of them.
package metricsauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Cache lifetimes, as controller-runtime's filter sets them.
const (
	authnTTL      = time.Minute
	allowTTL      = 5 * time.Minute
	denyTTL       = 30 * time.Second
	reviewTimeout = 10 * time.Second
	// maxEntries bounds each cache: past it, expired entries are dropped, and if none expired, all of them.
	maxEntries = 1024
)

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

// Filter is the metrics filter over reviewer; now is the clock of its caches.
func Filter(reviewer Reviewer, now func() time.Time) metricsserver.Filter {
	f := &filter{reviewer: reviewer, now: now, users: ttlCache[authenticationv1.UserInfo]{}, access: ttlCache[bool]{}}
	return func(log logr.Logger, handler http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			f.serve(log, handler, w, req)
		}), nil
	}
}

type filter struct {
	reviewer Reviewer
	now      func() time.Time
	mu       sync.Mutex
	users    ttlCache[authenticationv1.UserInfo] // by SHA-256 of the token; only authenticated users
	access   ttlCache[bool]                      // by user, groups, verb and path
}

func (f *filter) serve(log logr.Logger, handler http.Handler, w http.ResponseWriter, req *http.Request) {
	ctx, cancel := context.WithTimeout(req.Context(), reviewTimeout)
	defer cancel()
	token := bearerToken(req)
	if token == "" {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	user, ok, err := f.authenticate(ctx, token)
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
	verb := strings.ToLower(req.Method)
	allowed, err := f.authorize(ctx, user, verb, req.URL.Path)
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

func (f *filter) authenticate(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	sum := sha256.Sum256([]byte(token))
	key := string(sum[:])
	f.mu.Lock()
	u, ok := f.users.get(key, f.now())
	f.mu.Unlock()
	if ok {
		return u, true, nil
	}
	st, err := f.reviewer.TokenReview(ctx, token)
	if err != nil {
		return u, false, fmt.Errorf("TokenReview: %w", err)
	}
	if st.Error != "" && !st.Authenticated {
		return u, false, fmt.Errorf("TokenReview: %s", st.Error)
	}
	if !st.Authenticated {
		return u, false, nil
	}
	f.mu.Lock()
	f.users.put(key, st.User, f.now(), authnTTL)
	f.mu.Unlock()
	return st.User, true, nil
}

func (f *filter) authorize(ctx context.Context, u authenticationv1.UserInfo, verb, path string) (bool, error) {
	groups := append([]string(nil), u.Groups...)
	sort.Strings(groups)
	key := fmt.Sprintf("%q %q %q %q %q", u.Username, u.UID, strings.Join(groups, ","), verb, path)
	if len(u.Extra) > 0 {
		key += fmt.Sprint(u.Extra) // fmt prints maps sorted by key
	}
	f.mu.Lock()
	allowed, ok := f.access.get(key, f.now())
	f.mu.Unlock()
	if ok {
		return allowed, nil
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
	f.mu.Lock()
	f.access.put(key, st.Allowed, f.now(), ttl)
	f.mu.Unlock()
	return st.Allowed, nil
}

type entry[V any] struct {
	v       V
	expires time.Time
}

// ttlCache is a map whose entries expire; the caller holds the filter's lock.
type ttlCache[V any] map[string]entry[V]

func (c ttlCache[V]) get(key string, now time.Time) (V, bool) {
	e, ok := c[key]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c ttlCache[V]) put(key string, v V, now time.Time, ttl time.Duration) {
	if len(c) >= maxEntries {
		for k, e := range c {
			if !now.Before(e.expires) {
				delete(c, k)
			}
		}
		if len(c) >= maxEntries {
			clear(c)
		}
	}
	c[key] = entry[V]{v, now.Add(ttl)}
}
