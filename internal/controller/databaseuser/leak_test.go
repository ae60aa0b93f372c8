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

package databaseuser_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/operator101/operator101/test/testenv"
)

// TestLeakCheckFindsEveryEncoding: a planted password written to a log as a JSON field, as a console-encoded
// field, inside an error, with %q, or as its random core alone is found by findLeaks, in each form, though the
// whole password as raw text is absent from the JSON and %q lines (their `"` and `\` are escaped). A log
// without it is clean. Needs no MariaDB.
func TestLeakCheckFindsEveryEncoding(t *testing.T) {
	pw := randomPassword(t, "leak")
	core := leakWatches[t.Name()].cores[len(leakWatches[t.Name()].cores)-1]
	writers := map[string]func(logr.Logger){
		"JSON field":    func(l logr.Logger) { l.Info("x", "password", pw) },
		"error":         func(l logr.Logger) { l.Error(fmt.Errorf("connecting: %w", errors.New(pw)), "x") },
		"%q in message": func(l logr.Logger) { l.Info(fmt.Sprintf("got %q", pw)) },
		"core alone":    func(l logr.Logger) { l.Info("x", "suffix", "zz"+core+"zz") },
	}
	for name, write := range writers {
		for _, dev := range []bool{false, true} { // JSON, console
			buf := &testenv.SyncBuffer{}
			write(zap.New(zap.WriteTo(buf), zap.UseDevMode(dev)))
			if found := findLeaks(buf.String(), core, pw); len(found) == 0 {
				t.Errorf("%s (dev mode %v): not found in %s", name, dev, buf)
			}
			if name == "JSON field" && !dev && strings.Contains(buf.String(), pw) {
				t.Errorf("the JSON line holds the raw password: this test would not show why escaped forms matter")
			}
		}
	}
	clean := &testenv.SyncBuffer{}
	zap.New(zap.WriteTo(clean)).Info("x", "password", "[redacted]")
	if found := findLeaks(clean.String(), core, pw); len(found) != 0 {
		t.Errorf("a clean log is reported leaking: %v", found)
	}
	// The leak check registered for this test must pass: remove what this test planted on purpose.
	leakWatches[t.Name()].cores, leakWatches[t.Name()].secrets = nil, nil
}
