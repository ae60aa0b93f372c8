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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TargetLabel picks the DatabaseTarget a DatabaseUser's account lives in. Without it, the operator's default
// target (a DatabaseTarget named "default" unless configured otherwise) is used.
const TargetLabel = "target"

// Finalizer keeps a DatabaseUser until its account is dropped from the database.
const Finalizer = "mygroup.handsomeguy.cn/databaseuser"

// ConditionReady is the condition that says whether the account exists as the spec says.
const ConditionReady = "Ready"

// Reasons of the Ready condition. Each names one cause a person can act on.
const (
	ReasonReady               = "Ready"
	ReasonUnknownTarget       = "UnknownTarget"
	ReasonTargetSecretInvalid = "TargetSecretInvalid"
	ReasonSecretNotFound      = "SecretNotFound"
	ReasonKeyNotFound         = "KeyNotFound"
	ReasonDatabaseUnreachable = "DatabaseUnreachable"
	ReasonAccessDenied        = "AccessDenied"
	ReasonInvalidUser         = "InvalidUser"
	ReasonInvalidGrant        = "InvalidGrant"
	ReasonDatabaseError       = "DatabaseError"
	// ReasonTargetNotServed: the target's admin Secret is not in this operator's namespace.
	ReasonTargetNotServed = "TargetNotServed"
	// ReasonTargetNotAllowed: the target's allowedNamespaces do not include the DatabaseUser's namespace.
	ReasonTargetNotAllowed = "TargetNotAllowed"
	// ReasonUserNotAllowed: the user name lacks the target's userPrefix.
	ReasonUserNotAllowed = "UserNotAllowed"
	// ReasonGrantNotAllowed: a grant names a database outside the target's databases, or a system schema.
	ReasonGrantNotAllowed = "GrantNotAllowed"
	// ReasonAccountNotOwned: the account exists and operator101 did not create it for this DatabaseUser.
	ReasonAccountNotOwned = "AccountNotOwned"
	// ReasonAccountReserved: root, the target's admin, mysql.*, mariadb.sys, PUBLIC or the anonymous user.
	ReasonAccountReserved = "AccountReserved"
	// ReasonPasswordTooLong: the Secret's password is longer than the target's server accepts (MySQL's
	// caching_sha2_password: 256 bytes); refused before it is hashed, the account left as it is.
	ReasonPasswordTooLong = "PasswordTooLong"
	// ReasonAdoptionRefused: the target's existingAccounts is Adopt and the account exists without a claim,
	// but it holds privileges beyond the target's policy (global privileges, GRANT OPTION, roles, proxy
	// grants, or grants outside the target's databases); it is left as it is.
	ReasonAdoptionRefused = "AdoptionRefused"
	// ReasonChildNotOwned: a Secret the operator writes for the DatabaseUser (its generated password, its
	// connection Secret) exists and the DatabaseUser does not control it; it is left as it is.
	ReasonChildNotOwned = "ChildNotOwned"
	// ReasonConnectionNotPublished: spec.connectionSecret is set and the DatabaseTarget publishes no address
	// for applications (spec.applications); the account itself is made.
	ReasonConnectionNotPublished = "ConnectionNotPublished"
	// ReasonSecretWriteFailed: the API server refused a Secret the operator writes for the DatabaseUser (its
	// generated password, its connection Secret); retried with backoff.
	ReasonSecretWriteFailed = "SecretWriteFailed"
)

// CleanupPolicy says what happens to the account when its DatabaseUser is deleted.
// +kubebuilder:validation:Enum=Delete;Skip
type CleanupPolicy string

const (
	// CleanupDelete drops the account (the default).
	CleanupDelete CleanupPolicy = "Delete"
	// CleanupSkip leaves the account in the database.
	CleanupSkip CleanupPolicy = "Skip"
)

