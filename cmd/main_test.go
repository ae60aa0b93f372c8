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

package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
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
	if c := cfg.controllers; c.ClientQPS != 200 || c.ClientBurst != 400 || c.MaxConcurrentReconciles != 4 ||
		c.MaxConcurrentAtReconciles != 16 {
		t.Errorf("client defaults: qps %v burst %d workers %d, At workers %d; want 200, 400, 4, 16 (docs/performance.md)",
			c.ClientQPS, c.ClientBurst, c.MaxConcurrentReconciles, c.MaxConcurrentAtReconciles)
	}
	if cfg.memoryLimit != 0 {
		t.Errorf("memory limit %d without MEMORY_LIMIT", cfg.memoryLimit)
	}
}

func TestParseConfigFlagsAndEnv(t *testing.T) {
	env := map[string]string{"WATCH_NAMESPACE": "a,b", "POD_NAMESPACE": "ops"}
	cfg, err := parseConfig([]string{"--leader-elect=false", "--zap-devel", "--zap-log-level=debug",
		"--metrics-bind-address=0", "--max-concurrent-reconciles=8"}, func(k string) string { return env[k] }, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.leaderElect || !cfg.zap.Development || cfg.metricsAddr != "0" || cfg.controllers.MaxConcurrentReconciles != 8 {
		t.Errorf("flags not applied: %+v", cfg)
	}
	if got := cfg.controllers.WatchNamespaceList(); len(got) != 2 || got[0] != "a" {
		t.Errorf("watch namespaces = %v", got)
	}
	if cfg.controllers.OperatorNamespace != "ops" {
		t.Errorf("operator namespace = %q", cfg.controllers.OperatorNamespace)
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := map[string]struct {
		args []string
		env  string
		want string
	}{
		"unknown flag":   {args: []string{"--no-such-flag"}, want: "flag provided but not defined"},
		"bad bool":       {args: []string{"--leader-elect=maybe"}, want: "invalid boolean value"},
		"stray argument": {args: []string{"extra"}, want: "unexpected arguments"},
		"bad namespace":  {env: "Not_A_Namespace", want: "WATCH_NAMESPACE"},
		"bad log level":  {args: []string{"--zap-log-level=loud"}, want: "zap-log-level"},
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
