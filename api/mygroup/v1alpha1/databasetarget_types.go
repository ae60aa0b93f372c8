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

// NamespacePlaceholder, in a DatabaseTarget's databases and userPrefix, stands for the DatabaseUser's namespace.
const NamespacePlaceholder = "${namespace}"

// Reasons of a DatabaseTarget's Ready condition.
const (
	ReasonConnected         = "Connected"
	ReasonUnsupportedServer = "UnsupportedServer"
	// ReasonTargetSecretInvalid, ReasonDatabaseUnreachable, ReasonAccessDenied and ReasonDatabaseError
	// (DatabaseUser's) also apply.
)

// ConditionAdminLoginProtected says whether tls.mode protects the admin login from whoever is on the network
// path: True (ReasonVerifiedTLS) under VerifyCA and VerifyFull, which check the server's certificate before
// the login; False (ReasonUnverifiedTLS), a warning, under Disabled and Required, where an impostor can take
// the login, or relay it to the server and act as the admin account, which manages every tenant's accounts.
// The target still works; Ready does not depend on it.
const ConditionAdminLoginProtected = "AdminLoginProtected"

// Reasons of a DatabaseTarget's AdminLoginProtected condition.
const (
	ReasonVerifiedTLS   = "VerifiedTLS"
	ReasonUnverifiedTLS = "UnverifiedTLS"
)

// TLSMode says how the operator secures its connection to a database server.
// +kubebuilder:validation:Enum=Disabled;Required;VerifyCA;VerifyFull
type TLSMode string

const (
	// TLSDisabled connects without TLS: the admin's handshake crosses the network in the clear. The password
	// is sent only as a scramble, or encrypted to the admin Secret's server-public-key.pem; the login can still
	// be relayed (AdminLoginProtected False).
	TLSDisabled TLSMode = "Disabled"
	// TLSRequired encrypts, without checking who the server is. The password is sent only as a scramble; the
	// login can still be relayed (AdminLoginProtected False).
	TLSRequired TLSMode = "Required"
	// TLSVerifyCA encrypts and checks the server's certificate chain against the admin Secret's ca.crt, not
	// its host name. It needs ca.crt: without one the target is refused (TargetSecretInvalid) and the operator
	// does not connect, since any publicly trusted certificate, for any name, would pass.
	TLSVerifyCA TLSMode = "VerifyCA"
	// TLSVerifyFull encrypts and checks the chain and that the certificate names the server.
	TLSVerifyFull TLSMode = "VerifyFull"
)

// DatabaseTargetTLS configures TLS to the server. The CA (ca.crt) and a client certificate (tls.crt, tls.key)
// are read from the admin Secret.
type DatabaseTargetTLS struct {
	// mode: Disabled, Required (encrypt only), VerifyCA (and check the chain against the Secret's ca.crt, which
	// it requires), VerifyFull (and the host name; against the system's roots when there is no ca.crt).
	// With any mode but Disabled, no credential is sent before TLS is up; the connection never falls back.
	// +kubebuilder:default=VerifyFull
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="TLS Mode",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Disabled","urn:alm:descriptor:com.tectonic.ui:select:Required","urn:alm:descriptor:com.tectonic.ui:select:VerifyCA","urn:alm:descriptor:com.tectonic.ui:select:VerifyFull"}
	Mode TLSMode `json:"mode,omitempty"`

	// serverName is the name the server's certificate must carry under VerifyFull (default: the Secret's host).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServerName string `json:"serverName,omitempty"`
}

// ExistingAccountsPolicy says what the operator does when a DatabaseUser names an account that exists in the
// server without a record that operator101 created it for that DatabaseUser.
// +kubebuilder:validation:Enum=Refuse;Adopt
type ExistingAccountsPolicy string

const (
	// ExistingAccountsRefuse leaves such an account untouched (reason AccountNotOwned).
	ExistingAccountsRefuse ExistingAccountsPolicy = "Refuse"
	// ExistingAccountsAdopt records it as the DatabaseUser's and manages it (for migrations), when every
	// privilege it holds fits the target's policy; any other is left untouched (reason AdoptionRefused).
	ExistingAccountsAdopt ExistingAccountsPolicy = "Adopt"
)

