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
	"reflect"
	"strings"
	"testing"

	"github.com/operator101/operator101/internal/controller/kit"
)

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

func TestOptionsCompleteAndCache(t *testing.T) {
	env := map[string]string{"WATCH_NAMESPACE": "ns2,ns1", "POD_NAMESPACE": "operators"}
	var o Options
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--kube-api-qps=25", "--kube-api-burst=40"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Complete(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if o.OperatorNamespace != "operators" || o.ClientQPS != 25 || o.ClientBurst != 40 {
		t.Errorf("options = %+v", o)
	}
	co := o.CacheOptions()
	if len(co.DefaultNamespaces) != 2 {
		t.Errorf("DefaultNamespaces = %v, want ns1 and ns2", co.DefaultNamespaces)
	}
	for _, ns := range []string{"ns1", "ns2"} {
		if _, ok := co.DefaultNamespaces[ns]; !ok {
			t.Errorf("DefaultNamespaces lacks %s: %v", ns, co.DefaultNamespaces)
		}
	}
	if co.DefaultTransform == nil {
		t.Error("the cache has no transform trimming managedFields")
	}
	if len(co.ByObject) != 4 {
		t.Errorf("the cache scopes %d child kinds by label, want ConfigMaps, Services, Pods and Deployments", len(co.ByObject))
	}
	for obj, by := range co.ByObject {
		if by.Label == nil || by.Label.String() != kit.ManagedBySelector().String() {
			t.Errorf("%T cached with selector %v, want %s", obj, by.Label, kit.ManagedBySelector())
		}
		if by.Transform == nil {
			t.Errorf("%T cached whole: it has no transform of its own", obj)
		}
	}

	all := Options{MaxConcurrentReconciles: 1, MaxConcurrentAtReconciles: 1, ClientQPS: 1, ClientBurst: 1}
	if err := all.Complete(func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if got := all.CacheOptions().DefaultNamespaces; got != nil {
		t.Errorf("empty WATCH_NAMESPACE must watch all namespaces, got %v", got)
	}
}

func TestOptionsRejectsBadValues(t *testing.T) {
	cases := map[string]struct {
		args []string
		env  string
		want string
	}{
		"zero workers":    {args: []string{"--max-concurrent-reconciles=0"}, want: "max-concurrent-reconciles"},
		"zero At workers": {args: []string{"--max-concurrent-at-reconciles=0"}, want: "max-concurrent-at-reconciles"},
		"bad qps":         {args: []string{"--kube-api-qps=-1"}, want: "kube-api-qps"},
		"bad namespace":   {env: "UPPER", want: "WATCH_NAMESPACE"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var o Options
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			o.BindFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			err := o.Complete(func(k string) string {
				if k == "WATCH_NAMESPACE" {
					return c.env
				}
				return ""
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Complete() = %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}
