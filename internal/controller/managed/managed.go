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

// Package managed names what marks an object as operator101's: the label every object it creates carries, and
// the field manager of every server-side apply it makes.
package managed

import "k8s.io/apimachinery/pkg/labels"

// FieldManager is the field manager of every write operator101 makes with server-side apply.
const FieldManager = "operator101"

// The label every object operator101 creates carries (children and pods); the manager's cache holds only
// objects with it.
const (
	ByLabel = "app.kubernetes.io/managed-by"
	By      = "operator101"
)

// Selector selects the objects operator101 created.
func Selector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{ByLabel: By})
}
