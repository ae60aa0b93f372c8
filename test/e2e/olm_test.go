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
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	scapiv1alpha3 "github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	operatorsv2 "github.com/operator-framework/api/pkg/operators/v2"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	batchv1alpha1 "github.com/operator101/operator101/api/batch/v1alpha1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/api/conditions"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/at"
)

const (
	opNS      = "operator101-e2e"         // where the Subscription installs the operator
	samplesNS = "operator101-e2e-samples" // the samples without a namespace of their own
	scoreNS   = "operator101-e2e-scorecard"
	sdkNS     = "operator101-e2e-sdk" // operator-sdk run bundle
	// 0.1.0 is the first release, built from its own commit (config/catalog/releases): the e2e upgrades from it
	// to the newest release (headVersion, the head of the committed catalog), across the migration 0.1.0 needs,
	// then to this tree's version (newVersion) when the catalog adds it.
	oldVersion = "0.1.0"
	oldCSV     = "operator101.v" + oldVersion
	// 0.1.0 read its database targets from this variable (name=Secret), set in the Subscription's config.
	legacyTargets = "default=mariadb-target,that-database=mariadb-target"
	deployment    = "operator101-controller-manager"
	identity      = "operator101-controller-manager" // the ServiceAccount OLM creates from the CSV
)

// TestOLM is the life of operator101 installed from its catalog, in the order a platform team lives it: from the
// committed catalog (the releases only), install the release 0.1.0 and create every kind it serves, upgrade to
// the newest release (held while an At runs; the documented DatabaseUser migration after it); then the catalog
// adds this tree's version and the operator upgrades to it; the samples on it, scorecard against the installed
// operator, uninstall. Each step needs the previous one, so they are subtests of one test and the first failure stops it.
func TestOLM(t *testing.T) {
	// Cleanups run last-registered first: the samples go while the operator runs (a DatabaseUser's finalizer
	// needs it), then the uninstall, before the namespaces go (OLM's own advice: a namespace deleted under an
	// install confuses the next Subscription to the package).
	clearInstalls(t)
	clearDatabaseTargets(t)
	freshNamespace(t, opNS)
	freshNamespace(t, samplesNS)
	t.Cleanup(func() { uninstall(t, opNS) })
	t.Cleanup(func() { clearDatabaseTargets(t) })
	t.Cleanup(func() { deleteSamples(t) })
	// The releases need what their CSVs do not ask for on a cluster that admits as OpenShift does; this tree's
	// version runs without it (TestAdmissionLikeOpenShift).
	revokeReleaseNeeds := grantReleaseNeeds(t, opNS)
	for _, step := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"InstallReleaseFromCatalog", installFromCatalog},
		{"EveryKindOnTheRelease", releasedKinds},
		{"UpgradeHeldWhileAtRuns", upgrade},
		{"MigrateDatabaseTargets", migrateDatabaseTargets},
		{"RevokeWhatReleasesNeed", func(*testing.T) { revokeReleaseNeeds() }},
		{"UpgradeToThisTree", upgradeToThisTree},
		{"CurrentVersion", currentVersion},
		{"Samples", samples},
		{"TenantCannotHurtOthers", tenantCannotHurtOthers},
		{"AtAsATenant", atAsATenant},
		// Skipped only where e2e.sh installed no Traefik (TRAEFIK=0, or a cluster of your own).
		{"RoutesThroughTraefik", routesThroughTraefik},
		{"DatabaseUserForApplications", databaseUserForApplications},
		{"Scorecard", scorecard},
		{"Uninstall", uninstallKeepsWorkloads},
	} {
		if !t.Run(step.name, step.fn) {
			t.FailNow()
		}
	}
}

// 1. CatalogSource from the catalog image, Subscription to stable at the release 0.1.0, configured as 0.1.0
// documents it (its database targets in the Subscription's config).
func installFromCatalog(t *testing.T) {
	create(t, targetSecret(opNS))
	// Manual approval: the test decides when the upgrade to this tree's version may start. No target namespaces: AllNamespaces.
	subscribeFrom(t, publishCommittedCatalog(t), opNS, nil, oldCSV, true, corev1.EnvVar{Name: "DATABASE_TARGETS", Value: legacyTargets})
	approve(t, opNS, oldCSV)
	waitCSV(t, opNS, oldCSV, operatorsv1alpha1.CSVPhaseSucceeded, 5*time.Minute)

	pod := operatorPod(t, opNS, oldVersion)
	if pod.Spec.ServiceAccountName != identity {
		t.Errorf("operator pod runs as ServiceAccount %q, want %q", pod.Spec.ServiceAccountName, identity)
	}
	goMemoryLimitFollows(t, pod)
	var sa corev1.ServiceAccount
	if err := get(&sa, opNS, identity); err != nil {
		t.Fatalf("the ServiceAccount OLM creates: %v", err)
	}
	if !ownedBy(sa.OwnerReferences, "ClusterServiceVersion", oldCSV) {
		t.Errorf("ServiceAccount %s is not owned by the CSV: %+v", identity, sa.OwnerReferences)
	}
	// The catalog deprecates 0.1.0 (olm.deprecations in config/catalog): OLM says so on the Subscription.
	eventually(t, 2*time.Minute, "the Subscription says 0.1.0 is deprecated", func() (bool, string) {
		c, ok := subscriptionCondition(t, opNS, operatorsv1alpha1.SubscriptionBundleDeprecated)
		return ok && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, "0.1.0 lets a DatabaseUser alter"),
			fmt.Sprintf("%+v", c)
	})
}

// publishCommittedCatalog follows the README's path for users: build the committed catalog (the releases
// only) with make catalog-build and push it with make catalog-push to the registry the cluster pulls from, over
// TLS verified against that registry's CA (the local cluster's TLS listener and its CA, or IMAGE_TAG_BASE's and
// REGISTRY_CERT_DIR). It returns the image, for a CatalogSource.
func publishCommittedCatalog(t *testing.T) string {
	t.Helper()
	if committedCatalog != "" {
		return committedCatalog
	}
	committedCatalog = publishCommittedCatalogAs(t, strings.TrimSuffix(f.bundleImgs, "-bundle")+"-catalog:committed")
	return committedCatalog
}

// publishCommittedCatalogAs builds the committed catalog and pushes it as img, as publishCommittedCatalog says.
func publishCommittedCatalogAs(t *testing.T, img string) string {
	t.Helper()
	base := strings.TrimSuffix(f.bundleImgs, "-bundle")
	run(t, nil, "make", "--no-print-directory", "catalog-build", "BUNDLE_IMGS=", "CATALOG_IMG="+img, "OCI_RUNTIME=runc")
	push := []string{"--no-print-directory", "catalog-push", "CATALOG_IMG=" + img, "IMAGE_TAG_BASE=" + base}
	if f.certDir != "" {
		push = append(push, "REGISTRY_CERT_DIR="+f.certDir)
	}
	out := run(t, nil, "make", push...)
	if f.certDir != "" && !strings.Contains(out, "--tls-verify=true --cert-dir "+f.certDir) {
		t.Errorf("make catalog-push did not verify TLS against %s:\n%s", f.certDir, out)
	}
	return img
}

// committedCatalog is the committed catalog's image once publishCommittedCatalog pushed it.
var committedCatalog string

// subscriptionCondition is the operator101 Subscription's condition of type typ in ns, if it has one.
func subscriptionCondition(t *testing.T, ns string, typ operatorsv1alpha1.SubscriptionConditionType) (operatorsv1alpha1.SubscriptionCondition, bool) {
	t.Helper()
	var sub operatorsv1alpha1.Subscription
	if err := get(&sub, ns, "operator101"); err != nil {
		t.Fatalf("Subscription: %v", err)
	}
	for _, c := range sub.Status.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return operatorsv1alpha1.SubscriptionCondition{}, false
}

