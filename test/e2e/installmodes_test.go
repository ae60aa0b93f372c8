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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appv1 "github.com/operator101/operator101/api/app/v1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/api/conditions"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/test/olmrbac"
)

const (
	ownNS          = "operator101-e2e-own"           // OwnNamespace: the operator and its tenants
	singleNS       = "operator101-e2e-single"        // SingleNamespace: the operator...
	singleTargetNS = "operator101-e2e-single-target" // ...and the one namespace it serves, a restricted tenant
)

// TestOLMNamespacedInstallModes installs operator101 through a Subscription in each namespaced install mode the
// CSV declares, both at once (two installs whose namespaces do not overlap, as docs/admin/configuration.md
// splits the work), and proves from the real cluster that OLM scoped each: the authorizer allows every rule in
// its target namespace and nothing on pods, deployments, services, configmaps or secrets outside it (kube-system
// and the other install's namespaces included); the samples reconcile there, each install serves the
// DatabaseTarget whose admin Secret is in its namespace, and neither operator logs a 403. The permission table
// it reads back must be the one docs/admin/security.md shows. TestOLM does the same for AllNamespaces. The
// OwnNamespace install then meets an upgrade OLM must refuse (refusesAnInvalidatingUpgrade).
func TestOLMNamespacedInstallModes(t *testing.T) {
	clearInstalls(t)
	clearDatabaseTargets(t)
	// go test's time for this test leaves out its parallel subtests: the cleanup says how long both took.
	start := time.Now()
	t.Cleanup(func() { t.Logf("both installs, side by side: %s", time.Since(start).Round(time.Second)) })
	modes := []struct {
		mode        operatorsv1alpha1.InstallModeType
		ns, target  string
		extraTarget bool
		// What each install's tenant names, apart from the other's: DatabaseTarget, account (the node ports are
		// the cluster's choice).
		dbTarget, dbUser string
	}{
		{operatorsv1alpha1.InstallModeTypeOwnNamespace, ownNS, ownNS, false, "that-database", "cnhandsomeguy"},
		{operatorsv1alpha1.InstallModeTypeSingleNamespace, singleNS, singleTargetNS, true, "single-database", "cnsingle"},
	}
	for i, m := range modes {
		other := modes[1-i]
		t.Run(string(m.mode), func(t *testing.T) {
			t.Parallel()
			freshNamespace(t, m.ns)
			if m.extraTarget {
				// A tenant's namespace as they commonly are: enforcing the restricted Pod Security Standard.
				freshNamespace(t, m.target)
				kubectl(t, "label", "namespace", m.target, "pod-security.kubernetes.io/enforce=restricted")
			}
			t.Cleanup(func() { uninstall(t, m.ns) })
			start := time.Now()
			if m.mode == operatorsv1alpha1.InstallModeTypeOwnNamespace {
				// From the catalog whose next version OLM must refuse (refusesAnInvalidatingUpgrade, at the end):
				// this tree's version first, approved by hand.
				subscribeFrom(t, f.tightImg, m.ns, []string{m.target}, newCSV, true)
				approve(t, m.ns, newCSV)
			} else {
				subscribe(t, m.ns, []string{m.target}, "", false)
			}
			waitCSV(t, m.ns, newCSV, operatorsv1alpha1.CSVPhaseSucceeded, 5*time.Minute)
			pod := operatorPod(t, m.ns, newVersion)
			if env := watched(t, pod); env != m.target {
				t.Errorf("the operator watches %q, want %q (the OperatorGroup's target)", env, m.target)
			}
			t.Logf("%s install through a Subscription: CSV Succeeded and the operator ready in %s", m.mode,
				time.Since(start).Round(time.Second))

			for _, ch := range olmrbac.TenantKinds {
				for _, verb := range tableVerbs {
					for _, ns := range []string{"kube-system", "default", "", other.ns, other.target} {
						if ns == m.ns || ns == m.target {
							continue
						}
						if allowed(t, m.ns, authorizationv1.ResourceAttributes{Verb: verb, Group: ch.Group, Resource: ch.Resource, Namespace: ns}) {
							t.Errorf("%s: the operator may %s %s.%s in namespace %q, outside its target", m.mode, verb, ch.Resource, ch.Group, ns)
						}
					}
				}
			}
			checkPermissionTable(t, string(m.mode), m.ns, m.target)

			// The samples, in the target namespace.
			if m.extraTarget {
				restrictedTenant(t, m.target)
				// Beside the other install's refused upgrade, which takes longer: nearly free in wall time.
				if !t.Run("ReadinessProbeOnTheKubelet", func(t *testing.T) { readinessProbeOnTheKubelet(t, m.target) }) {
					t.FailNow()
				}
			} else {
				samplesConverge(t, m.target)
			}
			// The DatabaseUser's: a DatabaseTarget for the target namespace whose admin Secret is in the
			// operator's (so this install serves it, and the other leaves it alone); the operator reads the
			// tenant's password Secret there. The sample, with this install's target and account.
			create(t, targetSecret(m.ns))
			dt := databaseTarget(m.dbTarget)
			dt.Spec.AdminSecretRef.Namespace = m.ns
			dt.Spec.AllowedNamespaces = []string{m.target}
			create(t, dt)
			t.Cleanup(func() { _ = c.Delete(context.Background(), dt) })
			raw, err := os.ReadFile(filepath.Join(f.root, "config", "samples", "mygroup_v1alpha1_databaseuser.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			sample := filepath.Join(t.TempDir(), "databaseuser.yaml")
			if err := os.WriteFile(sample, []byte(strings.NewReplacer("that-database", m.dbTarget, "cnhandsomeguy", m.dbUser).Replace(string(raw))), 0o600); err != nil {
				t.Fatal(err)
			}
			kubectl(t, "apply", "-n", m.target, "-f", sample)
			waitCondition(t, &mygroupv1alpha1.DatabaseTarget{}, "", m.dbTarget, mygroupv1alpha1.ConditionReady)
			waitCondition(t, &mygroupv1alpha1.DatabaseUser{}, m.target, m.dbUser, mygroupv1alpha1.ConditionReady)
			if who := login(t, m.dbUser, "changeit"); who != m.dbUser+"@%" {
				t.Errorf("%s: the DatabaseUser sample's account logged in as %q, want %s@%%", m.mode, who, m.dbUser)
			}
			if logs := kubectl(t, "logs", "-n", m.ns, pod.Name); forbiddenLine.MatchString(logs) {
				t.Errorf("%s: the operator was refused something:\n%s", m.mode, strings.Join(forbiddenLine.FindAllString(logs, 5), "\n"))
			}
			// The samples go while the operator runs (before the uninstall the cleanups do).
			kubectl(t, "delete", "-n", m.target, "--wait=true", "--timeout=120s",
				"databaseusers.mygroup.handsomeguy.cn,mywebs.operator.k8s-summit.org,appservices.app.example.com,ats.cnat.programming-kubernetes.info", "--all")
			if n := accounts(t, m.dbUser); n != 0 {
				t.Errorf("%s: the DatabaseUser's account is still on the server (%d) after its deletion", m.mode, n)
			}
			if m.mode == operatorsv1alpha1.InstallModeTypeOwnNamespace {
				refusesAnInvalidatingUpgrade(t, m.ns)
			}
		})
	}
}

// samplesConverge creates the MyWeb, AppService and At samples in ns, and waits until each converged.
func samplesConverge(t *testing.T, ns string) {
	t.Helper()
	myweb := sampleMyWeb(t)
	myweb.Namespace = ns
	create(t, myweb)
	create(t, sampleAppService(t, ns))
	kubectl(t, "apply", "-n", ns, "-f", "config/samples/cnat_v1alpha1_at.yaml")
	waitCondition(t, &operatorv1.MyWeb{}, ns, myweb.Name, conditions.Available)
	waitCondition(t, &appv1.AppService{}, ns, "nginx-app", conditions.Available)
	waitAtPhase(t, ns, "example-at", cnatv1alpha1.PhaseDone, 3*time.Minute)
	waitHTTP(t, servedAt(t, ns, myweb.Name), "<h1>Hello, World!</h1>")
}

// restrictedTenant runs the samples in ns, a namespace enforcing the restricted Pod Security Standard (with a
// UID range, as every namespace of a cluster that admits as OpenShift does). The At sample runs as it is, as
// the range's first UID. The MyWeb and AppService samples name nginx, which runs as root: their pods are
// refused, and each says so (Degraded, ReplicaFailure, with the admission's message). What the guides say to
// write there instead (docs/guides/myweb.md's and appservice.md's blocks marked <!-- e2e:restricted -->: an
// image that runs as non-root, nginxinc/nginx-unprivileged on port 8080, and runAsNonRoot), applied as written,
// converges, its pods running as the range's first UID.
func restrictedTenant(t *testing.T, ns string) {
	t.Helper()
	first, _ := uidRange(t, ns)
	myweb := sampleMyWeb(t)
	myweb.Namespace = ns
	create(t, myweb)
	create(t, sampleAppService(t, ns))
	kubectl(t, "apply", "-n", ns, "-f", "config/samples/cnat_v1alpha1_at.yaml")

	waitAtPhase(t, ns, "example-at", cnatv1alpha1.PhaseDone, 3*time.Minute)
	var atPod corev1.Pod
	if err := get(&atPod, ns, at.PodName("example-at")); err != nil {
		t.Fatal(err)
	}
	if uid := runsAs(&atPod); uid != first {
		t.Errorf("the At's pod ran as UID %d, want %d (the first of namespace %s's range)", uid, first, ns)
	}

	const refused = `violates PodSecurity "restricted:latest"`
	waitConditionWith(t, &operatorv1.MyWeb{}, ns, myweb.Name, conditions.Degraded, conditions.ReasonReplicaFailure, refused)
	waitConditionWith(t, &appv1.AppService{}, ns, "nginx-app", conditions.Degraded, conditions.ReasonReplicaFailure, refused)

	web := applyGuideBlock[operatorv1.MyWeb](t, "docs/guides/myweb.md", "restricted", ns)
	app := applyGuideBlock[appv1.AppService](t, "docs/guides/appservice.md", "restricted", ns)
	waitCondition(t, &operatorv1.MyWeb{}, ns, web.Name, conditions.Available)
	waitCondition(t, &appv1.AppService{}, ns, app.Name, conditions.Available)
	waitHTTP(t, servedAt(t, ns, web.Name), strings.TrimSpace(web.Spec.PageContentHtml))
	waitHTTP(t, servedAt(t, ns, app.Name), "")
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	running := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		running++
		if uid := runsAs(p); uid != first {
			t.Errorf("pod %s runs as UID %d, want %d", p.Name, uid, first)
		}
	}
	if running == 0 {
		t.Errorf("no pod runs in %s", ns)
	}
	t.Logf("restricted tenant %s: the samples as written refused (%s); the guides' MyWeb %s and AppService %s, as written, %d pods running as UID %d",
		ns, refused, web.Name, app.Name, running, first)
}

// applyGuideBlock applies, with kubectl apply -n ns, the one YAML block of the doc file marked
// <!-- e2e:name -->, as written, and returns its object, decoded strictly (a field the type lacks fails the test).
func applyGuideBlock[T any](t *testing.T, file, name, ns string) *T {
	t.Helper()
	blocks := readBlocks(t, file, name)
	if len(blocks) != 1 {
		t.Fatalf("%s: %d blocks marked %s, want 1", file, len(blocks), name)
	}
	var obj T
	if err := yaml.UnmarshalStrict([]byte(blocks[0]), &obj); err != nil {
		t.Fatalf("%s's %s block: %v", file, name, err)
	}
	path := filepath.Join(t.TempDir(), "block.yaml")
	if err := os.WriteFile(path, []byte(blocks[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, the block %s, applied in %s:\n%s", file, name, ns, blocks[0])
	kubectl(t, "apply", "-n", ns, "-f", path)
	return &obj
}

// runsAs is the UID a pod's first container runs as, as its securityContext says (-1: none).
func runsAs(p *corev1.Pod) int64 {
	if sc := p.Spec.Containers[0].SecurityContext; sc != nil && sc.RunAsUser != nil {
		return *sc.RunAsUser
	}
	if p.Spec.SecurityContext != nil && p.Spec.SecurityContext.RunAsUser != nil {
		return *p.Spec.SecurityContext.RunAsUser
	}
	return -1
}

// waitConditionWith waits until obj's condition condType is True with reason and a message containing msg.
func waitConditionWith(t *testing.T, obj client.Object, ns, name, condType, reason, msg string) {
	t.Helper()
	eventually(t, 4*time.Minute, fmt.Sprintf("%T %s/%s %s %s", obj, ns, name, condType, reason), func() (bool, string) {
		if err := get(obj, ns, name); err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(conditionsOf(obj), condType)
		if cond == nil {
			return false, "no condition yet"
		}
		return cond.Status == metav1.ConditionTrue && cond.Reason == reason && strings.Contains(cond.Message, msg),
			fmt.Sprintf("%s %s: %s", cond.Status, cond.Reason, cond.Message)
	})
}

// forbiddenLine is a line of the operator's log about a request the API server refused (403).
var forbiddenLine = regexp.MustCompile(`(?im)^.*(forbidden|cannot (get|list|watch|create|patch|delete) resource).*$`)

// subscribe installs the package into ns through a CatalogSource, an OperatorGroup targeting targets (nil: all
// namespaces) and a Subscription to the stable channel at startingCSV ("" for the channel's head), approved
// by hand when manual.
func subscribe(t *testing.T, ns string, targets []string, startingCSV string, manual bool, env ...corev1.EnvVar) {
	t.Helper()
	subscribeFrom(t, f.catalogImg, ns, targets, startingCSV, manual, env...)
}

// subscribeFrom is subscribe with the catalog image catalogImg.
func subscribeFrom(t *testing.T, catalogImg, ns string, targets []string, startingCSV string, manual bool, env ...corev1.EnvVar) {
	t.Helper()
	create(t, &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Name: "operator101-catalog", Namespace: ns},
		Spec: operatorsv1alpha1.CatalogSourceSpec{
			SourceType:  operatorsv1alpha1.SourceTypeGrpc,
			Image:       catalogImg,
			DisplayName: "operator101 (local)",
			Publisher:   "operator101",
			GrpcPodConfig: &operatorsv1alpha1.GrpcPodConfig{
				SecurityContextConfig: operatorsv1alpha1.Restricted,
			},
		},
	})
	create(t, &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Name: "operator101", Namespace: ns},
		Spec: operatorsv1.OperatorGroupSpec{TargetNamespaces: targets}})
	approval := operatorsv1alpha1.ApprovalAutomatic
	if manual {
		approval = operatorsv1alpha1.ApprovalManual
	}
	var config *operatorsv1alpha1.SubscriptionConfig
	if len(env) > 0 {
		config = &operatorsv1alpha1.SubscriptionConfig{Env: env}
	}
	create(t, &operatorsv1alpha1.Subscription{
		ObjectMeta: metav1.ObjectMeta{Name: "operator101", Namespace: ns},
		Spec: &operatorsv1alpha1.SubscriptionSpec{
			CatalogSource:          "operator101-catalog",
			CatalogSourceNamespace: ns,
			Package:                "operator101",
			Channel:                "stable",
			StartingCSV:            startingCSV,
			InstallPlanApproval:    approval,
			Config:                 config,
		},
	})
}

