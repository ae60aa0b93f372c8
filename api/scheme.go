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

// Package api gathers the API groups that operator101 serves.
package api

import (
	"k8s.io/apimachinery/pkg/runtime"

	appv1 "github.com/operator101/operator101/api/app/v1"
	batchv1alpha1 "github.com/operator101/operator101/api/batch/v1alpha1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
)

var builder = runtime.NewSchemeBuilder(
	operatorv1.AddToScheme,
	cnatv1alpha1.AddToScheme,
	mygroupv1alpha1.AddToScheme,
	appv1.AddToScheme,
	batchv1alpha1.AddToScheme,
)

// AddToScheme registers every operator101 API group with a scheme.
var AddToScheme = builder.AddToScheme