// 2. Every kind the release serves, from the seeds' samples as the release has them, converged by the released
// operator.
func releasedKinds(t *testing.T) {
	kubectl(t, "apply", "-f", releasedSample(t, oldVersion, "operator_v1_myweb.yaml"))
	waitCondition(t, &operatorv1.MyWeb{}, "default", "myweb", conditions.Available)
	waitHTTP(t, servedAt(t, "default", "myweb"), "<h1>Hello, World!</h1>")
	kubectl(t, "apply", "-n", samplesNS, "-f", releasedSample(t, oldVersion, "app_v1_appservice.yaml"))
	waitCondition(t, &appv1.AppService{}, samplesNS, "nginx-app", conditions.Available)
	kubectl(t, "apply", "-n", samplesNS, "-f", releasedSample(t, oldVersion, "cnat_v1alpha1_at.yaml"))
	waitAtPhase(t, samplesNS, "example-at", cnatv1alpha1.PhaseDone, 3*time.Minute)
	kubectl(t, "apply", "-n", samplesNS, "-f", releasedSample(t, oldVersion, "mygroup_v1alpha1_databaseuser.yaml"))
	waitCondition(t, &mygroupv1alpha1.DatabaseUser{}, samplesNS, "cnhandsomeguy", mygroupv1alpha1.ConditionReady)
	if who := login(t, "cnhandsomeguy", "changeit"); who != "cnhandsomeguy@%" {
		t.Errorf("logged in as %q, want cnhandsomeguy@%%", who)
	}
}

// 4. After the upgrade, the migration docs/admin/database-targets.md gives from 0.1.0's DATABASE_TARGETS, step by step.
func migrateDatabaseTargets(t *testing.T) {
	// Before it: the DatabaseUser says its target is unknown, its account keeps working, the manager says why.
	eventually(t, 2*time.Minute, "DatabaseUser UnknownTarget on "+headVersion, func() (bool, string) {
		var u mygroupv1alpha1.DatabaseUser
		if err := get(&u, samplesNS, "cnhandsomeguy"); err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(u.Status.Conditions, mygroupv1alpha1.ConditionReady)
		return cond != nil && cond.Reason == mygroupv1alpha1.ReasonUnknownTarget && cond.ObservedGeneration == u.Generation,
			fmt.Sprintf("%+v", cond)
	})
	if who := login(t, "cnhandsomeguy", "changeit"); who != "cnhandsomeguy@%" {
		t.Errorf("before the migration, logged in as %q", who)
	}
	pod := operatorPod(t, opNS, headVersion)
	if logs := kubectl(t, "logs", "-n", opNS, pod.Name); !strings.Contains(logs, "DATABASE_TARGETS is set but no longer read") {
		t.Errorf("the manager does not point at the migration while DATABASE_TARGETS is set:\n%s", logs)
	}

	// Steps 1 and 2: a DatabaseTarget for each entry, adopting the accounts 0.1.0 created, each listed for the
	// namespace of its DatabaseUser (kubectl get dbu -A); then Refuse again.
	for _, name := range []string{"default", "that-database"} {
		dt := databaseTarget(name)
		dt.Spec.ExistingAccounts = mygroupv1alpha1.ExistingAccountsAdopt
		dt.Spec.AdoptableAccounts = []mygroupv1alpha1.AdoptableAccounts{{Namespace: samplesNS, Users: []string{"cnhandsomeguy"}}}
		create(t, dt)
	}
	waitCondition(t, &mygroupv1alpha1.DatabaseTarget{}, "", "that-database", mygroupv1alpha1.ConditionReady)
	waitCondition(t, &mygroupv1alpha1.DatabaseUser{}, samplesNS, "cnhandsomeguy", mygroupv1alpha1.ConditionReady)
	for _, name := range []string{"default", "that-database"} {
		kubectl(t, "patch", "databasetarget", name, "--type", "merge", "-p", `{"spec":{"existingAccounts":"Refuse"}}`)
	}
	waitCondition(t, &mygroupv1alpha1.DatabaseTarget{}, "", "that-database", mygroupv1alpha1.ConditionReady)
	kubectl(t, "annotate", "-n", samplesNS, "databaseuser/cnhandsomeguy", "e2e/recheck=after-refuse", "--overwrite")
	waitCondition(t, &mygroupv1alpha1.DatabaseUser{}, samplesNS, "cnhandsomeguy", mygroupv1alpha1.ConditionReady)
	if who := login(t, "cnhandsomeguy", "changeit"); who != "cnhandsomeguy@%" {
		t.Errorf("after the migration, logged in as %q", who)
	}

	// Step 3: DATABASE_TARGETS leaves the Subscription's config, and resources take its place, as
	// docs/admin/configuration.md sizes the operator: OLM rolls the operator out with both changes, and the Go
	// runtime's soft limit follows the new memory limit.
	kubectl(t, "patch", "-n", opNS, "subscription", "operator101", "--type", "json", "-p",
		`[{"op":"replace","path":"/spec/config","value":{"resources":{"limits":{"cpu":"500m","memory":"384Mi"},"requests":{"cpu":"10m","memory":"128Mi"}}}}]`)
	eventually(t, 3*time.Minute, "the operator without DATABASE_TARGETS, limited to 384Mi", func() (bool, string) {
		var dep appsv1.Deployment
		if err := get(&dep, opNS, deployment); err != nil {
			return false, err.Error()
		}
		for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "DATABASE_TARGETS" {
				return false, "still set"
			}
		}
		if limit := dep.Spec.Template.Spec.Containers[0].Resources.Limits.Memory().String(); limit != "384Mi" {
			return false, "memory limit " + limit
		}
		return dep.Status.UpdatedReplicas == 1 && dep.Status.AvailableReplicas == 1 && dep.Status.Replicas == 1,
			fmt.Sprintf("replicas %d updated %d available %d", dep.Status.Replicas, dep.Status.UpdatedReplicas, dep.Status.AvailableReplicas)
	})
	goMemoryLimitFollows(t, operatorPod(t, opNS, headVersion))
	waitCondition(t, &mygroupv1alpha1.DatabaseUser{}, samplesNS, "cnhandsomeguy", mygroupv1alpha1.ConditionReady)
}

// goMemoryLimitFollows checks that the manager in pod set the Go runtime's soft memory limit to the container's
// memory limit (passed by the downward API) less 64 MiB for what Go does not count.
func goMemoryLimitFollows(t *testing.T, pod corev1.Pod) {
	t.Helper()
	limit := pod.Spec.Containers[0].Resources.Limits.Memory().Value()
	wantLimit := fmt.Sprintf(`"bytes":%d`, limit-64<<20)
	if logs := kubectl(t, "logs", "-n", opNS, pod.Name); limit == 0 || !strings.Contains(logs, "Go memory limit set from the container's") ||
		!strings.Contains(logs, wantLimit) {
		t.Errorf("the manager did not set Go's memory limit from its %d-byte container limit (want %s in its log):\n%s", limit, wantLimit, logs)
	}
}

