//go:build faults

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

package faults

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// auditLine is one ResponseComplete audit event of a pod creation, as kube-apiserver writes it.
func auditLine(id, name string, code int, message string, uid types.UID) string {
	resp := ""
	if uid != "" {
		resp = `,"responseObject":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"work","uid":"` + string(uid) + `"}}`
	}
	return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"` + id + `","stage":"ResponseComplete",` +
		`"verb":"create","objectRef":{"resource":"pods","namespace":"work","apiVersion":"v1"},` +
		`"responseStatus":{"metadata":{},"message":"` + message + `","code":` + strconv.Itoa(code) + `},` +
		`"requestObject":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"work"}}` + resp + `}`
}

// The oracle of TestKillTheOperatorAtRandomPoints counts pods by UID: a creation whose client was killed
// ("500 client disconnected", no pod in the log) but which made the pod the kubelet then ran counts once, as
// CI once saw for at-15 ("0 pods created, want 1" while it was DONE); two distinct pods for one At still count
// two, whichever way each was seen; a pod of no At is a stray.
func TestPodOracleCountsByUID(t *testing.T) {
	log := strings.Join([]string{
		auditLine("1", "at-1-pod", 201, "", "uid-a"),                // plain
		auditLine("2", "at-15-pod", 500, "client disconnected", ""), // made the pod, answer lost
		auditLine("3", "at-15-pod", 409, "already exists", ""),      // the next manager's try: adopted
		auditLine("4", "at-2-pod", 201, "", "uid-b"),                // a first run ...
		auditLine("5", "at-2-pod", 201, "", "uid-c"),                // ... and a second: must fail
		auditLine("6", "at-3-pod", 500, "client disconnected", ""),  // made a pod ...
		auditLine("7", "at-3-pod", 201, "", "uid-e"),                // ... and, that one deleted, another
		auditLine("8", "at-4-pod", 500, "client disconnected", ""),  // killed before its body was read: no pod
		auditLine("9", "at-4-pod", 201, "", "uid-f"),
		auditLine("10", "stray-pod", 201, "", "uid-g"),
	}, "\n")
	creates, err := parsePodCreations(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]map[types.UID]bool{}
	for key, uid := range map[string]types.UID{"work/at-1-pod": "uid-a", "work/at-15-pod": "uid-x", "work/at-2-pod": "uid-c",
		"work/at-4-pod": "uid-f"} {
		addUID(seen, key, uid)
	}
	addUID(seen, "work/at-3-pod", "uid-d") // the kubelet saw both pods of at-3
	addUID(seen, "work/at-3-pod", "uid-e")

	perAt, unanswered, strays := podsPerAt("work", []string{"at-1", "at-15", "at-2", "at-3", "at-4"}, creates, seen)
	want := map[string]int{"at-1": 1, "at-15": 1, "at-2": 2, "at-3": 2, "at-4": 1}
	for name, n := range want {
		if got := len(perAt[name]); got != n {
			t.Errorf("%s: %d pods (%v), want %d", name, got, keys(perAt[name]), n)
		}
	}
	if unanswered != 2 { // uid-x of at-15, uid-d of at-3
		t.Errorf("unanswered = %d, want 2", unanswered)
	}
	if len(strays) != 1 || !strays["work/stray-pod"]["uid-g"] {
		t.Errorf("strays = %v", strays)
	}
	if creates.disconnected["work/at-15-pod"] != 1 || creates.created["work/at-2-pod"] != 2 {
		t.Errorf("creations: %+v", creates)
	}

	// A 201 whose log holds no pod still counts as a pod of its own: the oracle never counts too few.
	creates, err = parsePodCreations(strings.NewReader(auditLine("11", "at-5-pod", 201, "", "")))
	if err != nil {
		t.Fatal(err)
	}
	perAt, _, _ = podsPerAt("work", []string{"at-5"}, creates, map[string]map[types.UID]bool{"work/at-5-pod": {"uid-h": true}})
	if len(perAt["at-5"]) != 2 {
		t.Errorf("a 201 without a UID beside a pod the kubelet saw: %v, want both counted", perAt["at-5"])
	}
}
