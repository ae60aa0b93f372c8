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

package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GetConditions is the DatabaseUser's status conditions (conditions.Getter).
func (o *DatabaseUser) GetConditions() []metav1.Condition { return o.Status.Conditions }

// GetConditions is the Database's status conditions (conditions.Getter).
func (o *Database) GetConditions() []metav1.Condition { return o.Status.Conditions }

// GetConditions is the DatabaseTarget's status conditions (conditions.Getter).
func (o *DatabaseTarget) GetConditions() []metav1.Condition { return o.Status.Conditions }