// 4b. The committed catalog's head is what a user who subscribes gets: not deprecated, nothing to upgrade to.
// Then the catalog adds this tree's version (the CatalogSource's image moves on, as a user's does when the
// project releases) and the operator upgrades to it; every object is kept and converges.
func upgradeToThisTree(t *testing.T) {
	eventually(t, 2*time.Minute, "the Subscription on "+headCSV+" says nothing is deprecated", func() (bool, string) {
		for _, typ := range []operatorsv1alpha1.SubscriptionConditionType{operatorsv1alpha1.SubscriptionBundleDeprecated,
			operatorsv1alpha1.SubscriptionChannelDeprecated, operatorsv1alpha1.SubscriptionPackageDeprecated,
			operatorsv1alpha1.SubscriptionDeprecated} {
			if c, ok := subscriptionCondition(t, opNS, typ); ok && c.Status == corev1.ConditionTrue {
				return false, fmt.Sprintf("%s: %s", typ, c.Message)
			}
		}
		return true, ""
	})
	var sub operatorsv1alpha1.Subscription
	if err := get(&sub, opNS, "operator101"); err != nil {
		t.Fatal(err)
	}
	if sub.Status.InstalledCSV != headCSV {
		t.Errorf("the Subscription installed %q, want the committed catalog's head %s", sub.Status.InstalledCSV, headCSV)
	}
	uids := sampleUIDs(t)
	kubectl(t, "patch", "-n", opNS, "catalogsource", "operator101-catalog", "--type", "merge", "-p",
		fmt.Sprintf(`{"spec":{"image":%q}}`, f.catalogImg))
	approve(t, opNS, newCSV)
	waitCSV(t, opNS, newCSV, operatorsv1alpha1.CSVPhaseSucceeded, 5*time.Minute)
	eventually(t, 2*time.Minute, headCSV+"'s CSV replaced", func() (bool, string) {
		err := get(&operatorsv1alpha1.ClusterServiceVersion{}, opNS, headCSV)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	// The Subscription's resources (step 3 of the migration) carry over to the new CSV's Deployment.
	if pod := operatorPod(t, opNS, newVersion); pod.Spec.Containers[0].Resources.Limits.Memory().String() != "384Mi" {
		t.Errorf("the upgraded operator's memory limit is %s, not the Subscription's 384Mi", pod.Spec.Containers[0].Resources.Limits.Memory())
	} else {
		goMemoryLimitFollows(t, pod)
	}
	if after := sampleUIDs(t); !maps.Equal(uids, after) {
		t.Errorf("objects changed identity across the upgrade: before %v, after %v", uids, after)
	}
	waitCondition(t, &operatorv1.MyWeb{}, "default", "myweb", conditions.Available)
	waitCondition(t, &appv1.AppService{}, samplesNS, "nginx-app", conditions.Available)
	waitCondition(t, &mygroupv1alpha1.DatabaseUser{}, samplesNS, "cnhandsomeguy", mygroupv1alpha1.ConditionReady)
	waitCondition(t, &mygroupv1alpha1.DatabaseTarget{}, "", "that-database", mygroupv1alpha1.ConditionReady)
	waitAtPhase(t, samplesNS, "example-at", cnatv1alpha1.PhaseDone, time.Minute)
	kubectl(t, "patch", "-n", "default", "myweb/myweb", "--type", "merge", "-p",
		`{"spec":{"pageContentHtml":"<h1>served by this tree</h1>\n"}}`)
	waitHTTP(t, servedAt(t, "default", "myweb"), "served by this tree")
}

// 5. This tree's version, as installed by the upgrade: OLM owns every CRD the project generates, and the
// operator holds exactly its documented privileges.
func currentVersion(t *testing.T) {
	ctx := context.Background()
	// The CRDs belong to OLM.
	var csv operatorsv1alpha1.ClusterServiceVersion
	if err := get(&csv, opNS, newCSV); err != nil {
		t.Fatal(err)
	}
	// Every CRD the project generates (config/crd/bases), no more.
	crdFiles, err := filepath.Glob(filepath.Join(f.root, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(crdFiles) == 0 {
		t.Fatalf("the project's CRDs: %v (%d files)", err, len(crdFiles))
	}
	if n := len(csv.Spec.CustomResourceDefinitions.Owned); n != len(crdFiles) {
		t.Errorf("the CSV owns %d CRDs, want %d (config/crd/bases)", n, len(crdFiles))
	}
	for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := get(&crd, "", owned.Name); err != nil {
			t.Fatalf("CRD %s: %v", owned.Name, err)
		}
		if crd.Labels["olm.managed"] != "true" {
			t.Errorf("CRD %s is not managed by OLM: labels %v", owned.Name, crd.Labels)
		}
	}
	checkLeastPrivilege(t, ctx, opNS)
	// This tree's version is not deprecated: OLM takes the condition 0.1.0 had off the Subscription.
	eventually(t, 2*time.Minute, "no deprecation on the Subscription", func() (bool, string) {
		c, ok := subscriptionCondition(t, opNS, operatorsv1alpha1.SubscriptionBundleDeprecated)
		_, rollup := subscriptionCondition(t, opNS, operatorsv1alpha1.SubscriptionDeprecated)
		return !ok && !rollup, fmt.Sprintf("%+v", c)
	})
}

// e2eLabel marks the cluster-scoped objects the e2e creates, so that a run on a cluster of your own removes its
// own (left by an earlier run too) and never another's of the same name.
const e2eLabel = "e2e.operator101.io/created"

// clearDatabaseTargets deletes the DatabaseTargets the e2e created; the test stops if one of the names it
// creates is taken by a DatabaseTarget it did not create.
func clearDatabaseTargets(t *testing.T) {
	t.Helper()
	var list mygroupv1alpha1.DatabaseTargetList
	if err := c.List(context.Background(), &list); meta.IsNoMatchError(err) {
		return // no CRD (operator-sdk cleanup removes it): no DatabaseTarget either
	} else if err != nil {
		t.Fatalf("listing DatabaseTargets: %v", err)
	}
	for _, dt := range list.Items {
		if dt.Labels[e2eLabel] == "true" {
			if err := c.Delete(context.Background(), &dt); client.IgnoreNotFound(err) != nil {
				t.Fatalf("deleting DatabaseTarget %s: %v", dt.Name, err)
			}
		} else if slices.Contains([]string{"default", "that-database"}, dt.Name) {
			t.Fatalf("DatabaseTarget %s exists and was not created by the e2e: run it on a cluster without one", dt.Name)
		}
	}
}

// databaseTarget is a DatabaseTarget on the project's MariaDB (admin Secret mariadb-target in opNS), for the
// samples' and the scorecard's namespaces.
func databaseTarget(name string) *mygroupv1alpha1.DatabaseTarget {
	return &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{e2eLabel: "true"}},
		Spec: mygroupv1alpha1.DatabaseTargetSpec{
			AdminSecretRef:    mygroupv1alpha1.SecretReference{Namespace: opNS, Name: "mariadb-target"},
			TLS:               targetTLS(),
			AllowedNamespaces: []string{samplesNS, scoreNS},
		}}
}

// checkLeastPrivilege reads the operator's RBAC back from the cluster: what OLM bound to its ServiceAccount, and
// what the API server's authorizer answers for it.
func checkLeastPrivilege(t *testing.T, ctx context.Context, ns string) {
	forbidden := []authorizationv1.ResourceAttributes{}
	for _, verb := range []string{"create", "update", "patch", "delete"} {
		forbidden = append(forbidden,
			authorizationv1.ResourceAttributes{Verb: verb, Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"},
			authorizationv1.ResourceAttributes{Verb: verb, Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"},
			authorizationv1.ResourceAttributes{Verb: verb, Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"},
			authorizationv1.ResourceAttributes{Verb: verb, Group: "rbac.authorization.k8s.io", Resource: "clusterroles"},
		)
	}
	// DatabaseTargets are the cluster admin's: the operator reads them and writes their status only.
	for _, verb := range []string{"create", "update", "patch", "delete"} {
		forbidden = append(forbidden,
			authorizationv1.ResourceAttributes{Verb: verb, Group: mygroupv1alpha1.GroupVersion.Group, Resource: "databasetargets"})
	}
	forbidden = append(forbidden,
		authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"},
		authorizationv1.ResourceAttributes{Verb: "watch", Resource: "secrets"},
		authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets", Namespace: samplesNS},
		authorizationv1.ResourceAttributes{Verb: "watch", Resource: "secrets", Namespace: samplesNS},
	)
	// Secrets are never updated or deleted: the operator writes the ones a DatabaseUser asks for by server-side
	// apply (create, patch), and the garbage collector removes them.
	forbidden = append(forbidden,
		authorizationv1.ResourceAttributes{Verb: "update", Resource: "secrets", Namespace: samplesNS},
		authorizationv1.ResourceAttributes{Verb: "delete", Resource: "secrets", Namespace: samplesNS},
	)
	// get (never list or watch) on Secrets: the database targets in its own namespace, and the password Secret a
	// DatabaseUser names in the DatabaseUser's namespace; create and patch: the generated password and the
	// connection Secret a DatabaseUser asks for (docs/admin/security.md).
	granted := []authorizationv1.ResourceAttributes{
		{Verb: "get", Resource: "secrets", Namespace: ns},
		{Verb: "create", Resource: "secrets", Namespace: samplesNS},
		{Verb: "patch", Resource: "secrets", Namespace: samplesNS},
		{Verb: "watch", Group: "operator.k8s-summit.org", Resource: "mywebs"},
		{Verb: "create", Resource: "pods", Namespace: samplesNS},
	}
	for _, ra := range forbidden {
		if allowed(t, ns, ra) {
			t.Errorf("the operator may %s %s.%s (namespace %q)", ra.Verb, ra.Resource, ra.Group, ra.Namespace)
		}
	}
	for _, ra := range granted {
		if !allowed(t, ns, ra) {
			t.Errorf("the operator may not %s %s.%s in %q: the check itself is broken", ra.Verb, ra.Resource, ra.Group, ra.Namespace)
		}
	}

	// The rules themselves, from every binding that names the ServiceAccount.
	var rules []rbacv1.PolicyRule
	var crbs rbacv1.ClusterRoleBindingList
	if err := c.List(ctx, &crbs); err != nil {
		t.Fatal(err)
	}
	for _, b := range crbs.Items {
		if names(b.Subjects, ns) {
			var r rbacv1.ClusterRole
			if err := get(&r, "", b.RoleRef.Name); err != nil {
				t.Fatal(err)
			}
			rules = append(rules, r.Rules...)
		}
	}
	var rbs rbacv1.RoleBindingList
	if err := c.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, b := range rbs.Items {
		if names(b.Subjects, ns) && b.RoleRef.Kind == "Role" {
			var r rbacv1.Role
			if err := get(&r, ns, b.RoleRef.Name); err != nil {
				t.Fatal(err)
			}
			rules = append(rules, r.Rules...)
		}
	}
	if len(rules) == 0 {
		t.Fatal("no RBAC bound to the operator's ServiceAccount")
	}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			if g == "*" || g == "apiextensions.k8s.io" || g == "admissionregistration.k8s.io" || g == "rbac.authorization.k8s.io" {
				if slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" }) {
					t.Errorf("rule grants writes in group %q: %+v", g, r)
				}
			}
		}
	}
	t.Logf("operator RBAC read back: %d rules, %d forbidden and %d allowed requests checked", len(rules), len(forbidden), len(granted))
	checkPermissionTable(t, "AllNamespaces", ns, samplesNS)
}

func names(subjects []rbacv1.Subject, ns string) bool {
	return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
		return s.Kind == "ServiceAccount" && s.Name == identity && s.Namespace == ns
	})
}

