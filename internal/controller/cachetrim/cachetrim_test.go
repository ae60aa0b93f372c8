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

package cachetrim

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestControllerOnly: of the owner references only the controller's stays; a list that holds it alone is kept
// as it is, without a copy.
func TestControllerOnly(t *testing.T) {
	ctrl := metav1.OwnerReference{Kind: "MyWeb", Name: "web", UID: "u-1", Controller: ptr.To(true)}
	other := metav1.OwnerReference{Kind: "ConfigMap", Name: "cm", UID: "u-2", Controller: ptr.To(false)}
	plain := metav1.OwnerReference{Kind: "Secret", Name: "s", UID: "u-3"}
	if got := ControllerOnly(nil); got != nil {
		t.Errorf("none: %v", got)
	}
	if got := ControllerOnly([]metav1.OwnerReference{other, plain}); got != nil {
		t.Errorf("no controller: %v", got)
	}
	alone := []metav1.OwnerReference{ctrl}
	if got := ControllerOnly(alone); len(got) != 1 || cap(got) != 1 || &got[0] != &alone[0] {
		t.Errorf("the controller alone: %v, not the same list", got)
	}
	got := ControllerOnly([]metav1.OwnerReference{other, ctrl, plain})
	if len(got) != 1 || got[0].UID != "u-1" {
		t.Errorf("among others: %v, want the controller's only", got)
	}
}

// TestOwnerReferencesShareTheirKindAndFlags: two children of one kind share their reference's kind and flags.
func TestOwnerReferencesShareTheirKindAndFlags(t *testing.T) {
	in := NewInterner()
	ref := func(name string) []metav1.OwnerReference {
		return in.OwnerReferences([]metav1.OwnerReference{{Kind: strings.Clone("MyWeb"), Name: name,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false)}})
	}
	a, b := ref("web"), ref("web2")
	if unsafe.StringData(a[0].Kind) != unsafe.StringData(b[0].Kind) || a[0].Controller != b[0].Controller ||
		!*a[0].Controller || *a[0].BlockOwnerDeletion || a[0].Name != "web" {
		t.Errorf("two children's references share nothing: %+v, %+v", a[0], b[0])
	}
}

// TestConditionsShareTheirStrings: two objects decoded apart, with the same conditions, keep one copy of each
// condition's strings between them, in a slice of the conditions' exact number, and the same values.
func TestConditionsShareTheirStrings(t *testing.T) {
	const status = `[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable","message":"1 of 1 pods ready","observedGeneration":2,"lastTransitionTime":"2026-11-28T10:00:00Z"},` +
		`{"type":"Degraded","status":"False","reason":"AsExpected","message":"every child is as specified","observedGeneration":2,"lastTransitionTime":"2026-11-28T10:00:00Z"}]`
	decode := func() []metav1.Condition {
		var c []metav1.Condition
		if err := json.Unmarshal([]byte(status), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := decode(), decode()
	want := decode()
	in := NewInterner()
	a, b = in.Conditions(a), in.Conditions(b)
	if !reflect.DeepEqual(a, want) || cap(a) != len(want) {
		t.Fatalf("kept %+v (room for %d), want %+v", a, cap(a), want)
	}
	for i := range a {
		for _, pair := range [][2]string{{a[i].Type, b[i].Type}, {string(a[i].Status), string(b[i].Status)},
			{a[i].Reason, b[i].Reason}, {a[i].Message, b[i].Message}} {
			if unsafe.StringData(pair[0]) != unsafe.StringData(pair[1]) {
				t.Errorf("%q is kept twice", pair[0])
			}
		}
	}
	if in.Conditions(nil) != nil {
		t.Error("no conditions became some")
	}
}

// TestInternerIsBounded: past its bound, or for a long string, an interner gives back what it was given and
// keeps nothing more.
func TestInternerIsBounded(t *testing.T) {
	in := newInterner(2)
	first := in.Intern(strings.Clone("a"))
	if got := in.Intern(strings.Clone("a")); unsafe.StringData(got) != unsafe.StringData(first) {
		t.Error("a second copy of a kept string was not replaced")
	}
	in.Intern("b")
	c := strings.Clone("c")
	if got := in.Intern(c); unsafe.StringData(got) != unsafe.StringData(c) || len(in.m) != 2 {
		t.Errorf("past the bound: %d kept", len(in.m))
	}
	long := strings.Repeat("x", maxInternedLen+1)
	if got := newInterner(10).Intern(long); unsafe.StringData(got) != unsafe.StringData(long) {
		t.Error("a long string was copied")
	}
}