// SecretReference names a Secret.
type SecretReference struct {
	// namespace of the Secret: the namespace the operator is installed in.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Namespace string `json:"namespace"`
	// name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// ApplicationEndpoint is the address applications use to reach a target's server, as DatabaseUsers'
// connection Secrets publish it.
type ApplicationEndpoint struct {
	// host applications connect to (a Service's DNS name, say).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-.:a-zA-Z0-9\[\]]+$`
	// +required
	Host string `json:"host"`
	// port applications connect to.
	// +kubebuilder:default=3306
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`
	// tlsMode is what the ready-made forms of the connection Secret ask of the client's connection: Disabled,
	// Required, VerifyCA, VerifyFull (the default). The CA certificate published is the admin Secret's ca.crt.
	// +kubebuilder:default=VerifyFull
	// +optional
	TLSMode TLSMode `json:"tlsMode,omitempty"`
}

// DatabaseTargetSpec is a database server and what tenants may do in it, set by the cluster admin.
type DatabaseTargetSpec struct {
	// adminSecretRef is the Secret with the server's address and an admin account: keys host, port (default
	// 3306), username, password; for TLS also ca.crt, and tls.crt with tls.key for a client certificate; under
	// tls.mode Disabled, server-public-key.pem, the server's RSA key the admin password is encrypted to. It
	// must live in the namespace operator101 is installed in: an installation serves only the targets whose
	// Secret is in its own namespace.
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Admin Secret"
	AdminSecretRef SecretReference `json:"adminSecretRef"`

	// applications is the address applications use to reach the server, which DatabaseUsers' connection
	// Secrets publish; it may differ from the admin Secret's host, which tenants never see. Without it, a
	// DatabaseUser that asks for a connection Secret gets none (reason ConnectionNotPublished).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Address for Applications"
	Applications *ApplicationEndpoint `json:"applications,omitempty"`

	// requireTLS, when true, makes every account of this target require TLS (REQUIRE SSL), whatever its
	// DatabaseUser asks; an account that asks for a client certificate (X509) keeps that.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Require TLS of Every Account"
	RequireTLS bool `json:"requireTLS,omitempty"`

	// tls secures the connection to the server.
	// +kubebuilder:default={mode: VerifyFull}
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="TLS"
	TLS DatabaseTargetTLS `json:"tls,omitempty"`

	// allowedNamespaces are the namespaces whose DatabaseUsers may use this target; "*" allows every namespace.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$`
	// +listType=set
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Allowed Namespaces"
	AllowedNamespaces []string `json:"allowedNamespaces"`

	// databases are the databases accounts may be granted privileges on: names where `*` matches any run of
	// characters and ${namespace} is the DatabaseUser's namespace. The system schemas (mysql, sys,
	// information_schema, performance_schema) and operator101's own are never grantable.
	// +kubebuilder:default={"${namespace}","${namespace}_*"}
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	// +listType=set
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Databases"
	Databases []string `json:"databases"`

	// userPrefix, when set, is how every account name must begin (${namespace} is the DatabaseUser's
	// namespace), e.g. "${namespace}_".
	// +kubebuilder:validation:MaxLength=79
	// +optional
	UserPrefix string `json:"userPrefix,omitempty"`

	// existingAccounts: Refuse (the default) leaves an account that operator101 did not create for the
	// DatabaseUser untouched; Adopt takes it over (for a migration; set it back to Refuse afterwards), but only
	// when all it holds fits this policy: no global privilege but USAGE, no GRANT OPTION, role or proxy grant,
	// and database, table, column and routine grants only on the databases this target allows; any other
	// account is left as it is (reason AdoptionRefused). Only the accounts adoptableAccounts lists for the
	// DatabaseUser's namespace are ever adopted.
	// +kubebuilder:default=Refuse
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Existing Accounts",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Refuse","urn:alm:descriptor:com.tectonic.ui:select:Adopt"}
	ExistingAccounts ExistingAccountsPolicy `json:"existingAccounts,omitempty"`

	// adoptableAccounts is the cluster admin's record of whose each existing account is: under
	// existingAccounts: Adopt, a DatabaseUser adopts an account only when its user name is listed here for the
	// DatabaseUser's namespace, and for no other namespace. Without it, Adopt adopts nothing, so that no
	// allowed namespace can take over another team's account by naming it.
	// +kubebuilder:validation:MaxItems=256
	// +listType=map
	// +listMapKey=namespace
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Adoptable Accounts"
	AdoptableAccounts []AdoptableAccounts `json:"adoptableAccounts,omitempty"`
}

// AdoptableAccounts are the existing accounts one namespace's DatabaseUsers may adopt.
type AdoptableAccounts struct {
	// namespace whose DatabaseUsers may adopt the accounts.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Namespace string `json:"namespace"`
	// users are the accounts' user names, as they are (no pattern), whatever their host.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1024
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=80
	// +listType=set
	// +required
	Users []string `json:"users"`
}

// DatabaseTargetStatus is what the operator that serves the target last found.
type DatabaseTargetStatus struct {
	// conditions: Ready says whether the operator can log in to the server as the admin account, and if not,
	// why; Reconciling (the server does not answer yet, retried) and Stalled (a person must act) say it as
	// kstatus reads it (Flux, kpt).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// server is the flavour and version the server reported, e.g. "MariaDB 10.11.19".
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Server",xDescriptors={"urn:alm:descriptor:text"}
	Server string `json:"server,omitempty"`
}

// DatabaseTarget is a MySQL/MariaDB server that DatabaseUsers (label `target: <name>`) get accounts in, and
// the policy for them. It is cluster-scoped: the cluster admin creates it, tenants cannot.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=dbt,categories=operator101
// +operator-sdk:csv:customresourcedefinitions:displayName="Database Target",resources={{Secret,v1,secrets}}
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="the name is a label value on DatabaseUsers: at most 63 characters"
// +kubebuilder:printcolumn:name="Server",type=string,JSONPath=`.status.server`
// +kubebuilder:printcolumn:name="TLS",type=string,JSONPath=`.spec.tls.mode`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DatabaseTarget struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DatabaseTargetSpec `json:"spec"`
	// +optional
	Status DatabaseTargetStatus `json:"status,omitempty"`
}

// DatabaseTargetList is a list of DatabaseTargets.
// +kubebuilder:object:root=true
type DatabaseTargetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DatabaseTarget `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &DatabaseTarget{}, &DatabaseTargetList{})
		return nil
	})
}