// tableVerbs are the verbs the permission table reports.
var tableVerbs = olmrbac.TableVerbs

// allowed asks the cluster's authorizer whether the operator's ServiceAccount, installed in ns, may do ra.
func allowed(t *testing.T, ns string, ra authorizationv1.ResourceAttributes) bool {
	t.Helper()
	user, groups := olmrbac.User(ns, identity)
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
		Groups: groups, ResourceAttributes: &ra}}
	if err := c.Create(context.Background(), sar); err != nil {
		t.Fatalf("SubjectAccessReview: %v", err)
	}
	return sar.Status.Allowed
}

// checkPermissionTable reads back, with SubjectAccessReviews, what the operator installed in ns (serving target)
// may do on every resource its CSV names (and on each object a rule names: the leader-election Lease), in its
// namespace, the target, kube-system and cluster-wide; and compares that table with the one docs/admin/security.md
// shows for mode. test/rbac checks the same tables on envtest, against RBAC created from the CSV as OLM does.
func checkPermissionTable(t *testing.T, mode, ns, target string) {
	t.Helper()
	csv, err := olmrbac.CSV(f.root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := olmrbac.PermissionTable(csv, ns, target, func(ra authorizationv1.ResourceAttributes) (bool, error) {
		return allowed(t, ns, ra), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(f.root, "docs", "admin", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want, ok := olmrbac.DocTable(string(doc), mode); !ok || want != got {
		t.Errorf("docs/admin/security.md does not show what the cluster answers for %s; between \"<!-- e2e:rbac %s -->\" and \"<!-- /e2e:rbac -->\" it should read:\n%s",
			mode, mode, got)
	} else {
		rows := len(olmrbac.Rows(csv))
		t.Logf("%s: docs/admin/security.md's permission table matches the cluster (%d rows, %d SubjectAccessReviews)",
			mode, rows, rows*4*len(tableVerbs))
	}
}

// sampleAppService is config/samples' app.example.com AppService in ns.
func sampleAppService(t *testing.T, ns string) *appv1.AppService {
	t.Helper()
	a := readSample[appv1.AppService](t, "app_v1_appservice.yaml")
	a.Namespace = ns
	return a
}

func sampleMyWeb(t *testing.T) *operatorv1.MyWeb {
	t.Helper()
	return readSample[operatorv1.MyWeb](t, "operator_v1_myweb.yaml")
}

// readSample is the object of config/samples' file, decoded strictly (a field the type lacks fails the test).
func readSample[T any](t *testing.T, file string) *T {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(f.root, "config", "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	var obj T
	if err := yaml.UnmarshalStrict(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return &obj
}

// watched is what the operator pod watches: WATCH_NAMESPACE, which the CSV takes from the pod's
// olm.targetNamespaces annotation (downward API).
func watched(t *testing.T, p corev1.Pod) string {
	t.Helper()
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == "WATCH_NAMESPACE" {
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
				e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['olm.targetNamespaces']" {
				t.Fatalf("WATCH_NAMESPACE is %+v, not the OperatorGroup's targets", e)
			}
			return p.Annotations["olm.targetNamespaces"]
		}
	}
	t.Fatal("the operator pod has no WATCH_NAMESPACE")
	return ""
}
