//go:build e2e

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

package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
)

// databaseUserForApplications does, as a tenant following docs/guides/databaseuser.md, what issue 54 asks: a
// Database of the tenant's own and a DatabaseUser granted it, with no password Secret and a connection Secret,
// become Ready, and a pod that reads only that Secret logs in over TLS that verifies the server and writes to
// that database; deleting the Database (cleanupPolicy Delete) drops it; an account that requires a
// client certificate (REQUIRE X509) is refused without one. The DatabaseTarget publishes the node address for
// applications, with VerifyFull: the project's MariaDB has a certificate for that address.
func databaseUserForApplications(t *testing.T) {
	ctx := context.Background()
	env := mariadb()
	if env["MARIADB_CA_FILE"] == "" {
		t.Skip("the MariaDB the e2e uses has no TLS (MARIADB_CA_FILE): no connection can be verified")
	}
	port, err := strconv.Atoi(env["MARIADB_PORT"])
	if err != nil {
		t.Fatal(err)
	}
	// The database the account is granted (the target's default policy allows <namespace>_*).
	database := samplesNS + "_apps" // taken literally, hyphens included, as the policy's <namespace>_* is
	admin, err := sql.Open("mysql", mariadbDSN("", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE IF EXISTS `" + database + "`") })

	dt := databaseTarget("apps")
	dt.Spec.Applications = &mygroupv1alpha1.ApplicationEndpoint{Host: env["MARIADB_HOST"], Port: int32(port),
		TLSMode: mygroupv1alpha1.TLSVerifyFull}
	create(t, dt)
	t.Cleanup(func() { _ = c.Delete(context.Background(), dt) })

	// The tenant makes the database itself, with a Database.
	tenant := tenantClient(t)
	mydb := &mygroupv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: samplesNS, Labels: map[string]string{"target": "apps"}},
		Spec: mygroupv1alpha1.DatabaseSpec{Name: database, CharacterSet: "utf8mb4",
			CleanupPolicy: mygroupv1alpha1.CleanupDelete}}
	if err := tenant.Create(ctx, mydb); err != nil {
		t.Fatalf("the tenant's create of Database shop: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), mydb) })
	waitCondition(t, &mygroupv1alpha1.Database{}, samplesNS, "shop", mygroupv1alpha1.ConditionReady)
	var charset string
	if err := admin.QueryRow("SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
		database).Scan(&charset); err != nil || charset != "utf8mb4" {
		t.Fatalf("database %s on the server: character set %q, %v; want utf8mb4", database, charset, err)
	}
	newUser := func(name string, require mygroupv1alpha1.AccountRequire) {
		t.Helper()
		dbu := &mygroupv1alpha1.DatabaseUser{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: samplesNS, Labels: map[string]string{"target": "apps"}},
			Spec: mygroupv1alpha1.DatabaseUserSpec{User: name,
				Grants:           []mygroupv1alpha1.Grant{{Database: database, Privileges: []mygroupv1alpha1.Privilege{"ALL PRIVILEGES"}}},
				ConnectionSecret: &mygroupv1alpha1.ConnectionSecret{Name: name + "-db"},
				TLS:              &mygroupv1alpha1.AccountTLS{Require: require},
			}}
		if err := tenant.Create(ctx, dbu); err != nil {
			t.Fatalf("the tenant's create of DatabaseUser %s: %v", name, err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), dbu) })
		waitCondition(t, &mygroupv1alpha1.DatabaseUser{}, samplesNS, name, mygroupv1alpha1.ConditionReady)
	}

	// No password named: the operator generates one into shop-password; the connection Secret holds it, and
	// nothing the DatabaseUser shows does.
	newUser("shop", mygroupv1alpha1.AccountRequireSSL)
	var generated, conn corev1.Secret
	if err := get(&generated, samplesNS, "shop-password"); err != nil {
		t.Fatalf("the generated password's Secret: %v", err)
	}
	password := string(generated.Data[mygroupv1alpha1.GeneratedPasswordKey])
	if len(password) < 32 {
		t.Fatalf("the generated password has %d characters, want 32", len(password))
	}
	if err := get(&conn, samplesNS, "shop-db"); err != nil {
		t.Fatalf("the connection Secret: %v", err)
	}
	for _, k := range []string{"username", "password", "host", "port", "database", "ca.crt", "uri", "dsn", "jdbcUrl"} {
		if len(conn.Data[k]) == 0 {
			t.Errorf("the connection Secret has no %s", k)
		}
	}
	if string(conn.Data["password"]) != password {
		t.Error("the connection Secret's password is not the generated one")
	}
	var dbu mygroupv1alpha1.DatabaseUser
	if err := get(&dbu, samplesNS, "shop"); err != nil {
		t.Fatal(err)
	}
	shown, _ := json.Marshal(dbu)
	events := kubectl(t, "get", "events", "-n", samplesNS, "-o", "json")
	if strings.Contains(string(shown), password) || strings.Contains(events, password) {
		t.Error("the generated password shows in the DatabaseUser or in an Event")
	}

	if logs, ok := runProbe(t, "shop-db"); !ok || !strings.Contains(logs, "over TLS") || !strings.Contains(logs, "server verified") {
		t.Errorf("a pod with only the connection Secret did not write over verified TLS:\n%s", logs)
	}

	// REQUIRE X509: the same pod, with no client certificate, is refused.
	newUser("shop-x509", mygroupv1alpha1.AccountRequireX509)
	if logs, ok := runProbe(t, "shop-x509-db"); ok || !strings.Contains(logs, "Access denied") {
		t.Errorf("an account that requires a client certificate let a pod in without one (or failed otherwise):\n%s", logs)
	}

	// The tenant deletes its Database, whose cleanupPolicy is Delete: the database and what the pod wrote go.
	if err := tenant.Delete(ctx, mydb); err != nil {
		t.Fatalf("the tenant's delete of Database shop: %v", err)
	}
	eventually(t, 2*time.Minute, "database "+database+" dropped with its Database", func() (bool, string) {
		var n int
		if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", database).Scan(&n); err != nil {
			return false, err.Error()
		}
		return n == 0 && apierrors.IsNotFound(get(&mygroupv1alpha1.Database{}, samplesNS, "shop")), fmt.Sprintf("%d databases of that name", n)
	})
}

