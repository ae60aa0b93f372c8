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

package databaseuser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/controller/managed"
	"github.com/operator101/operator101/internal/mysqlaccount"
)

// The connection step: once the account matches the spec, the Secret applications read to connect
// (spec.connectionSecret) is applied in the DatabaseUser's namespace, owned by it, only when it differs.
//
// How fresh it is: the operator watches no Secrets, so the connection Secret is read (one GET past the cache)
// and compared at every check of its DatabaseUser: a change of the DatabaseUser or its DatabaseTarget brings it
// up to date at once, anything else (the password Secret rotated, the connection Secret edited or deleted by
// hand) within one resync period (10m by default).

// connection is what a connection Secret says, apart from the DatabaseUser's own spec.
type connection struct {
	endpoint mygroupv1alpha1.ApplicationEndpoint
	flavor   mysqlaccount.Flavor
	password string
	// ca is the admin Secret's ca.crt: the CA certificate(s) that verify the server.
	ca []byte
}

// connectionDatabase is the database a connection Secret names: spec.connectionSecret.database, or the first
// grant's, or none.
func connectionDatabase(dbu *mygroupv1alpha1.DatabaseUser) string {
	if cs := dbu.Spec.ConnectionSecret; cs != nil && cs.Database != "" {
		return cs.Database
	}
	if len(dbu.Spec.Grants) > 0 {
		return dbu.Spec.Grants[0].Database
	}
	return ""
}

// keyOr is k, or def when k is empty (an object stored before the schema's defaults).
func keyOr(k mygroupv1alpha1.SecretKeyName, def string) string {
	if k == "" {
		return def
	}
	return string(k)
}

// ConnectionSecret is the connection Secret of dbu, with its keys named by spec.connectionSecret.secretTemplate:
// the address applications use, the user, password and database, the CA certificate, and a mysql:// URI, a
// Go DSN and a JDBC URL for the server's flavour. Labelled as operator101's and controlled by dbu.
func ConnectionSecret(dbu *mygroupv1alpha1.DatabaseUser, c connection) *corev1ac.SecretApplyConfiguration {
	cs := dbu.Spec.ConnectionSecret
	tpl := cs.SecretTemplate
	port := c.endpoint.Port
	if port == 0 {
		port = 3306
	}
	mode := c.endpoint.TLSMode
	if mode == "" {
		mode = mygroupv1alpha1.TLSVerifyFull
	}
	database := connectionDatabase(dbu)
	hostPort := net.JoinHostPort(c.endpoint.Host, strconv.Itoa(int(port)))

	data := map[string][]byte{
		keyOr(tpl.UsernameKey, "username"): []byte(dbu.Spec.User),
		keyOr(tpl.PasswordKey, "password"): []byte(c.password),
		keyOr(tpl.HostKey, "host"):         []byte(c.endpoint.Host),
		keyOr(tpl.PortKey, "port"):         []byte(strconv.Itoa(int(port))),
		keyOr(tpl.DatabaseKey, "database"): []byte(database),
		keyOr(tpl.CACertKey, "ca.crt"):     c.ca,
		keyOr(tpl.URIKey, "uri"):           []byte(mysqlURI(dbu.Spec.User, c.password, hostPort, database, mode)),
		keyOr(tpl.DSNKey, "dsn"):           []byte(goDSN(dbu.Spec.User, c.password, hostPort, database, mode)),
		keyOr(tpl.JDBCKey, "jdbcUrl"):      []byte(jdbcURL(c.flavor, dbu.Spec.User, c.password, hostPort, database, mode)),
	}
	if data[keyOr(tpl.CACertKey, "ca.crt")] == nil {
		data[keyOr(tpl.CACertKey, "ca.crt")] = []byte{}
	}
	labels := map[string]string{}
	for k, v := range tpl.Labels {
		labels[k] = v
	}
	labels[managed.ByLabel] = managed.By
	s := corev1ac.Secret(cs.Name, dbu.Namespace).
		WithLabels(labels).
		WithOwnerReferences(ownerRef(dbu)).
		WithType(corev1.SecretTypeOpaque).
		WithData(data)
	if len(tpl.Annotations) > 0 {
		s.WithAnnotations(tpl.Annotations)
	}
	return s
}

// secretApplier applies the Secrets the operator writes for a DatabaseUser: the manager caches no Secret, so
// nothing is remembered of what was applied (apply.Applier.Uncached).
func (r *Reconciler) secretApplier() apply.Applier {
	a := r.Applier()
	a.Uncached = true
	return a
}

// withoutBodies is ctx with a logger that writes nothing, for the requests that carry a password in their body:
// client-go logs every request's body at verbosity 8 through the context's logger (the operator's, which a
// debugging admin may turn up that far), and a Secret's data is only base64, not hidden.
func withoutBodies(ctx context.Context) context.Context {
	return log.IntoContext(ctx, logr.Discard())
}

