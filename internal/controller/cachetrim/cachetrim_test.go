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
	"testing"

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
