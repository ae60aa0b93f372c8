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

package controllers

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseDatabaseTargets(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{in: "", want: map[string]string{}},
		{in: "default=mariadb, that-database = other ,", want: map[string]string{"default": "mariadb", "that-database": "other"}},
		{in: "nosecret", wantErr: "is not name=secretName"},
		{in: "a=Bad_Secret", wantErr: "not a valid Secret name"},
		{in: "bad target=s", wantErr: "not a valid label value"},
		{in: "a=s,a=t", wantErr: "configured twice"},
	} {
		got, err := parseDatabaseTargets(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

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
	if err != nil || o.DatabaseDefaultTarget != "default" || o.DatabaseResyncPeriod != 10*time.Minute || len(o.DatabaseTargetMap()) != 0 {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	o, err = parse(nil, map[string]string{"DATABASE_TARGETS": "x=s", "DATABASE_DEFAULT_TARGET": "x", "DATABASE_RESYNC_PERIOD": "30s"})
	if err != nil || o.DatabaseTargetMap()["x"] != "s" || o.DatabaseDefaultTarget != "x" || o.DatabaseResyncPeriod != 30*time.Second {
		t.Errorf("env: %+v, %v", o, err)
	}
	o, err = parse([]string{"--database-targets=y=t", "--database-resync-period=1m"}, map[string]string{"DATABASE_TARGETS": "x=s"})
	if err != nil || !reflect.DeepEqual(o.DatabaseTargetMap(), map[string]string{"y": "t"}) || o.DatabaseResyncPeriod != time.Minute {
		t.Errorf("flags win: %+v, %v", o, err)
	}
	if _, err := parse([]string{"--database-resync-period=10ms"}, nil); err == nil {
		t.Error("a resync period under 1s was accepted")
	}
	if _, err := parse(nil, map[string]string{"DATABASE_RESYNC_PERIOD": "soon"}); err == nil {
		t.Error("a bad DATABASE_RESYNC_PERIOD was accepted")
	}
}
