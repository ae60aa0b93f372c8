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
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHandlerServesTheDirectoryLikeNginx(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "index.html"), []byte("<h1>hello</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(root), "secret"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHandler(root)
	for _, tc := range []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{"/", http.StatusOK, "<h1>hello</h1>"},
		{"/index.html", http.StatusMovedPermanently, ""}, // net/http redirects it to the directory (nginx would serve it)
		{"/missing.html", http.StatusNotFound, ""},
		{"/../secret", http.StatusNotFound, ""}, // never outside the root
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if rec.Code != tc.wantCode {
				t.Fatalf("GET %s: code %d, want %d", tc.path, rec.Code, tc.wantCode)
			}
			if tc.wantBody != "" && !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Fatalf("GET %s: body %q, want it to contain %q", tc.path, rec.Body.String(), tc.wantBody)
			}
			if strings.Contains(rec.Body.String(), "outside") {
				t.Fatalf("GET %s served a file outside the root", tc.path)
			}
		})
	}
}
