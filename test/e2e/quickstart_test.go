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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	batchv1alpha1 "github.com/operator101/operator101/api/batch/v1alpha1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/test/docs"
)

// The names the README's quick start uses.
const (
	quickNS       = "operator101-system"
	quickSamples  = "demo"
	quickTarget   = "that-database"
	quickDatabase = "demo_app" // the Database sample's, config/samples/mygroup_v1alpha1_database.yaml
)

// TestQuickStartFromTheREADME runs the README's quick start as a new user types it: its blocks marked
// <!-- e2e:quickstart -->, read from README.md, with bash, the e2e's MariaDB in the MARIADB_* variables the
// README asks for. The released catalog it names, quay.io/operator101/operator101-catalog:v<newest release>, is
// the committed catalog, published under that name in the registry that mirrors quay.io/operator101 for the
// cluster. Every kind then works (pages served, the At's output, a login with the DatabaseUser's account).
// Then docs/admin/upgrade.md's upgrade block, to this tree's version (its catalog, the releases and this tree, published
// as that release's catalog would be), keeps every object, and docs/admin/uninstall.md's uninstall block removes every
// custom resource of every kind (the account dropped), the operator and its namespace. hack/cluster/e2e.sh runs
// it first, on a cluster where no other operator101 install runs and no operator101 object exists: the
// uninstall deletes every object of every kind in the cluster, as it says.
func TestQuickStartFromTheREADME(t *testing.T) {
	quickstart := readBlocks(t, "README.md", "quickstart")
	upgradeBlocks := readBlocks(t, "docs/admin/upgrade.md", "upgrade")
	uninstallBlocks := readBlocks(t, "docs/admin/uninstall.md", "uninstall")
	clearInstalls(t)
	refuseUnlessEmpty(t)
	// The Database sample's database, which the uninstall keeps (cleanupPolicy Skip), is the test's to drop once
	// the uninstall ran (cleanups run last first): it did not exist before (refuseUnlessEmpty), and a second run
	// would find it taken (DatabaseNotOwned).
	admin := adminDB(t)
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP DATABASE IF EXISTS `" + quickDatabase + "`"); err != nil {
			t.Errorf("dropping database %s: %v", quickDatabase, err)
		}
	})
	t.Cleanup(func() { quickStartCleanup(t, uninstallBlocks) })

	// The catalog the quick start installs: the newest release, released again under a name of the user's own
	// (the README's way where quay.io/operator101 is not mirrored), on the local cluster; on a cluster of your own,
	// the one it names by default, where the cluster pulls quay.io/operator101 from. The upgrade block's catalog,
	// this tree's version, where the cluster pulls quay.io/operator101 from.
	host, _, _ := strings.Cut(f.bundleImgs, "/")
	mirror := host + "/operator101/operator101-catalog"
	catalog, ownBase := releaseUnderOwnName(t)
	if catalog == "" {
		publishCommittedCatalogAs(t, mirror+":v"+headVersion)
	}
	copyImage(t, f.catalogImg, mirror+":v"+newVersion)

	env := mariadb()
	if env["MARIADB_CA_FILE"] == "" {
		t.Fatal("the quick start's DatabaseTarget verifies the server's CA: the e2e's MariaDB has no MARIADB_CA_FILE")
	}
	var vars []string
	for _, k := range []string{"MARIADB_HOST", "MARIADB_PORT", "MARIADB_ADMIN_USER", "MARIADB_ADMIN_PASSWORD", "MARIADB_CA_FILE"} {
		vars = append(vars, k+"="+env[k])
	}
	if catalog != "" {
		vars = append(vars, "CATALOG_IMG="+catalog)
	}
	start := time.Now()
	runBlocks(t, "README.md quick start", quickstart, vars...)
	t.Logf("the quick start ran in %s", time.Since(start).Round(time.Second))

	// Every kind works, on the newest release (as released under the user's name, when it was): the README's
	// Subscription names no version, and a new user gets the head of stable.
	waitCSV(t, quickNS, headCSV, operatorsv1alpha1.CSVPhaseSucceeded, time.Minute)
	if ownBase != "" {
		operatorPodOf(t, quickNS, headVersion, func(img string) bool { return strings.HasPrefix(img, ownBase+"@sha256:") })
	} else {
		operatorPod(t, quickNS, headVersion)
	}
	quickStartWorks(t)
	uids := quickStartUIDs(t)

	// docs/admin/upgrade.md's upgrade, to this tree's version.
	runBlocks(t, "docs/admin/upgrade.md upgrade", upgradeBlocks, "NEW_VERSION="+newVersion)
	operatorPod(t, quickNS, newVersion)
	eventually(t, 3*time.Minute, headCSV+" replaced", func() (bool, string) {
		err := get(&operatorsv1alpha1.ClusterServiceVersion{}, quickNS, headCSV)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	waitCondition(t, &mygroupv1alpha1.DatabaseUser{}, quickSamples, "cnhandsomeguy", mygroupv1alpha1.ConditionReady)
	quickStartWorks(t)
	// This tree's operator: Ready on every kind, and the metrics with the monitor's credentials, installed from
	// its catalog on a cluster without the Prometheus Operator's CRDs.
	noPrometheusOperatorCRDs(t)
	everyKindReady(t)
	scrapeWithMonitorCredentials(t)
	if after := quickStartUIDs(t); fmt.Sprint(after) != fmt.Sprint(uids) {
		t.Errorf("the upgrade replaced objects: UIDs %v, before %v", after, uids)
	}

	// docs/admin/uninstall.md's uninstall.
	runBlocks(t, "docs/admin/uninstall.md uninstall", uninstallBlocks)
	if left := operator101Objects(t); len(left) > 0 {
		t.Errorf("after the uninstall: %v", left)
	}
	if n := accounts(t, "cnhandsomeguy"); n != 0 {
		t.Errorf("the DatabaseUser's account is still on the server (%d) after the uninstall", n)
	}
	// The Database's cleanupPolicy is Skip (the default): its database stays (docs/admin/uninstall.md).
	if charset := databaseCharset(t, quickDatabase); charset != "utf8mb4" {
		t.Errorf("after the uninstall, database %s has character set %q, want it kept (utf8mb4)", quickDatabase, charset)
	}
	if err := get(&appsv1.Deployment{}, quickNS, deployment); !apierrors.IsNotFound(err) {
		t.Errorf("the operator's Deployment after the uninstall: %v", err)
	}
	if err := get(&corev1.Namespace{}, "", quickNS); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after the uninstall: %v", quickNS, err)
	}
	if err := get(&apiextensionsv1.CustomResourceDefinition{}, "", "mywebs.operator.k8s-summit.org"); err != nil {
		t.Errorf("the CRDs stay after the uninstall (docs/admin/uninstall.md): %v", err)
	}
}