// 2. Every seed sample, as written, against the installed operator.
func samples(t *testing.T) {
	// MyWeb: the seed names the default namespace itself. Its page answers on the NodePort.
	kubectl(t, "apply", "-f", "config/samples/operator_v1_myweb.yaml")
	waitCondition(t, &operatorv1.MyWeb{}, "default", "myweb", conditions.Available)
	waitHTTP(t, servedAt(t, "default", "myweb"), "<h1>Hello, World!</h1>")

	// AppService: two replicas, then three with kubectl scale (the scale subresource).
	kubectl(t, "apply", "-n", samplesNS, "-f", "config/samples/app_v1_appservice.yaml")
	waitCondition(t, &appv1.AppService{}, samplesNS, "nginx-app", conditions.Available)
	kubectl(t, "scale", "-n", samplesNS, "appservice/nginx-app", "--replicas", "3")
	eventually(t, 3*time.Minute, "AppService scaled to 3 ready replicas", func() (bool, string) {
		var a appv1.AppService
		if err := get(&a, samplesNS, "nginx-app"); err != nil {
			return false, err.Error()
		}
		return a.Spec.Size != nil && *a.Spec.Size == 3 && a.Status.ReadyReplicas == 3, fmt.Sprintf("ready %s", a.Status.Ready)
	})
	waitHTTP(t, servedAt(t, samplesNS, "nginx-app"), "")
	// Seed 003's reader finds the pods by the tutorial's label app=<name> (the sample was created on 0.1.0,
	// whose pods had no such label: the upgrade rolled them once).
	podsByTutorialLabel(t, samplesNS, "nginx-app", 3)
	// The kubebuilder tutorial's AppService, beside it in the same namespace (a name and a node port of its own),
	// served by the same controller: the batch AppService controls the Deployment.
	kubectl(t, "apply", "-n", samplesNS, "-f", "config/samples/batch_v1alpha1_appservice.yaml")
	waitCondition(t, &batchv1alpha1.AppService{}, samplesNS, "nginx-app-v1alpha1", conditions.Available)
	waitHTTP(t, servedAt(t, samplesNS, "nginx-app-v1alpha1"), "")
	var dep appsv1.Deployment
	if err := get(&dep, samplesNS, "nginx-app-v1alpha1"); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(&dep); ref == nil || ref.APIVersion != batchv1alpha1.GroupVersion.String() {
		t.Errorf("the Deployment's controller is %+v, want the batch.schwarzeni.github.com AppService", ref)
	}
	podsByTutorialLabel(t, samplesNS, "nginx-app-v1alpha1", 3)

	// At: the book's example fires at once (its schedule is in the past) and its pod runs `echo YAY` in busybox.
	kubectl(t, "apply", "-n", samplesNS, "-f", "config/samples/cnat_v1alpha1_at.yaml")
	waitAtPhase(t, samplesNS, "example-at", cnatv1alpha1.PhaseDone, 3*time.Minute)
	if logs := kubectl(t, "logs", "-n", samplesNS, at.PodName("example-at")); strings.TrimSpace(logs) != "YAY" {
		t.Errorf("the At pod's log is %q, want YAY", logs)
	}
	// An At that names no image runs the operator's default, which the CSV gives by digest (as a release does)
	// and lists in relatedImages; the node pulls that public name from its mirror, the only source it has. (The
	// book's example above was created on 0.1.0, whose default was the short name busybox.)
	create(t, &cnatv1alpha1.At{
		ObjectMeta: metav1.ObjectMeta{Name: "default-image", Namespace: samplesNS},
		Spec:       cnatv1alpha1.AtSpec{Schedule: time.Now().UTC().Format(cnatv1alpha1.ScheduleLayout), Command: "echo default"},
	})
	waitAtPhase(t, samplesNS, "default-image", cnatv1alpha1.PhaseDone, 3*time.Minute)
	var csv operatorsv1alpha1.ClusterServiceVersion
	if err := get(&csv, opNS, newCSV); err != nil {
		t.Fatal(err)
	}
	var defaultImage string
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if e.Name == cnatv1alpha1.DefaultImageEnv {
				defaultImage = e.Value
			}
		}
	}
	if !strings.HasPrefix(defaultImage, "docker.io/library/busybox@sha256:") ||
		!slices.ContainsFunc(csv.Spec.RelatedImages, func(r operatorsv1alpha1.RelatedImage) bool { return r.Image == defaultImage }) {
		t.Errorf("%s is %q, want a public image by digest, listed in relatedImages (%v)", cnatv1alpha1.DefaultImageEnv,
			defaultImage, csv.Spec.RelatedImages)
	}
	var atPod corev1.Pod
	if err := get(&atPod, samplesNS, at.PodName("default-image")); err != nil {
		t.Fatal(err)
	}
	if got := atPod.Spec.Containers[0].Image; got != defaultImage {
		t.Errorf("the At's pod ran %q, want the default %q", got, defaultImage)
	}

	// A namespace's admin may create DatabaseUsers there (OLM aggregates the kinds into admin), never a
	// DatabaseTarget: a RoleBinding grants nothing on a cluster-scoped kind. Asked as real requests by that
	// admin (impersonated, dry run): a SubjectAccessReview naming a namespace would count the RoleBinding for
	// a cluster-scoped kind too, which the API server never does for a real request.
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tenant-admin", Namespace: samplesNS},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "tenant"}}})
	tenant := tenantClient(t)
	ctx := context.Background()
	dbu := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Name: "tenant-probe", Namespace: samplesNS},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: "tenant_probe",
			Password: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}}
	eventually(t, time.Minute, "the namespace admin may create a DatabaseUser (OLM's aggregated roles)", func() (bool, string) {
		err := tenant.Create(ctx, dbu.DeepCopy(), client.DryRunAll)
		return err == nil, fmt.Sprint(err)
	})
	for _, dt := range []*mygroupv1alpha1.DatabaseTarget{databaseTarget("tenant-probe"), databaseTarget("that-database")} {
		if err := tenant.Create(ctx, dt, client.DryRunAll); !apierrors.IsForbidden(err) {
			t.Errorf("a namespace admin's create of DatabaseTarget %s: %v, want Forbidden", dt.Name, err)
		}
	}
	existing := &mygroupv1alpha1.DatabaseTarget{}
	if err := get(existing, "", "that-database"); err != nil {
		t.Fatal(err)
	}
	existing.Spec.AllowedNamespaces = []string{"*"}
	if err := tenant.Update(ctx, existing, client.DryRunAll); !apierrors.IsForbidden(err) {
		t.Errorf("a namespace admin's update of a DatabaseTarget: %v, want Forbidden", err)
	}

	// DatabaseUser: the account exists in the project's MariaDB, and logs in with the Secret's password.
	kubectl(t, "apply", "-n", samplesNS, "-f", "config/samples/mygroup_v1alpha1_databaseuser.yaml")
	waitCondition(t, &mygroupv1alpha1.DatabaseUser{}, samplesNS, "cnhandsomeguy", mygroupv1alpha1.ConditionReady)
	if who := login(t, "cnhandsomeguy", "changeit"); who != "cnhandsomeguy@%" {
		t.Errorf("logged in as %q, want cnhandsomeguy@%%", who)
	}
}

