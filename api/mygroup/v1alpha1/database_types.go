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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DatabaseFinalizer keeps a Database until its database is dropped (cleanupPolicy Delete) or its claim is
// released (Skip).
const DatabaseFinalizer = "mygroup.handsomeguy.cn/database"

// Reasons of a Database's Ready condition besides those it shares with DatabaseUser (Ready, UnknownTarget,
// TargetNotServed, TargetSecretInvalid, TargetNotAllowed, DatabaseUnreachable, AccessDenied, DatabaseError,
// UnsupportedServer).
const (
	// ReasonDatabaseNotAllowed: the name is outside the target's databases for the namespace, or a system schema.
	ReasonDatabaseNotAllowed = "DatabaseNotAllowed"
	// ReasonDatabaseNotOwned: the database exists and operator101 did not create it for this Database, or its
	// name is claimed by another Database; it is never altered or dropped.
	ReasonDatabaseNotOwned = "DatabaseNotOwned"
	// ReasonInvalidDatabase: the server refused the name, the character set or the collation.
	ReasonInvalidDatabase = "InvalidDatabase"
)

// DatabaseSpec is the database a team asks for.
// +kubebuilder:validation:XValidation:rule="self.name == oldSelf.name",message="name is immutable: create a new Database"
type DatabaseSpec struct {
	// name is the database's name on the server, taken literally (`_` and `%` are not wildcards). The
	// DatabaseTarget's `databases` must allow it for the namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.endsWith(' ')",message="name must not end with a space"
	// +kubebuilder:validation:XValidation:rule="!self.contains('\\u0000')",message="name must not contain NUL"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Name",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Name string `json:"name"`

	// characterSet is the database's default character set (unset: the server's default when created, and
	// never changed).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Character Set",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	CharacterSet string `json:"characterSet,omitempty"`

	// collation is the database's default collation; it must belong to characterSet when both are set (unset:
	// the character set's default).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_]+$`
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Collation",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	Collation string `json:"collation,omitempty"`

	// cleanupPolicy says whether deleting the Database drops the database and all its data (Delete) or keeps
	// it (Skip, the default). Either way only a database operator101 created for this Database is dropped.
	// +kubebuilder:default=Skip
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Cleanup Policy",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Skip","urn:alm:descriptor:com.tectonic.ui:select:Delete"}
	CleanupPolicy CleanupPolicy `json:"cleanupPolicy,omitempty"`
}

// DatabaseStatus is what the operator last saw.
type DatabaseStatus struct {
	// conditions: Ready says whether the database exists as the spec says, and if not, why; Reconciling and
	// Stalled say it as kstatus reads it (Flux, kpt).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// target is the database target the database was last reconciled in.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Target",xDescriptors={"urn:alm:descriptor:text"}
	Target string `json:"target,omitempty"`
}

// Database is a MySQL/MariaDB database of the tenant's own, created by the operator in the database server the
// `target` label picks (as a DatabaseUser's), within the DatabaseTarget's `databases` policy.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mydb,categories=operator101
// +operator-sdk:csv:customresourcedefinitions:displayName="Database",resources={{Event,v1,events}}
// +kubebuilder:printcolumn:name="Database",type=string,JSONPath=`.spec.name`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.target`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Database struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DatabaseSpec `json:"spec"`
	// +optional
	Status DatabaseStatus `json:"status,omitempty"`
}

// DatabaseList is a list of Databases.
// +kubebuilder:object:root=true
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Database `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &Database{}, &DatabaseList{})
		return nil
	})
}
