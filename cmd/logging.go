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
	"github.com/go-logr/logr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newLogger is the manager's logger: controller-runtime's zap logger, whose values added with WithValues are
// encoded only when something is written. controller-runtime adds three to the logger of every reconcile, and
// zap encodes them at once, cloning its JSON encoder each time, for a logger most reconciles never write to (in
// the bench, 7% of all the manager allocated). zapcore.NewLazyWith defers one With; lazyCore makes every With
// of a chain lazy.
func newLogger(opts *zap.Options) logr.Logger {
	return zap.New(zap.UseFlagOptions(opts),
		zap.RawZapOpts(uberzap.WrapCore(func(c zapcore.Core) zapcore.Core { return lazyCore{c} })))
}

// lazyCore is a zapcore.Core whose With encodes nothing until an entry is written.
type lazyCore struct{ zapcore.Core }

func (c lazyCore) With(fields []zapcore.Field) zapcore.Core {
	return lazyCore{zapcore.NewLazyWith(c.Core, fields)}
}