// Privilege is a database-level privilege. Only these are allowed: global privileges (SUPER, FILE, ...) and
// GRANT OPTION are never handed out through a DatabaseUser.
// +kubebuilder:validation:Enum="ALL PRIVILEGES";SELECT;INSERT;UPDATE;DELETE;CREATE;DROP;REFERENCES;INDEX;ALTER;"CREATE TEMPORARY TABLES";"LOCK TABLES";"CREATE VIEW";"SHOW VIEW";"CREATE ROUTINE";"ALTER ROUTINE";EXECUTE;EVENT;TRIGGER;"DELETE HISTORY"
type Privilege string

// Grant gives privileges on every table of one database.
type Grant struct {
	// database is the name of the database, taken literally (`_` and `%` are not wildcards).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.endsWith(' ')",message="database must not end with a space"
	// +kubebuilder:validation:XValidation:rule="!self.contains('\\u0000')",message="database must not contain NUL"
	// +required
	Database string `json:"database"`

	// privileges on that database; ALL PRIVILEGES means every database-level privilege.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=set
	// +required
	Privileges []Privilege `json:"privileges"`
}

// GeneratedPasswordKey is the key of the password in the Secret the operator generates when spec.password is
// unset; GeneratedPasswordSuffix ends its name (`<metadata.name>-password`).
const (
	GeneratedPasswordKey    = "password"
	GeneratedPasswordSuffix = "-password"
)

// ConnectionSecret is the Secret applications read to connect.
type ConnectionSecret struct {
	// name of the Secret, in the DatabaseUser's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name"`

	// database is the database the connection opens (default: the first grant's database; none when there is
	// no grant).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Database string `json:"database,omitempty"`

	// secretTemplate: the Secret's extra labels and annotations, and the names of its keys.
	// +kubebuilder:default={usernameKey: username, passwordKey: password, hostKey: host, portKey: port, databaseKey: database, caCertKey: "ca.crt", uriKey: uri, dsnKey: dsn, jdbcKey: jdbcUrl}
	// +optional
	SecretTemplate ConnectionSecretTemplate `json:"secretTemplate,omitempty"`
}

// SecretKeyName is the name of a key in a Secret.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
type SecretKeyName string

// ConnectionSecretTemplate shapes the connection Secret, as mariadb-operator's secretTemplate does.
// +kubebuilder:validation:XValidation:rule="[self.usernameKey, self.passwordKey, self.hostKey, self.portKey, self.databaseKey, self.caCertKey, self.uriKey, self.dsnKey, self.jdbcKey].all(k, [self.usernameKey, self.passwordKey, self.hostKey, self.portKey, self.databaseKey, self.caCertKey, self.uriKey, self.dsnKey, self.jdbcKey].filter(j, j == k).size() == 1)",message="the key names must differ"
type ConnectionSecretTemplate struct {
	// labels added to the Secret's (the operator's own label, app.kubernetes.io/managed-by, is kept).
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// annotations added to the Secret's.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// usernameKey holds the user name.
	// +kubebuilder:default=username
	// +optional
	UsernameKey SecretKeyName `json:"usernameKey,omitempty"`
	// passwordKey holds the password.
	// +kubebuilder:default=password
	// +optional
	PasswordKey SecretKeyName `json:"passwordKey,omitempty"`
	// hostKey holds the host applications connect to.
	// +kubebuilder:default=host
	// +optional
	HostKey SecretKeyName `json:"hostKey,omitempty"`
	// portKey holds the port.
	// +kubebuilder:default=port
	// +optional
	PortKey SecretKeyName `json:"portKey,omitempty"`
	// databaseKey holds the database (empty when there is none).
	// +kubebuilder:default=database
	// +optional
	DatabaseKey SecretKeyName `json:"databaseKey,omitempty"`
	// caCertKey holds the CA certificate(s) that verify the server (empty when the target has none).
	// +kubebuilder:default=ca.crt
	// +optional
	CACertKey SecretKeyName `json:"caCertKey,omitempty"`
	// uriKey holds a mysql:// URI with the user, password, database and ssl-mode.
	// +kubebuilder:default=uri
	// +optional
	URIKey SecretKeyName `json:"uriKey,omitempty"`
	// dsnKey holds a DSN for Go's github.com/go-sql-driver/mysql.
	// +kubebuilder:default=dsn
	// +optional
	DSNKey SecretKeyName `json:"dsnKey,omitempty"`
	// jdbcKey holds a JDBC URL for the server's flavour (jdbc:mariadb:// or jdbc:mysql://).
	// +kubebuilder:default=jdbcUrl
	// +optional
	JDBCKey SecretKeyName `json:"jdbcKey,omitempty"`
}