// runProbe runs, as the tenant, a pod of the probe image (hack/cluster/images/probe) that mounts only the
// Secret secret and logs in with it (probe mysql), and returns its log and whether it succeeded.
func runProbe(t *testing.T, secret string) (string, bool) {
	t.Helper()
	name := "probe-" + secret
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: samplesNS}, Spec: corev1.PodSpec{
		RestartPolicy:   corev1.RestartPolicyNever,
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{Name: "probe", Image: f.probeImg, Args: []string{"mysql", "/connection"},
			VolumeMounts: []corev1.VolumeMount{{Name: "connection", MountPath: "/connection", ReadOnly: true}},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}}},
		Volumes: []corev1.Volume{{Name: "connection", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}},
	}}
	if err := tenantClient(t).Create(context.Background(), pod); err != nil {
		t.Fatalf("the tenant's create of pod %s: %v", name, err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pod, client.GracePeriodSeconds(0)) })
	var phase corev1.PodPhase
	eventually(t, 2*time.Minute, "pod "+name+" ended", func() (bool, string) {
		var p corev1.Pod
		if err := get(&p, samplesNS, name); err != nil {
			return false, err.Error()
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, fmt.Sprint(phase)
	})
	logs := kubectl(t, "logs", "-n", samplesNS, name)
	t.Logf("pod %s %s: %s", name, phase, strings.TrimSpace(logs))
	return logs, phase == corev1.PodSucceeded
}