func readBlocks(t *testing.T, file, name string) []string {
	t.Helper()
	blocks, err := docs.Blocks(filepath.Join(f.root, file), name)
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// runBlocks runs each block with bash (-e, -o pipefail), as written, in the repository's root, with the e2e's
// kubectl first on the PATH, its kubeconfig, and env.
func runBlocks(t *testing.T, what string, blocks []string, env ...string) {
	t.Helper()
	runBlocksIn(t, f.root, what, blocks, env...)
}

// runBlocksIn runs the blocks as runBlocks does, in dir.
func runBlocksIn(t *testing.T, dir, what string, blocks []string, env ...string) {
	t.Helper()
	for i, b := range blocks {
		out, err := runBlock(dir, b, env...)
		t.Logf("%s, block %d:\n%s\n---\n%s", what, i+1, b, out)
		if err != nil {
			logQuickStartState(t)
			t.Fatalf("%s, block %d: %v", what, i+1, err)
		}
	}
}

func runBlock(dir, block string, env ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", block)
	cmd.Env = append(append(os.Environ(), "KUBECONFIG="+f.kubeconfig,
		"PATH="+filepath.Dir(f.kubectl)+string(os.PathListSeparator)+os.Getenv("PATH")), env...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// logQuickStartState logs what OLM and the operator did in the quick start's namespaces, for a block that failed.
func logQuickStartState(t *testing.T) {
	t.Helper()
	for _, args := range [][]string{
		{"get", "catalogsource,subscription,installplan,csv,deployment,pod", "-n", quickNS, "-o", "wide"},
		{"get", "csv", "-n", quickNS, "-o", "jsonpath={range .items[*]}{.metadata.name}: {.status.phase} {.status.reason}: {.status.message}{\"\\n\"}{range .status.requirementStatus[*]}  {.kind} {.name}: {.status} {.message}{\"\\n\"}{end}{end}"},
		{"get", "subscription", "-n", quickNS, "-o", "jsonpath={range .items[*].status.conditions[*]}{.type}={.status} {.reason}: {.message}{\"\\n\"}{end}"},
		{"describe", "pod", "-n", quickNS},
		{"get", "events", "-n", quickNS, "--sort-by=.lastTimestamp"},
		{"get", "myweb,appservices.app.example.com,appservices.batch.schwarzeni.github.com,at,databaseuser,mydb", "-n", quickSamples, "-o", "wide"},
		{"get", "databasetarget", "-o", "wide"},
	} {
		out, err := tryRun(nil, f.kubectl, args...)
		t.Logf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// copyImage copies src to dst (skopeo, with the TLS rule of hack/registry.sh) unless they name the same
// repository path and tag in the same registry's mirror.
func copyImage(t *testing.T, src, dst string) {
	t.Helper()
	_, srcPath, _ := strings.Cut(src, "/")
	_, dstPath, _ := strings.Cut(dst, "/")
	if srcPath == dstPath {
		return // the local cluster: one registry, serving both names
	}
	env := []string{"IMAGE_TAG_BASE=" + strings.TrimSuffix(f.bundleImgs, "-bundle"), "REGISTRY_CERT_DIR=" + f.certDir}
	run(t, env, "bash", "-c", `source hack/registry.sh && skopeo copy --all $(tls_flags src "$1") $(tls_flags dest "$2") "docker://$1" "docker://$2"`,
		"-", src, dst)
}

// quickStartWorks checks what the quick start says then works: the MyWeb page and both AppServices served on
// their node ports, the At's output, a login with the DatabaseUser's account, the Database's database on the
// server with the sample's character set.
func quickStartWorks(t *testing.T) {
	t.Helper()
	waitHTTP(t, servedAt(t, quickSamples, "myweb"), "<h1>Hello, World!</h1>")
	waitHTTP(t, servedAt(t, quickSamples, "nginx-app"), "")
	waitHTTP(t, servedAt(t, quickSamples, "nginx-app-v1alpha1"), "")
	if logs := kubectl(t, "logs", "-n", quickSamples, at.PodName("example-at")); strings.TrimSpace(logs) != "YAY" {
		t.Errorf("the At pod's log is %q, want YAY", logs)
	}
	if who := login(t, "cnhandsomeguy", "changeit"); who != "cnhandsomeguy@%" {
		t.Errorf("logged in as %q, want cnhandsomeguy@%%", who)
	}
	if charset := databaseCharset(t, quickDatabase); charset != "utf8mb4" {
		t.Errorf("database %s on the server: character set %q, want utf8mb4 (the Database sample's)", quickDatabase, charset)
	}
}

// databaseCharset is the default character set of database name on the e2e's MariaDB, "" when there is no such
// database (as the admin).
func databaseCharset(t *testing.T, name string) string {
	t.Helper()
	db, err := sql.Open("mysql", mariadbDSN("", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var charset string
	err = db.QueryRow("SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&charset)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("reading database %s: %v", name, err)
	}
	return charset
}

// quickStartUIDs are the UIDs of the quick start's samples and DatabaseTarget.
func quickStartUIDs(t *testing.T) map[string]types.UID {
	t.Helper()
	uids := map[string]types.UID{}
	for name, o := range map[string]client.Object{
		"myweb": &operatorv1.MyWeb{}, "nginx-app": &appv1.AppService{}, "nginx-app-v1alpha1": &batchv1alpha1.AppService{},
		"example-at": &cnatv1alpha1.At{}, "cnhandsomeguy": &mygroupv1alpha1.DatabaseUser{},
		"demo-app": &mygroupv1alpha1.Database{},
	} {
		if err := get(o, quickSamples, name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		uids[name] = o.GetUID()
	}
	var dt mygroupv1alpha1.DatabaseTarget
	if err := get(&dt, "", quickTarget); err != nil {
		t.Fatal(err)
	}
	uids[quickTarget] = dt.UID
	return uids
}

// operator101Objects names every object of operator101's seven kinds in the cluster.
func operator101Objects(t *testing.T) []string {
	t.Helper()
	var names []string
	for kind, list := range map[string]client.ObjectList{
		"MyWeb": &operatorv1.MyWebList{}, "AppService.app.example.com": &appv1.AppServiceList{},
		"AppService.batch.schwarzeni.github.com": &batchv1alpha1.AppServiceList{}, "At": &cnatv1alpha1.AtList{},
		"DatabaseUser": &mygroupv1alpha1.DatabaseUserList{}, "DatabaseTarget": &mygroupv1alpha1.DatabaseTargetList{},
		"Database": &mygroupv1alpha1.DatabaseList{},
	} {
		err := c.List(context.Background(), list)
		if meta.IsNoMatchError(err) {
			continue // no CRD yet
		} else if err != nil {
			t.Fatalf("listing %s: %v", kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range items {
			m, err := meta.Accessor(o)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, kind+" "+m.GetNamespace()+"/"+m.GetName())
		}
	}
	return names
}

// refuseUnlessEmpty stops the test where the quick start would collide with what runs: an install in
// operator101-system (make demo's), its namespaces, any object of operator101's kinds, which the uninstall
// would delete, or a database of the Database sample's name on the server, which it would not own.
func refuseUnlessEmpty(t *testing.T) {
	t.Helper()
	for _, ns := range []string{quickNS, quickSamples} {
		if err := get(&corev1.Namespace{}, "", ns); err == nil {
			t.Fatalf("namespace %s exists (make demo's? make demo-down removes it): the quick start creates it", ns)
		}
	}
	if left := operator101Objects(t); len(left) > 0 {
		t.Fatalf("the quick start's uninstall deletes every operator101 object of the cluster, and these exist: %v", left)
	}
	if databaseCharset(t, quickDatabase) != "" {
		t.Fatalf("database %s exists on the server (an earlier quick start's, kept by its Database's cleanupPolicy Skip?): "+
			"the quick start's Database would be DatabaseNotOwned; drop it first", quickDatabase)
	}
}

// quickStartCleanup removes the samples' namespace, and undoes what a failed run left: the uninstall block (its
// errors ignored), then the Subscription and CSVs, the namespaces and the DatabaseTarget.
func quickStartCleanup(t *testing.T, uninstallBlocks []string) {
	t.Helper()
	if err := get(&corev1.Namespace{}, "", quickNS); apierrors.IsNotFound(err) && len(operator101Objects(t)) == 0 {
		// The uninstall block ran; the samples' namespace, which the quick start made, is the test's to remove
		// (a second run on this cluster refuses to start while it exists).
		deleteNamespace(t, quickSamples)
		return
	}
	for _, b := range uninstallBlocks {
		out, err := runBlock(f.root, "set +e\n"+b) // every command, whatever the one before did
		t.Logf("cleanup: the uninstall block: %v\n%s", err, out)
	}
	uninstall(t, quickNS)
	deleteNamespace(t, quickSamples)
	deleteNamespace(t, quickNS)
	dt := &mygroupv1alpha1.DatabaseTarget{}
	dt.Name = quickTarget
	if err := c.Delete(context.Background(), dt); err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		t.Errorf("deleting DatabaseTarget %s: %v", quickTarget, err)
	}
}