// tenantCannotHurtOthers tries, as a tenant would, what issue 52 found: a DatabaseUser in a namespace an Adopt
// target does not allow, naming a hand-made account (a monitoring login with USAGE only), refused while it
// lives and then deleted, leaves that account as it was.
func tenantCannotHurtOthers(t *testing.T) {
	db := adminDB(t)
	if _, err := db.Exec("CREATE USER IF NOT EXISTS `monitor_probe`@`%` IDENTIFIED BY 'monitor-pw'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP USER IF EXISTS `monitor_probe`@`%`") })
	dt := databaseTarget("adopt-elsewhere")
	dt.Spec.AllowedNamespaces = []string{scoreNS}
	dt.Spec.ExistingAccounts = mygroupv1alpha1.ExistingAccountsAdopt
	dt.Spec.AdoptableAccounts = []mygroupv1alpha1.AdoptableAccounts{{Namespace: scoreNS, Users: []string{"monitor_probe"}}}
	create(t, dt)
	t.Cleanup(func() { _ = c.Delete(context.Background(), dt) })
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "probe-pw", Namespace: samplesNS},
		StringData: map[string]string{"pw": "taken-over"}})
	dbu := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Name: "monitor-probe", Namespace: samplesNS,
		Labels: map[string]string{mygroupv1alpha1.TargetLabel: "adopt-elsewhere"}},
		Spec: mygroupv1alpha1.DatabaseUserSpec{User: "monitor_probe",
			Password: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "probe-pw"}, Key: "pw"}}}
	create(t, dbu)
	eventually(t, 2*time.Minute, "the DatabaseUser refused: TargetNotAllowed", func() (bool, string) {
		var u mygroupv1alpha1.DatabaseUser
		if err := get(&u, samplesNS, dbu.Name); err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(u.Status.Conditions, mygroupv1alpha1.ConditionReady)
		return cond != nil && cond.Reason == mygroupv1alpha1.ReasonTargetNotAllowed, fmt.Sprintf("%+v", cond)
	})
	kubectl(t, "delete", "-n", samplesNS, "databaseuser", dbu.Name, "--wait=true", "--timeout=2m")
	if who := login(t, "monitor_probe", "monitor-pw"); who != "monitor_probe@%" {
		t.Errorf("after the refused DatabaseUser's deletion, the hand-made account logs in as %q", who)
	}
	if events := kubectl(t, "get", "events", "-n", samplesNS, "--field-selector", "involvedObject.name="+dbu.Name); strings.Contains(events, "AccountDropped") {
		t.Errorf("the tenant was told the account was dropped:\n%s", events)
	}
}

