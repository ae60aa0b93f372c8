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

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGetAcceptsOnly2xxAndSendsTheToken(t *testing.T) {
	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		if r.URL.Path == "/fail" {
			http.Error(w, "nope", http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	ctx := context.Background()

	if err := get(ctx, srv.Client(), srv.URL+"/", "tok"); err != nil {
		t.Fatalf("GET /: %v", err)
	}
	if gotAuth != "Bearer tok" {
		t.Fatalf("Authorization header %q, want the bearer token", gotAuth)
	}
	if err := get(ctx, srv.Client(), srv.URL+"/", ""); err != nil || gotAuth != "" {
		t.Fatalf("GET / without a token: err %v, Authorization %q", err, gotAuth)
	}
	if err := get(ctx, srv.Client(), srv.URL+"/fail", ""); err == nil {
		t.Fatal("GET /fail: want an error for 403")
	}
}

func TestEachNeedsSomethingToCheckAndStopsAtTheFirstFailure(t *testing.T) {
	if err := each(nil, func(string) error { return nil }); err == nil {
		t.Fatal("no arguments: want an error")
	}
	var seen []string
	err := each([]string{"a", "b", "c"}, func(s string) error {
		seen = append(seen, s)
		if s == "b" {
			return context.Canceled
		}
		return nil
	})
	if err == nil || len(seen) != 2 {
		t.Fatalf("err %v after %v, want the failure at b and c not tried", err, seen)
	}
}

func TestAPIOutsideAPodSaysSo(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if err := api(context.Background()); err == nil {
		t.Fatal("want an error without KUBERNETES_SERVICE_HOST")
	}
}
