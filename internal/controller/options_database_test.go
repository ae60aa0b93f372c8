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

package controller

import (
	"flag"
	"io"
	"testing"
	"time"
)

func TestDatabaseOptions(t *testing.T) {
	parse := func(args []string, env map[string]string) (*Options, error) {
		var o Options
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o.BindFlags(fs)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		return &o, o.Complete(func(k string) string { return env[k] })
	}
	o, err := parse(nil, nil)
	if err != nil || o.DatabaseDefaultTarget != "default" || o.DatabaseResyncPeriod != 10*time.Minute || o.LegacyDatabaseTargets != "" {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	o, err = parse(nil, map[string]string{"DATABASE_TARGETS": "x=s", "DATABASE_DEFAULT_TARGET": "x", "DATABASE_RESYNC_PERIOD": "30s"})
	if err != nil || o.LegacyDatabaseTargets != "x=s" || o.DatabaseDefaultTarget != "x" || o.DatabaseResyncPeriod != 30*time.Second {
		t.Errorf("env: %+v, %v", o, err)
	}
	o, err = parse([]string{"--database-default-target=y", "--database-resync-period=1m"}, map[string]string{"DATABASE_DEFAULT_TARGET": "x"})
	if err != nil || o.DatabaseDefaultTarget != "y" || o.DatabaseResyncPeriod != time.Minute {
		t.Errorf("flags win: %+v, %v", o, err)
	}
	if _, err := parse([]string{"--database-resync-period=10ms"}, nil); err == nil {
		t.Error("a resync period under 1s was accepted")
	}
	if _, err := parse(nil, map[string]string{"DATABASE_RESYNC_PERIOD": "soon"}); err == nil {
		t.Error("a bad DATABASE_RESYNC_PERIOD was accepted")
	}
}
