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
	"errors"
	"strings"
	"testing"

	"github.com/operator101/operator101/test/bench/benchutil"
)

// TestMachineCPUTable: the table adds up what the API server, the contender and the bench spent in the
// convergence, per object, and spreads the sum over the machine's cores.
func TestMachineCPUTable(t *testing.T) {
	r := Report{Machine: Machine{CPUs: 2}, Sizes: []SizeResult{{
		Plan:        benchutil.PlanFor(1000),
		LowerBound:  []LowerBoundRun{{Workers: 8, Objects: 2000, Seconds: 20, ServerCPUSeconds: 30, ClientCPUSeconds: 6}},
		LowerBoundW: 8, LowerBoundBest: 20,
		ServerCPUSeconds: 40, OwnCPUSeconds: 10, BenchCPUSeconds: 5, ConvergenceSeconds: 30,
	}}}
	md := r.Markdown()
	for _, want := range []string{
		"| 1000 | lower bound (8 workers) | 15.0 | 3.0 | 0.0 | 18.0 | 18.0 | 20.0 |",
		"| 1000 | operator101 | 20.0 | 5.0 | 2.5 | 27.5 | 27.5 | 30.0 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the machine's CPU table lacks %q:\n%s", want, md)
		}
	}
}

// TestEtcdReadsPerObject: the side-by-side table gives the reads the API server sent to etcd per object, and
// no figure where they were not counted.
func TestEtcdReadsPerObject(t *testing.T) {
	r := Report{Machine: Machine{CPUs: 2}, Sizes: []SizeResult{{
		Plan:        benchutil.PlanFor(1000),
		LowerBound:  []LowerBoundRun{{Workers: 8, Objects: 2000, Seconds: 20, EtcdReads: -1}},
		LowerBoundW: 8, LowerBoundBest: 20,
		Peer:      &Contender{ConvergenceSeconds: 40, EtcdReads: 500},
		EtcdReads: 2000, ConvergenceSeconds: 30,
	}}}
	md := r.Markdown()
	for _, want := range []string{
		"| 1000 | lower bound (8 workers) | 20.0 | 1.00 | - | 0.0 | 0.00 / 0.00 | 0.00 (0.00) | – |", // not counted
		"| 1000 | peer (tutorial style) | 40.0 | - | - | 0.0 | 0.00 / 0.00 | 0.00 (0.00) | 0.25 |",   // 500 reads, 2000 objects
		"| 1000 | operator101 | 30.0 | - | - | 0.0 | 0.00 / 0.00 | 0.00 (0.00) | 1.00 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the side-by-side table lacks %q:\n%s", want, md)
		}
	}
}

// TestWatchersClosed: the watches the API server closed are what its counter gained in the window, by
// resource; the report tells none from not counted.
func TestWatchersClosed(t *testing.T) {
	got := watchersClosed(map[string]float64{"ats": 2, "pods": 1}, map[string]float64{"ats": 5, "pods": 1, "mywebs": 1})
	if len(got) != 2 || got["ats"] != 3 || got["mywebs"] != 1 {
		t.Errorf("closed %v, want ats 3 and mywebs 1 (pods did not change)", got)
	}
	if watchersClosed(nil, map[string]float64{"ats": 1}) != nil {
		t.Error("a count missing at the start must give no figure, not a difference from zero")
	}
	r := Report{Machine: Machine{CPUs: 2}, Sizes: []SizeResult{
		{Plan: benchutil.PlanFor(1000), WatchersClosed: map[string]float64{}, At: &AtResult{WatchersClosed: got}},
		{Plan: benchutil.PlanFor(3000), At: &AtResult{}},
	}}
	md := r.Markdown()
	for _, want := range []string{
		"- N=1000: in the convergence none; in the At phase ats 3, mywebs 1\n",
		"- N=3000: in the convergence not counted; in the At phase not counted\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

// TestReportNamesCommit: the report's first line names the tree the binaries were built from, or says that
// none was given.
func TestReportNamesCommit(t *testing.T) {
	for commit, want := range map[string]string{"f5dbdd1+dirty": "; commit f5dbdd1+dirty;", "": "; commit not given;"} {
		first, _, _ := strings.Cut(Report{Commit: commit}.Markdown(), "\n")
		if !strings.Contains(first, want) {
			t.Errorf("commit %q: first line %q lacks %q", commit, first, want)
		}
	}
}

// TestReportSaysRoutes: a -routes run says, under its first line, that the objects had all six children and
// that the manager ran alone; another run says nothing of it.
func TestReportSaysRoutes(t *testing.T) {
	const want = "Every MyWeb and AppService with an Ingress, an HTTPRoute and 2 replicas"
	if md := (Report{Routes: true}).Markdown(); !strings.Contains(md, want) {
		t.Errorf("a -routes report lacks %q:\n%s", want, md)
	}
	if md := (Report{}).Markdown(); strings.Contains(md, want) {
		t.Errorf("a report without -routes says %q", want)
	}
}

// TestWithRoutes: -routes installs the Gateway API's CRDs beside operator101's and runs the manager alone; when
// the CRDs cannot be found it fails rather than run without them.
func TestWithRoutes(t *testing.T) {
	o := options{crds: "config/crd/bases"}
	if err := withRoutes(&o, func() ([]string, error) { return []string{"httproutes.yaml", "gateways.yaml"}, nil }); err != nil {
		t.Fatal(err)
	}
	if len(o.extraCRDs) != 2 || !o.skipLower || !o.skipPeer || o.crds != "config/crd/bases" {
		t.Errorf("options %+v: want the two CRD files, no lower bound and no peer", o)
	}
	o = options{}
	if err := withRoutes(&o, func() ([]string, error) { return nil, errors.New("no module") }); err == nil || len(o.extraCRDs) != 0 {
		t.Errorf("withRoutes without the CRDs: %v, %+v", err, o)
	}
}