// 3. The upgrade to the newest release through the channel, held while an At runs.
func upgrade(t *testing.T) {
	uids := sampleUIDs(t)
	create(t, &cnatv1alpha1.At{
		ObjectMeta: metav1.ObjectMeta{Name: "holds-the-upgrade", Namespace: samplesNS},
		Spec: cnatv1alpha1.AtSpec{
			Schedule: time.Now().UTC().Format(cnatv1alpha1.ScheduleLayout),
			Command:  "sleep 45; echo finished",
		},
	})
	waitAtPhase(t, samplesNS, "holds-the-upgrade", cnatv1alpha1.PhaseRunning, 2*time.Minute)
	eventually(t, time.Minute, "OperatorCondition Upgradeable=False", func() (bool, string) {
		var oc operatorsv2.OperatorCondition
		if err := get(&oc, opNS, oldCSV); err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(oc.Spec.Conditions, operatorsv2.Upgradeable)
		return cond != nil && cond.Status == metav1.ConditionFalse, fmt.Sprintf("%+v", cond)
	})

	approve(t, opNS, headCSV)
	eventually(t, 3*time.Minute, headVersion+" held back: OperatorConditionNotUpgradeable", func() (bool, string) {
		var csv operatorsv1alpha1.ClusterServiceVersion
		if err := get(&csv, opNS, headCSV); err != nil {
			return false, err.Error()
		}
		held := slices.ContainsFunc(csv.Status.Conditions, func(c operatorsv1alpha1.ClusterServiceVersionCondition) bool {
			return c.Reason == operatorsv1alpha1.CSVReasonOperatorConditionNotUpgradeable
		})
		return held, fmt.Sprintf("%s %s", csv.Status.Phase, csv.Status.Reason)
	})
	var at cnatv1alpha1.At
	if err := get(&at, samplesNS, "holds-the-upgrade"); err != nil || at.Status.Phase != cnatv1alpha1.PhaseRunning {
		t.Fatalf("the upgrade was held but the At is no longer running (%v, %q): the test proves nothing", err, at.Status.Phase)
	}
	if pod := operatorPod(t, opNS, oldVersion); pod.Status.Phase != corev1.PodRunning {
		t.Errorf("the 0.1.0 operator is not running while the upgrade is held: %s", pod.Status.Phase)
	}

	waitAtPhase(t, samplesNS, "holds-the-upgrade", cnatv1alpha1.PhaseDone, 3*time.Minute)
	waitCSV(t, opNS, headCSV, operatorsv1alpha1.CSVPhaseSucceeded, 5*time.Minute)
	eventually(t, 2*time.Minute, "0.1.0's CSV replaced", func() (bool, string) {
		err := get(&operatorsv1alpha1.ClusterServiceVersion{}, opNS, oldCSV)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	operatorPod(t, opNS, headVersion)

	// The CRs were kept (same objects), and the new operator keeps them converged: a change is served.
	if after := sampleUIDs(t); !maps.Equal(uids, after) {
		t.Errorf("samples changed identity across the upgrade: before %v, after %v", uids, after)
	}
	waitCondition(t, &operatorv1.MyWeb{}, "default", "myweb", conditions.Available)
	waitCondition(t, &appv1.AppService{}, samplesNS, "nginx-app", conditions.Available)
	kubectl(t, "patch", "-n", "default", "myweb/myweb", "--type", "merge", "-p",
		`{"spec":{"pageContentHtml":"<h1>served by the new version</h1>\n"}}`)
	waitHTTP(t, servedAt(t, "default", "myweb"), "served by the new version")
}

// podsByTutorialLabel waits until `kubectl get pods -n ns -l app=<name>`, as seeds 003 and 004 have their
// readers type it, lists want Running pods and no other.
func podsByTutorialLabel(t *testing.T, ns, name string, want int) {
	t.Helper()
	eventually(t, 3*time.Minute, fmt.Sprintf("kubectl get pods -n %s -l app=%s: %d Running pods", ns, name, want), func() (bool, string) {
		out := kubectl(t, "get", "pods", "-n", ns, "-l", "app="+name,
			"-o", "jsonpath={range .items[*]}{.status.phase}{\"\\n\"}{end}")
		phases := strings.Fields(out)
		running := 0
		for _, p := range phases {
			if p == string(corev1.PodRunning) {
				running++
			}
		}
		return running == want && len(phases) == want, fmt.Sprintf("phases %v", phases)
	})
}

// 5. operator-sdk scorecard against the installed operator: every test a real pod, every one passes. The
// samples leave first (the examples use the same node ports and account), and the finalizer of the
// DatabaseUser drops its account on the way out.
func scorecard(t *testing.T) {
	deleteSamples(t)
	if n := accounts(t, "cnhandsomeguy"); n != 0 {
		t.Fatalf("the DatabaseUser was deleted but its account is still in the database (%d rows)", n)
	}
	freshNamespace(t, scoreNS)
	// The operator101 suite creates the examples: its pods run as a ServiceAccount allowed to (admin in the
	// namespace, which OLM's aggregated roles extend to the four kinds).
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "scorecard", Namespace: scoreNS}})
	create(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scorecard-admin", Namespace: scoreNS},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scorecard", Namespace: scoreNS}},
	})
	// The exit status says whether every test passed; the JSON says which did not.
	out, runErr := tryRun(nil, f.operatorSDK, "scorecard", "bundle", "--namespace", scoreNS, "--service-account", "scorecard",
		"--untar-image", f.helperImg, "--storage-image", f.helperImg, "--wait-time", "300s", "--output", "json")
	i := strings.Index(out, "{")
	if i < 0 {
		t.Fatalf("scorecard: %v\n%s", runErr, out)
	}
	var list scapiv1alpha3.TestList
	if err := json.Unmarshal([]byte(out[i:]), &list); err != nil {
		t.Fatalf("scorecard output: %v\n%s", err, out)
	}
	// Every configured test passes: operator101's spec-descriptors stands in for olm-spec-descriptors, which
	// matches examples to CRDs by kind alone (docs/contributing/packaging.md).
	passed := 0
	for _, test := range list.Items {
		for _, r := range test.Status.Results {
			if r.State == scapiv1alpha3.PassState {
				passed++
				continue
			}
			t.Errorf("scorecard %s (%s): %s %v %v", r.Name, test.Spec.Image, r.State, r.Errors, r.Suggestions)
		}
	}
	if len(list.Items) != 7 || passed != 7 || runErr != nil {
		t.Errorf("scorecard ran %d tests, %d passed; want 7 of 7 (exit: %v)", len(list.Items), passed, runErr)
	}
	t.Logf("scorecard: %d/%d passed, each as a pod in %s", passed, len(list.Items), scoreNS)
}

// 6. Uninstall: the Subscription and the CSV go, the operator with them; as docs/admin/uninstall.md says, OLM leaves the
// CRDs and the CRs, so workloads keep running unmanaged, and deleting a CR afterwards still removes its
// children (the garbage collector follows the owner references).
func uninstallKeepsWorkloads(t *testing.T) {
	kubectl(t, "apply", "-f", "config/samples/operator_v1_myweb.yaml")
	waitCondition(t, &operatorv1.MyWeb{}, "default", "myweb", conditions.Available)
	uninstall(t, opNS)
	eventually(t, 2*time.Minute, "the operator Deployment gone", func() (bool, string) {
		err := get(&appsv1.Deployment{}, opNS, deployment)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	var crd apiextensionsv1.CustomResourceDefinition
	if err := get(&crd, "", "mywebs.operator.k8s-summit.org"); err != nil {
		t.Fatalf("the CRD is gone after uninstall: %v", err)
	}
	waitHTTP(t, servedAt(t, "default", "myweb"), "<h1>Hello, World!</h1>")
	kubectl(t, "delete", "-n", "default", "myweb/myweb", "--wait=true", "--timeout=120s")
	eventually(t, 2*time.Minute, "the MyWeb's children collected", func() (bool, string) {
		errD := get(&appsv1.Deployment{}, "default", "myweb")
		errS := get(&corev1.Service{}, "default", "myweb")
		return apierrors.IsNotFound(errD) && apierrors.IsNotFound(errS), fmt.Sprint(errD, errS)
	})
}

// TestOperatorSDKRunBundle is the operator developer's path (4.): run bundle at the newest release from the local
// registry, run bundle-upgrade to this tree's version, cleanup. The index image is the local opm image, an empty
// file-based catalog as operator-sdk takes its default one: run bundle puts the release alone in a channel of its
// own, and bundle-upgrade adds this tree's bundle replacing it. (Upgrades from every earlier release are
// TestOLM's and the chaos upgrade's.)
func TestOperatorSDKRunBundle(t *testing.T) {
	clearInstalls(t)
	freshNamespace(t, sdkNS)
	// The CLI pulls the bundle and the index image itself, verifying TLS against the registry's CAs
	// (SSL_CERT_FILE); the registry pod it starts serves the catalog it made from them, and pulls nothing (OLM
	// unpacks the bundle, through the node's containerd, as for any catalog).
	var cas []byte
	if f.certDir != "" {
		files, err := filepath.Glob(filepath.Join(f.certDir, "*.crt"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no *.crt in %s: %v", f.certDir, err)
		}
		for _, p := range files {
			ca, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			cas = append(append(cas, ca...), '\n')
		}
	}
	trusted, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	bundleCA := t.TempDir() + "/ca.crt"
	if err := os.WriteFile(bundleCA, append(append(trusted, '\n'), cas...), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"SSL_CERT_FILE=" + bundleCA}
	t.Cleanup(func() { _, _ = tryRun(env, f.operatorSDK, "cleanup", "operator101", "-n", sdkNS, "--timeout", "3m") })
	revokeReleaseNeeds := grantReleaseNeeds(t, sdkNS)

	// The newest release by its digest, as pods and this machine name the registry. A release keeps its path in
	// any registry it is copied to (hack/cluster/release-images.sh).
	registry, _, _ := strings.Cut(f.bundleImgs, "/")
	all := releases(t)
	head := all[len(all)-1]
	_, path, _ := strings.Cut(head.bundle, "/")
	run(t, env, f.operatorSDK, "run", "bundle", registry+"/"+path, "-n", sdkNS, "--index-image", f.opmImg, "--timeout", "5m")
	waitCSV(t, sdkNS, "operator101.v"+head.version, operatorsv1alpha1.CSVPhaseSucceeded, time.Minute)
	operatorPod(t, sdkNS, head.version)

	revokeReleaseNeeds()
	run(t, env, f.operatorSDK, "run", "bundle-upgrade", f.bundleImgs+":v"+newVersion, "-n", sdkNS, "--timeout", "5m")
	waitCSV(t, sdkNS, newCSV, operatorsv1alpha1.CSVPhaseSucceeded, time.Minute)
	operatorPod(t, sdkNS, newVersion)

	run(t, env, f.operatorSDK, "cleanup", "operator101", "-n", sdkNS, "--timeout", "3m")
	eventually(t, 2*time.Minute, "run bundle's install cleaned up", func() (bool, string) {
		var csvs operatorsv1alpha1.ClusterServiceVersionList
		var subs operatorsv1alpha1.SubscriptionList
		var deps appsv1.DeploymentList
		_ = c.List(context.Background(), &csvs, client.InNamespace(sdkNS))
		_ = c.List(context.Background(), &subs, client.InNamespace(sdkNS))
		_ = c.List(context.Background(), &deps, client.InNamespace(sdkNS))
		left := len(csvs.Items) + len(subs.Items) + len(deps.Items)
		return left == 0, fmt.Sprintf("%d CSVs, %d Subscriptions, %d Deployments left", len(csvs.Items), len(subs.Items), len(deps.Items))
	})
}

// --- helpers ----------------------------------------------------------------------------------------------

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// targetSecret is the admin Secret of the DatabaseTargets: the project's MariaDB, at the node address, with
// the CA that signed its certificate.
func targetSecret(ns string) *corev1.Secret {
	env := mariadb()
	data := map[string]string{"host": env["MARIADB_HOST"], "port": env["MARIADB_PORT"],
		"username": env["MARIADB_ADMIN_USER"], "password": env["MARIADB_ADMIN_PASSWORD"]}
	if f := env["MARIADB_CA_FILE"]; f != "" {
		ca, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		data["ca.crt"] = string(ca)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "mariadb-target", Namespace: ns}, StringData: data}
}

// targetTLS is VerifyCA when the project's MariaDB runs with TLS (hack/cluster/e2e.sh starts it so), which
// checks its certificate against the CA in the admin Secret; its name is the node address, which VerifyCA
// does not check.
func targetTLS() mygroupv1alpha1.DatabaseTargetTLS {
	if mariadb()["MARIADB_CA_FILE"] != "" {
		return mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSVerifyCA}
	}
	return mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSDisabled}
}

