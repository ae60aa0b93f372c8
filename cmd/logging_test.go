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
	"bytes"
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// marshalCount is a logged value that counts how often zap encodes it.
type marshalCount struct{ n *int }

func (m marshalCount) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	*m.n++
	enc.AddString("name", "web")
	return nil
}

// TestLoggerEncodesValuesOnlyWhenWritten: values added to the manager's logger (as controller-runtime adds three
// per reconcile) are encoded only when an entry is written, and then written as zap writes them: in order,
// each once, below the level and name of the logger they were added to.
func TestLoggerEncodesValuesOnlyWhenWritten(t *testing.T) {
	var plain, lazy bytes.Buffer
	var encoded int
	newOpts := func(w *bytes.Buffer) *zap.Options {
		return &zap.Options{DestWriter: w, EncoderConfigOptions: []zap.EncoderConfigOption{
			func(c *zapcore.EncoderConfig) { c.TimeKey = "" }}}
	}
	log := newLogger(newOpts(&lazy)).WithName("controller")
	quiet := log.WithValues("MyWeb", marshalCount{&encoded}).WithValues("namespace", "shop", "name", "web").
		WithValues("reconcileID", "1")
	quiet.V(1).Info("not written: below the level")
	if encoded != 0 || lazy.Len() != 0 {
		t.Fatalf("a logger nothing was written to encoded its values %d times; wrote %q", encoded, lazy.String())
	}
	quiet.Info("pod created", "pod", "web-pod")
	quiet.Info("pod created", "pod", "web-pod")
	if encoded != 1 {
		t.Errorf("values encoded %d times for two entries, want once", encoded)
	}
	var n int
	want := zap.New(zap.UseFlagOptions(newOpts(&plain))).WithName("controller").
		WithValues("MyWeb", marshalCount{&n}).WithValues("namespace", "shop", "name", "web").WithValues("reconcileID", "1")
	want.Info("pod created", "pod", "web-pod")
	want.Info("pod created", "pod", "web-pod")
	if lazy.String() != plain.String() || !strings.Contains(plain.String(), `"MyWeb":{"name":"web"},"namespace":"shop"`) {
		t.Errorf("written:\n%s\nwant, as zap writes it:\n%s", lazy.String(), plain.String())
	}
}