// AccountRequire is the kind of connection an account requires.
// +kubebuilder:validation:Enum=None;SSL;X509
type AccountRequire string

const (
	// AccountRequireNone: any connection, with or without TLS (unless the target requires TLS).
	AccountRequireNone AccountRequire = "None"
	// AccountRequireSSL: TLS (REQUIRE SSL).
	AccountRequireSSL AccountRequire = "SSL"
	// AccountRequireX509: TLS and a client certificate the server's CA verifies (REQUIRE X509), with subject and
	// issuer when set (REQUIRE SUBJECT ... AND ISSUER ...).
	AccountRequireX509 AccountRequire = "X509"
)

// AccountTLS is what an account requires of its connections.
// +kubebuilder:validation:XValidation:rule="self.require == 'X509' || (!has(self.subject) && !has(self.issuer))",message="subject and issuer need require: X509"
type AccountTLS struct {
	// require: None, SSL (TLS), or X509 (TLS and a client certificate the server's CA verifies).
	// +kubebuilder:default=SSL
	// +optional
	Require AccountRequire `json:"require,omitempty"`
	// subject the client certificate must carry, as the server prints it ("/O=Example/CN=app").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[^'\\\x00-\x1f\x7f]+$`
	// +optional
	Subject string `json:"subject,omitempty"`
	// issuer of the client certificate, as the server prints it ("/O=Example/CN=Example CA").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[^'\\\x00-\x1f\x7f]+$`
	// +optional
	Issuer string `json:"issuer,omitempty"`
}

// DatabaseUserSpec is the account a team asks for.
// +kubebuilder:validation:XValidation:rule="self.user == oldSelf.user",message="user is immutable: create a new DatabaseUser"
// +kubebuilder:validation:XValidation:rule="(has(self.host) ? self.host : '%') == (has(oldSelf.host) ? oldSelf.host : '%')",message="host is immutable: create a new DatabaseUser"
type DatabaseUserSpec struct {
	// user is the account name in the database (MariaDB allows up to 80 characters).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=80
	// +kubebuilder:validation:XValidation:rule="!self.endsWith(' ')",message="user must not end with a space"
	// +kubebuilder:validation:XValidation:rule="!self.contains('\\u0000')",message="user must not contain NUL"
	// +required
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="User",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	User string `json:"user"`

	// password selects the key of a Secret, in the DatabaseUser's namespace, that holds the password.
	// Changing the Secret rotates the password within one resync period. When unset, the operator generates
	// a strong password into the Secret `<metadata.name>-password` (key `password`), which it creates, owns and
	// never overwrites while it holds a password; deleting that Secret rotates the password.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.name) || self.name.size() <= 253",message="password.name must be a Secret name of at most 253 characters"
	// +kubebuilder:validation:XValidation:rule="self.key.size() <= 253",message="password.key must be a Secret key of at most 253 characters"
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Password Secret"
	Password *corev1.SecretKeySelector `json:"password,omitempty"`

	// host is the host part of the account ('%' is any host).
	// +kubebuilder:default="%"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self == self.lowerAscii()",message="host must be lower case"
	// +kubebuilder:validation:XValidation:rule="!self.endsWith(' ') && !self.contains('\\u0000')",message="host must not end with a space or contain NUL"
	// +optional
	Host string `json:"host,omitempty"`

	// grants are the database-level privileges of the account, exactly: privileges granted by hand on
	// other databases, or not listed here, are revoked.
	// +listType=map
	// +listMapKey=database
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Grants []Grant `json:"grants,omitempty"`

	// maxUserConnections limits the account's simultaneous connections (0 or unset: no limit).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Max User Connections",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number","urn:alm:descriptor:com.tectonic.ui:advanced"}
	MaxUserConnections *int32 `json:"maxUserConnections,omitempty"`

	// connectionSecret, when set, is the Secret the operator writes in the DatabaseUser's namespace for
	// applications: the address the DatabaseTarget publishes for them, the user, the password, the database,
	// the CA certificate that verifies the server, and ready-made forms (a mysql:// URI, a Go DSN, a JDBC URL).
	// A Secret of that name that the operator did not create is never overwritten (reason ChildNotOwned).
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Connection Secret"
	ConnectionSecret *ConnectionSecret `json:"connectionSecret,omitempty"`

	// maxQueriesPerHour limits the statements the account may run per hour (0 or unset: no limit).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	MaxQueriesPerHour *int32 `json:"maxQueriesPerHour,omitempty"`

	// maxUpdatesPerHour limits the statements that change data the account may run per hour (0 or unset: no
	// limit).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	MaxUpdatesPerHour *int32 `json:"maxUpdatesPerHour,omitempty"`

	// maxConnectionsPerHour limits the connections the account may open per hour (0 or unset: no limit).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	MaxConnectionsPerHour *int32 `json:"maxConnectionsPerHour,omitempty"`

	// tls is what the account requires of its clients' connections (REQUIRE SSL, X509, SUBJECT, ISSUER); the
	// DatabaseTarget's requireTLS may require TLS of it anyway. Client certificates are the tenant's to bring.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="TLS Required"
	TLS *AccountTLS `json:"tls,omitempty"`

	// cleanupPolicy says whether deleting the DatabaseUser drops the account (Delete) or keeps it (Skip).
	// +kubebuilder:default=Delete
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Cleanup Policy",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Delete","urn:alm:descriptor:com.tectonic.ui:select:Skip"}
	CleanupPolicy CleanupPolicy `json:"cleanupPolicy,omitempty"`
}

