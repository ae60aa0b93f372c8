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
	"context"
	"os"
	"strings"
	"testing"
)

// TestServerHistory: -server-history measures each round on a server of its own, and a round's Services are
// deleted, their cluster IPs freed, before the next (what it compares is history, not objects still there).
func TestServerHistory(t *testing.T) {
	o := options{assets: os.Getenv("KUBEBUILDER_ASSETS"), crds: "../../../../config/crd/bases"}
	p := historyPlan{Servers: 1, Rounds: 2, Services: 30, Filler: 40}
	servers, err := serverHistory(context.Background(), o, p, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || len(servers[0]) != 2 {
		t.Fatalf("want 1 server of 2 rounds, got %v", servers)
	}
	for i, r := range servers[0] {
		if r.Seconds <= 0 || r.ServerCPUSeconds <= 0 {
			t.Errorf("round %d measured nothing: %+v", i+1, r)
		}
	}
	if md := historyMarkdown(p, servers); !strings.Contains(md, "| 1 | ") || !strings.Contains(md, "| round 2 |") {
		t.Errorf("the table lacks the server's row or the second round:\n%s", md)
	}
}