// ownerRef makes the DatabaseUser the controller of a Secret the operator writes for it, so that deleting it
// deletes the Secret (after its finalizer dropped the account).
func ownerRef(dbu *mygroupv1alpha1.DatabaseUser) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(mygroupv1alpha1.GroupVersion.String()).
		WithKind("DatabaseUser").
		WithName(dbu.Name).
		WithUID(dbu.UID).
		WithController(true).
		WithBlockOwnerDeletion(true)
}

// mysqlURI is a mysql:// URI (MySQL Shell's form, which most clients read) with ssl-mode.
func mysqlURI(user, password, hostPort, database string, mode mygroupv1alpha1.TLSMode) string {
	u := url.URL{Scheme: "mysql", User: url.UserPassword(user, password), Host: hostPort, Path: "/" + database,
		RawQuery: "ssl-mode=" + map[mygroupv1alpha1.TLSMode]string{
			mygroupv1alpha1.TLSDisabled: "DISABLED", mygroupv1alpha1.TLSRequired: "REQUIRED",
			mygroupv1alpha1.TLSVerifyCA: "VERIFY_CA", mygroupv1alpha1.TLSVerifyFull: "VERIFY_IDENTITY"}[mode]}
	return u.String()
}

// goDSN is a DSN for github.com/go-sql-driver/mysql. Its tls=true verifies the server against the system's
// roots; an application whose server has a private CA registers the Secret's CA certificate
// (mysql.RegisterTLSConfig) and names it in tls instead (docs/guides/databaseuser.md).
func goDSN(user, password, hostPort, database string, mode mygroupv1alpha1.TLSMode) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, password, "tcp", hostPort, database
	switch mode {
	case mygroupv1alpha1.TLSDisabled:
		cfg.TLSConfig = "false"
	case mygroupv1alpha1.TLSRequired:
		cfg.TLSConfig = "skip-verify"
	default:
		cfg.TLSConfig = "true"
	}
	return cfg.FormatDSN()
}

// jdbcURL is a JDBC URL for the server's flavour: MariaDB Connector/J's jdbc:mariadb:// or MySQL
// Connector/J's jdbc:mysql://, each with its own sslMode values.
func jdbcURL(flavor mysqlaccount.Flavor, user, password, hostPort, database string, mode mygroupv1alpha1.TLSMode) string {
	scheme, sslMode := "jdbc:mysql", map[mygroupv1alpha1.TLSMode]string{
		mygroupv1alpha1.TLSDisabled: "DISABLED", mygroupv1alpha1.TLSRequired: "REQUIRED",
		mygroupv1alpha1.TLSVerifyCA: "VERIFY_CA", mygroupv1alpha1.TLSVerifyFull: "VERIFY_IDENTITY"}[mode]
	if flavor == mysqlaccount.MariaDB {
		scheme, sslMode = "jdbc:mariadb", map[mygroupv1alpha1.TLSMode]string{
			mygroupv1alpha1.TLSDisabled: "disable", mygroupv1alpha1.TLSRequired: "trust",
			mygroupv1alpha1.TLSVerifyCA: "verify-ca", mygroupv1alpha1.TLSVerifyFull: "verify-full"}[mode]
	}
	q := url.Values{"user": {user}, "password": {password}, "sslMode": {sslMode}}
	return scheme + "://" + hostPort + "/" + url.PathEscape(database) + "?" + q.Encode()
}

// syncConnection applies dbu's connection Secret, when it asks for one, after its account was made to match:
// nil when done (or not asked for), else the outcome. A Secret of that name that dbu does not control is left
// as it is (ChildNotOwned), and looked at again at the next resync.
func (r *Reconciler) syncConnection(ctx context.Context, dbu *mygroupv1alpha1.DatabaseUser, t *mygroupv1alpha1.DatabaseTarget,
	c connection) *outcome {
	cs := dbu.Spec.ConnectionSecret
	if cs == nil {
		return nil
	}
	if t.Spec.Applications == nil {
		return &outcome{reason: mygroupv1alpha1.ReasonConnectionNotPublished, message: fmt.Sprintf(
			"the account matches the spec, but DatabaseTarget %q publishes no address for applications, so Secret %q "+
				"is not written: the cluster admin sets the target's spec.applications", t.Name, cs.Name)}
	}
	c.endpoint = *t.Spec.Applications
	observed := &corev1.Secret{}
	err := apply.Child(withoutBodies(ctx), r.secretApplier(), dbu, "Secret", observed, ConnectionSecret(dbu, c), corev1ac.ExtractSecret, true)
	switch {
	case errors.Is(err, apply.ErrNotOwned):
		return &outcome{reason: mygroupv1alpha1.ReasonChildNotOwned, recheck: true, message: fmt.Sprintf(
			"the account matches the spec, but Secret %q exists and is not controlled by this DatabaseUser: "+
				"rename spec.connectionSecret.name or delete that Secret", cs.Name)}
	case err != nil:
		msg := redact(fmt.Sprintf("writing connection Secret %q: %v", cs.Name, err), c.password)
		return &outcome{reason: mygroupv1alpha1.ReasonSecretWriteFailed, message: msg, retry: true}
	}
	return nil
}
