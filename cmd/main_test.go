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
	"errors"
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseConfigDefaults(t *testing.T) {
	cfg, err := parseConfig(nil, func(string) string { return "" }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.metricsAddr != ":8443" || !cfg.metricsSecure || cfg.probeAddr != ":8081" || !cfg.leaderElect {
		t.Errorf("defaults: metrics=%q secure=%v probe=%q leader=%v", cfg.metricsAddr, cfg.metricsSecure, cfg.probeAddr, cfg.leaderElect)
	}
	if cfg.zap.Development {
		t.Error("production default must log JSON, not development console output")
	}
	if cfg.enableHTTP2 {
		t.Error("HTTP/2 must be off by default")
	}
	if cfg.clientQPS != 200 || cfg.clientBurst != 400 {
		t.Errorf("client defaults: qps %v burst %d; want 200, 400 (docs/contributing/performance.md)", cfg.clientQPS, cfg.clientBurst)
	}
	// What the manager leaves zero, the package that uses it defaults (and only it): the configuration must not
	// carry a second copy of those defaults.
	if c := cfg.controllers; c.Workers != 0 || c.AtWorkers != 0 || c.DatabaseDefaultTarget != "" || c.DatabaseResyncPeriod != 0 ||
		c.WatchNamespaces != nil || c.OperatorConditionName != "" || c.AtDefaultImage != "" {
		t.Errorf("controller options without flags or environment: %+v, want all zero", c)
	}
	if cfg.gcPercent != defaultGCPercent || cfg.legacyDatabaseTargets != "" {
		t.Errorf("gcPercent %d, DATABASE_TARGETS %q", cfg.gcPercent, cfg.legacyDatabaseTargets)
	}
	if cfg.memoryLimit != 0 {
		t.Errorf("memory limit %d without MEMORY_LIMIT", cfg.memoryLimit)
	}
}

func TestParseConfigFlagsAndEnv(t *testing.T) {
	env := map[string]string{"WATCH_NAMESPACE": "b, a,b", "POD_NAMESPACE": "ops", "OPERATOR_CONDITION_NAME": "operator101.v0.2.0",
		"RELATED_IMAGE_BUSYBOX": "mirror.example/busybox@sha256:0", "DATABASE_TARGETS": "x=s", "GOGC": "100"}
	cfg, err := parseConfig([]string{"--leader-elect=false", "--zap-devel", "--zap-log-level=debug",
		"--metrics-bind-address=0", "--max-concurrent-reconciles=8", "--max-concurrent-at-reconciles=3",
		"--kube-api-qps=25", "--kube-api-burst=40"}, func(k string) string { return env[k] }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.leaderElect || !cfg.zap.Development || cfg.metricsAddr != "0" || cfg.clientQPS != 25 || cfg.clientBurst != 40 {
		t.Errorf("flags not applied: %+v", cfg)
	}
	c := cfg.controllers
	if c.Workers != 8 || c.AtWorkers != 3 {
		t.Errorf("workers %d, At workers %d; want 8, 3", c.Workers, c.AtWorkers)
	}
	if got := c.WatchNamespaces; len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("watch namespaces = %v, want [a b]", got)
	}
	if c.OperatorNamespace != "ops" || c.OperatorConditionName != "operator101.v0.2.0" || c.AtDefaultImage != env["RELATED_IMAGE_BUSYBOX"] {
		t.Errorf("from the environment: %+v", c)
	}
	if cfg.legacyDatabaseTargets != "x=s" || cfg.gcPercent != 0 || !reflect.DeepEqual(cfg.controllers.DatabaseMigratingTargets, []string{"x"}) {
		t.Errorf("DATABASE_TARGETS %q (migrating %v), gcPercent %d", cfg.legacyDatabaseTargets, cfg.controllers.DatabaseMigratingTargets, cfg.gcPercent)
	}
}

// The cluster's proxy reaches the controllers as operator-lib reads it: both spellings of each variable.
func TestParseConfigProxy(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://proxy.example:3128")
	t.Setenv("HTTP_PROXY", "")
	t.Setenv("NO_PROXY", ".cluster.local")
	cfg, err := parseConfig(nil, func(string) string { return "" }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for e := range cfg.controllers.ProxyEnv.All() {
		got[e.Name] = e.Value
	}
	if got["HTTPS_PROXY"] != "http://proxy.example:3128" || got["https_proxy"] != "http://proxy.example:3128" ||
		got["NO_PROXY"] != ".cluster.local" || got["no_proxy"] != ".cluster.local" {
		t.Errorf("proxy env = %v", cfg.controllers.ProxyEnv)
	}
}

func TestParseWatchNamespace(t *testing.T) {
	cases := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: nil},
		{in: " , ,", want: nil},
		{in: "team-a", want: []string{"team-a"}},
		{in: "team-b, team-a,team-b", want: []string{"team-a", "team-b"}},
		{in: "Team_A", wantErr: "not a valid namespace name"},
		{in: "a,-b", wantErr: "\"-b\" is not a valid namespace name"},
	}
	for _, c := range cases {
		got, err := parseWatchNamespace(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("parseWatchNamespace(%q) error = %v, want it to contain %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("parseWatchNamespace(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestDatabaseConfig(t *testing.T) {
	parse := func(args []string, env map[string]string) (*config, error) {
		return parseConfig(args, func(k string) string { return env[k] }, &bytes.Buffer{})
	}
	cfg, err := parse(nil, map[string]string{"DATABASE_DEFAULT_TARGET": "x", "DATABASE_RESYNC_PERIOD": "30s"})
	if err != nil || cfg.controllers.DatabaseDefaultTarget != "x" || cfg.controllers.DatabaseResyncPeriod != 30*time.Second {
		t.Errorf("env: %+v, %v", cfg, err)
	}
	cfg, err = parse([]string{"--database-default-target=y", "--database-resync-period=1m"},
		map[string]string{"DATABASE_DEFAULT_TARGET": "x", "DATABASE_RESYNC_PERIOD": "30s"})
	if err != nil || cfg.controllers.DatabaseDefaultTarget != "y" || cfg.controllers.DatabaseResyncPeriod != time.Minute {
		t.Errorf("flags win: %+v, %v", cfg, err)
	}
	if _, err := parse(nil, map[string]string{"DATABASE_RESYNC_PERIOD": "soon"}); err == nil {
		t.Error("a bad DATABASE_RESYNC_PERIOD was accepted")
	}
	if _, err := parse([]string{"--database-resync-period=-1m"}, nil); err == nil {
		t.Error("a negative resync period was accepted")
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := map[string]struct {
		args []string
		env  string
		want string
	}{
		"unknown flag":     {args: []string{"--no-such-flag"}, want: "flag provided but not defined"},
		"bad bool":         {args: []string{"--leader-elect=maybe"}, want: "invalid boolean value"},
		"stray argument":   {args: []string{"extra"}, want: "unexpected arguments"},
		"bad namespace":    {env: "Not_A_Namespace", want: "WATCH_NAMESPACE"},
		"negative workers": {args: []string{"--max-concurrent-reconciles=-1"}, want: "max-concurrent-reconciles"},
		"bad qps":          {args: []string{"--kube-api-qps=-1"}, want: "kube-api-qps"},
		"bad log level":    {args: []string{"--zap-log-level=loud"}, want: "zap-log-level"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := parseConfig(c.args, func(k string) string {
				if k == "WATCH_NAMESPACE" {
					return c.env
				}
				return ""
			}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("parseConfig(%v) = %v, want an error containing %q", c.args, err, c.want)
			}
		})
	}
	if _, err := parseConfig([]string{"--help"}, func(string) string { return "" }, &bytes.Buffer{}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v, want flag.ErrHelp", err)
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		want    int64
		wantErr bool
	}{
		{env: nil, want: 0},
		{env: map[string]string{"MEMORY_LIMIT": "268435456"}, want: 192 << 20},  // 256Mi less 64Mi
		{env: map[string]string{"MEMORY_LIMIT": "1073741824"}, want: 960 << 20}, // 1Gi less 64Mi
		{env: map[string]string{"MEMORY_LIMIT": "100000000"}, want: 50000000},   // never below half
		{env: map[string]string{"MEMORY_LIMIT": "268435456", "GOMEMLIMIT": "100MiB"}, want: 0},
		{env: map[string]string{"MEMORY_LIMIT": "256Mi"}, wantErr: true},
		{env: map[string]string{"MEMORY_LIMIT": "0"}, wantErr: true},
	} {
		got, err := memoryLimit(func(k string) string { return tc.env[k] })
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("memoryLimit(%v) = %d, %v; want %d, error %v", tc.env, got, err, tc.want, tc.wantErr)
		}
	}
	// Through parseConfig, as main uses it.
	cfg, err := parseConfig(nil, func(k string) string { return map[string]string{"MEMORY_LIMIT": "1000"}[k] }, &bytes.Buffer{})
	if err != nil || cfg.memoryLimit != 500 {
		t.Errorf("parseConfig with MEMORY_LIMIT=1000: limit %v, error %v; want 500", cfg, err)
	}
}

func TestGCPercent(t *testing.T) {
	if got := gcPercent(func(string) string { return "" }); got != defaultGCPercent {
		t.Errorf("gcPercent without GOGC = %d, want %d", got, defaultGCPercent)
	}
	if got := gcPercent(func(k string) string { return map[string]string{"GOGC": "200"}[k] }); got != 0 {
		t.Errorf("gcPercent with GOGC=200 = %d, want 0 (the runtime's own)", got)
	}
}

func TestLegacyTargetNames(t *testing.T) {
	for in, want := range map[string][]string{
		"":                       nil,
		"default=mariadb-target": {"default"},
		"default=mariadb-target,that-database=db": {"default", "that-database"},
		" a=s , ,b=t,=x": {"a", "b"},
	} {
		if got := legacyTargetNames(in); !reflect.DeepEqual(got, want) {
			t.Errorf("legacyTargetNames(%q) = %v, want %v", in, got, want)
		}
	}
}