// DatabaseUserStatus is what the operator last saw.
type DatabaseUserStatus struct {
	// conditions: Ready says whether the account matches the spec, and if not, why; Reconciling (the server
	// does not answer yet, retried) and Stalled (a person must act) say it as kstatus reads it (Flux, kpt).
	// +listType=map
	// +listMapKey=type
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// target is the database target the account was last reconciled in.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Target",xDescriptors={"urn:alm:descriptor:text"}
	Target string `json:"target,omitempty"`

	// lastCheckedTime is when the operator last found the account matching the spec in the database.
	// It is refreshed at most once per status refresh interval (one hour by default), so that a converged
	// DatabaseUser costs no write on every resync.
	// +optional
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last Checked",xDescriptors={"urn:alm:descriptor:timestamp"}
	LastCheckedTime *metav1.Time `json:"lastCheckedTime,omitempty"`
}

// DatabaseUser is a MySQL/MariaDB account managed by the operator, in the database the `target` label picks.
// +kubebuilder:object:root=true
// +kubebuilder:validation:XValidation:rule="has(self.spec.password) || self.metadata.name.size() <= 244",message="without spec.password the name is at most 244 characters: the generated password's Secret is <name>-password"
// +kubebuilder:validation:XValidation:rule="has(self.spec.password) || !has(self.spec.connectionSecret) || self.spec.connectionSecret.name != self.metadata.name + '-password'",message="spec.connectionSecret.name must differ from <name>-password, the generated password's Secret"
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=dbu,categories=operator101
// +operator-sdk:csv:customresourcedefinitions:displayName="Database User",resources={{Secret,v1,secrets},{Event,v1,events}}
// +kubebuilder:printcolumn:name="User",type=string,JSONPath=`.spec.user`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.target`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DatabaseUser struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec DatabaseUserSpec `json:"spec"`
	// +optional
	Status DatabaseUserStatus `json:"status,omitempty"`
}

// DatabaseUserList is a list of DatabaseUsers.
// +kubebuilder:object:root=true
type DatabaseUserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DatabaseUser `json:"items"`
}

func init() {
	SchemeBuilder.Register(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &DatabaseUser{}, &DatabaseUserList{})
		return nil
	})
}
