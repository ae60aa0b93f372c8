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

package myweb

// What the tests of package operator_test reach that the operator keeps unexported.

// PageHashAnnotation is the pod template annotation that rolls the pods when the page changes.
const PageHashAnnotation = pageHashAnnotation

// PageHash is the value of PageHashAnnotation for a page.
var PageHash = pageHash

// PodLabels are the labels of a MyWeb's pods, which its Service and the scale subresource's selector select.
var PodLabels = podLabels