func mariadb() map[string]string {
	raw, err := os.ReadFile(f.mariadbEnv)
	if err != nil {
		panic(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

// mariadbDSN is the go-sql-driver DSN of the e2e's MariaDB for user, or for its admin account when user is "".
func mariadbDSN(user, password string) string {
	env := mariadb()
	if user == "" {
		user, password = env["MARIADB_ADMIN_USER"], env["MARIADB_ADMIN_PASSWORD"]
	}
	return fmt.Sprintf("%s:%s@tcp(%s:%s)/", user, password, env["MARIADB_HOST"], env["MARIADB_PORT"])
}

// adminDB connects to the e2e's MariaDB as its admin until the test and its cleanups end: a cleanup the test
// registers after it still has the connection (cleanups run last first), which a deferred Close would have
// closed before any cleanup ran.
func adminDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", mariadbDSN("", ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// login connects as user and returns CURRENT_USER().
func login(t *testing.T, user, password string) string {
	t.Helper()
	db, err := sql.Open("mysql", mariadbDSN(user, password))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var who string
	if err := db.QueryRow("SELECT CURRENT_USER()").Scan(&who); err != nil {
		t.Fatalf("login as %s: %v", user, err)
	}
	return who
}

// accounts counts the database accounts named user (as the admin).
func accounts(t *testing.T, user string) int {
	t.Helper()
	db, err := sql.Open("mysql", mariadbDSN("", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User = ?", user).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// approve approves the InstallPlan that installs csv, once OLM made it.
func approve(t *testing.T, ns, csv string) {
	t.Helper()
	approvePlan(t, ns, csv, func(csvs []string) bool { return slices.Contains(csvs, csv) })
}

// approvePlan approves the InstallPlan the operator101 Subscription in ns points at, once it waits for approval
// and its CSVs match (what, in words), and returns its name. Approving a plan OLM is still writing (while it
// unpacks the bundle) makes OLM's own update of it conflict, and OLM then makes another plan, which waits for
// approval for ever: only the Subscription's current plan, in phase RequiresApproval, is approved.
func approvePlan(t *testing.T, ns, what string, match func(csvs []string) bool) string {
	t.Helper()
	var name string
	eventually(t, 5*time.Minute, "InstallPlan for "+what+" approved", func() (bool, string) {
		var sub operatorsv1alpha1.Subscription
		if err := get(&sub, ns, "operator101"); err != nil {
			return false, err.Error()
		}
		if sub.Status.InstallPlanRef == nil {
			return false, "the Subscription names no InstallPlan yet"
		}
		var p operatorsv1alpha1.InstallPlan
		if err := get(&p, ns, sub.Status.InstallPlanRef.Name); err != nil {
			return false, err.Error()
		}
		switch {
		case !match(p.Spec.ClusterServiceVersionNames):
			return false, fmt.Sprintf("InstallPlan %s is for %v", p.Name, p.Spec.ClusterServiceVersionNames)
		case p.Spec.Approved:
		case p.Status.Phase != operatorsv1alpha1.InstallPlanPhaseRequiresApproval:
			return false, fmt.Sprintf("InstallPlan %s in phase %q", p.Name, p.Status.Phase)
		default:
			patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
			p.Spec.Approved = true
			if err := c.Patch(context.Background(), &p, patch); err != nil {
				return false, err.Error()
			}
		}
		name = p.Name
		return true, ""
	})
	return name
}

func waitCSV(t *testing.T, ns, name string, phase operatorsv1alpha1.ClusterServiceVersionPhase, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "CSV "+name+" "+string(phase), func() (bool, string) {
		var csv operatorsv1alpha1.ClusterServiceVersion
		if err := get(&csv, ns, name); err != nil {
			return false, err.Error()
		}
		// An AllNamespaces install shows a copy of its CSV in every namespace: only the original counts.
		original := csv.Status.Reason != operatorsv1alpha1.CSVReasonCopied
		return original && csv.Status.Phase == phase, fmt.Sprintf("%s %s: %s", csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
	})
}

// operatorPod waits for the operator's pod running the image of version (tag), and returns it.
func operatorPod(t *testing.T, ns, version string) corev1.Pod {
	t.Helper()
	return operatorPodOf(t, ns, version, operatorImage(t, version))
}

// operatorPodOf waits for a Running, ready operator pod in ns whose image want accepts (what is version's).
func operatorPodOf(t *testing.T, ns, version string, want func(string) bool) corev1.Pod {
	t.Helper()
	var found corev1.Pod
	eventually(t, 3*time.Minute, "operator pod "+version+" Running and ready", func() (bool, string) {
		var pods corev1.PodList
		if err := c.List(context.Background(), &pods, client.InNamespace(ns),
			client.MatchingLabels{"control-plane": "controller-manager"}); err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && want(p.Spec.Containers[0].Image) &&
				p.Status.Phase == corev1.PodRunning && podReady(&p) {
				found = p
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d operator pods", len(pods.Items))
	})
	return found
}

// operatorImage tells the operator image of version: a release's is its image by digest
// (config/catalog/releases); the version of this tree is tagged vVERSION.
func operatorImage(t *testing.T, version string) func(string) bool {
	t.Helper()
	if op, _, ok := released(t, version); ok {
		return func(img string) bool { return img == op }
	}
	return func(img string) bool { return strings.HasSuffix(img, ":v"+version) }
}

// released is the operator and bundle images (by digest) that config/catalog/releases records for version.
// releases reads config/catalog/releases, oldest first.
func releases(t *testing.T) []release {
	t.Helper()
	rs, err := readReleases(f.root)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func released(t *testing.T, version string) (operator, bundle string, ok bool) {
	t.Helper()
	for _, r := range releases(t) {
		if r.version == version {
			return r.operator, r.bundle, true
		}
	}
	return "", "", false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func waitCondition(t *testing.T, obj client.Object, ns, name, condType string) {
	t.Helper()
	eventually(t, 4*time.Minute, fmt.Sprintf("%T %s/%s %s", obj, ns, name, condType), func() (bool, string) {
		if err := get(obj, ns, name); err != nil {
			return false, err.Error()
		}
		conds := conditionsOf(obj)
		cond := meta.FindStatusCondition(conds, condType)
		if cond == nil {
			return false, "no condition yet"
		}
		return cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == obj.GetGeneration(),
			fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
	})
}

func conditionsOf(obj client.Object) []metav1.Condition {
	g, ok := obj.(conditions.Getter)
	if !ok {
		panic(fmt.Sprintf("no conditions on %T", obj))
	}
	return g.GetConditions()
}

func waitAtPhase(t *testing.T, ns, name, phase string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "At "+name+" "+phase, func() (bool, string) {
		var at cnatv1alpha1.At
		if err := get(&at, ns, name); err != nil {
			return false, err.Error()
		}
		if at.Status.Phase == cnatv1alpha1.PhaseFailed {
			t.Fatalf("At %s FAILED: %s", name, at.Status.Message)
		}
		return at.Status.Phase == phase, at.Status.Phase + " " + at.Status.Message
	})
}

// releasedSample writes config/samples' file as the commit of release version has it (config/catalog/releases):
// the example that release's users had, which its CRDs accept (this tree's samples name fields they lack). It
// returns the file's path.
func releasedSample(t *testing.T, version, file string) string {
	t.Helper()
	for _, r := range releases(t) {
		if r.version == version {
			path := filepath.Join(t.TempDir(), file)
			if err := os.WriteFile(path, []byte(run(t, nil, "git", "show", r.commit+":config/samples/"+file)), 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}
	}
	t.Fatalf("config/catalog/releases records no release %s", version)
	return ""
}

// servedAt is the URL of the Service name in ns on the node address, by its first port's node port: the one
// the object names, or the one the cluster chose (the samples name none).
func servedAt(t *testing.T, ns, name string) string {
	t.Helper()
	var port int32
	eventually(t, 2*time.Minute, "Service "+ns+"/"+name+" with a node port", func() (bool, string) {
		var svc corev1.Service
		if err := get(&svc, ns, name); err != nil {
			return false, err.Error()
		}
		if len(svc.Spec.Ports) == 0 || svc.Spec.Ports[0].NodePort == 0 {
			return false, fmt.Sprintf("type %s, ports %v", svc.Spec.Type, svc.Spec.Ports)
		}
		port = svc.Spec.Ports[0].NodePort
		return true, ""
	})
	return fmt.Sprintf("http://%s:%d/", f.nodeIP, port)
}

// waitHTTP polls url until it answers 200 with a body containing want.
func waitHTTP(t *testing.T, url, want string) {
	t.Helper()
	pollGet(t, &http.Client{Timeout: 5 * time.Second}, url, "GET "+url, 3*time.Minute, want)
}

// pollGet GETs url with hc until it answers 200 with a body containing want, failing the test after timeout;
// what names the wait in the log.
func pollGet(t *testing.T, hc *http.Client, url, what string, timeout time.Duration, want string) {
	t.Helper()
	eventually(t, timeout, what, func() (bool, string) {
		resp, err := hc.Get(url)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), want),
			fmt.Sprintf("%d %q", resp.StatusCode, strings.TrimSpace(string(body)))
	})
}

// sampleUIDs identifies the samples' objects.
func sampleUIDs(t *testing.T) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, o := range []struct {
		obj      client.Object
		ns, name string
	}{
		{&operatorv1.MyWeb{}, "default", "myweb"},
		{&appv1.AppService{}, samplesNS, "nginx-app"},
		{&cnatv1alpha1.At{}, samplesNS, "example-at"},
		{&mygroupv1alpha1.DatabaseUser{}, samplesNS, "cnhandsomeguy"},
	} {
		if err := get(o.obj, o.ns, o.name); err != nil {
			t.Fatalf("%T %s: %v", o.obj, o.name, err)
		}
		out[fmt.Sprintf("%T", o.obj)] = o.obj.GetUID()
	}
	return out
}

// deleteSamples deletes the samples while the operator runs (the DatabaseUser's finalizer drops the account).
func deleteSamples(t *testing.T) {
	t.Helper()
	_, _ = tryRun(nil, f.kubectl, "delete", "--ignore-not-found", "--wait=true", "--timeout=120s", "-n", "default", "myweb/myweb")
	_, _ = tryRun(nil, f.kubectl, "delete", "--ignore-not-found", "--wait=true", "--timeout=120s", "-n", samplesNS,
		"appservices.app.example.com,appservices.batch.schwarzeni.github.com,ats.cnat.programming-kubernetes.info,"+
			"databaseusers.mygroup.handsomeguy.cn", "--all")
}

// uninstall removes an install the way the docs say: the Subscription, then the CSV, waiting until both are gone.
func uninstall(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	var subs operatorsv1alpha1.SubscriptionList
	if err := c.List(ctx, &subs, client.InNamespace(ns)); err == nil {
		for i := range subs.Items {
			_ = c.Delete(ctx, &subs.Items[i])
		}
	}
	// Copies of another namespace's AllNamespaces install are not this install's: OLM owns them.
	originals := func() []operatorsv1alpha1.ClusterServiceVersion {
		var csvs operatorsv1alpha1.ClusterServiceVersionList
		_ = c.List(ctx, &csvs, client.InNamespace(ns))
		return slices.DeleteFunc(csvs.Items, func(csv operatorsv1alpha1.ClusterServiceVersion) bool {
			return csv.Status.Reason == operatorsv1alpha1.CSVReasonCopied
		})
	}
	for _, csv := range originals() {
		_ = c.Delete(ctx, &csv)
	}
	eventually(t, 3*time.Minute, "Subscription and CSVs gone from "+ns, func() (bool, string) {
		_ = c.List(ctx, &subs, client.InNamespace(ns))
		n := len(originals())
		return len(subs.Items)+n == 0, fmt.Sprintf("%d Subscriptions, %d CSVs", len(subs.Items), n)
	})
}

// clearInstalls removes what an interrupted earlier run may have left: the tests' installs of the package
// overlap (an AllNamespaces install overlaps every other), and OLM refuses a second install whose namespaces
// overlap the first's.
func clearInstalls(t *testing.T) {
	t.Helper()
	for _, ns := range []string{opNS, sdkNS, ownNS, singleNS} {
		uninstall(t, ns)
		deleteNamespace(t, ns)
	}
}

func ownedBy(refs []metav1.OwnerReference, kind, name string) bool {
	return slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.Kind == kind && r.Name == name })
}
