//go:build e2e && chaos

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

// The chaos upgrade (make test-chaos): an OLM upgrade from the oldest release to the newest, approved
// while a workload of every kind is still converging, with the operator's pods, the kubelet, the API server and
// the database failing on a seeded schedule, and tenants editing and deleting objects meanwhile. What it
// checks is read from the cluster and the database afterwards, never from the operator's logs.
package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	operatorsv2 "github.com/operator-framework/api/pkg/operators/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	batchv1alpha1 "github.com/operator101/operator101/api/batch/v1alpha1"
	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/api/conditions"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
)

// The chaos test's namespaces: the install, and one per kind of workload.
const (
	chaosOpNS  = "operator101-chaos"
	chaosWebNS = "operator101-chaos-web"
	chaosAppNS = "operator101-chaos-app"   // app.example.com's AppServices
	chaosBatNS = "operator101-chaos-batch" // batch.schwarzeni.github.com's: the same names, so another namespace
	chaosAtNS  = "operator101-chaos-at"
	chaosDBNS  = "operator101-chaos-db"
)

// chaosPlan is everything the seed decides: the workload's size and the schedule of faults and edits.
type chaosPlan struct {
	seed                    uint64
	mywebs, apps, ats, dbus int // apps is per AppService group
	// The run has two phases. The first starts at the approval of the upgrade: the first Ats hold the upgrade
	// (OLM's Upgradeable gate) for a while, then it proceeds under the first phase's faults, and the operator's
	// pods are killed once while the new version's rolls out. The second starts once the new version's CSV
	// Succeeded and the first phase's schedule is done, and faults the new version.
	during, after            time.Duration      // the length of each phase
	atAt                     [2][]time.Duration // the Ats of each phase, from its start
	faults                   []chaosFault
	servingWebs, servingApps int // the first ones run one pod; the others none (0 replicas), for two cores
	deletedWeb, deletedApp   int
	deletedDBU, rotatedDBU   int
	editedWebs, scaledApps   []int
	deletedChildren          []int // MyWebs whose Deployment is deleted
	deletedServices          []int // AppServices whose Service is deleted (app.example.com's, batch's, ...)
}

// chaosFault is one thing done to the cluster at a moment of a phase.
type chaosFault struct {
	phase int // 0: from the approval; 1: from the second phase's start
	at    time.Duration
	what  string
	do    func(t *testing.T, x *chaosRun) error
}

// planChaos draws the plan from seed. CHAOS_SCALE (default 0.4) scales the workload the issue names for a
// bigger machine (100 MyWebs, 100 AppServices of each group, 100 Ats, 30 DatabaseUsers).
func planChaos(t *testing.T, seed uint64) chaosPlan {
	t.Helper()
	scale := 0.4
	if s := os.Getenv("CHAOS_SCALE"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			t.Fatalf("CHAOS_SCALE=%q: want a positive number", s)
		}
		scale = v
	}
	n := func(full int) int { return max(4, int(float64(full)*scale)) }
	rng := rand.New(rand.NewPCG(seed, seed^0x6f70313031))
	p := chaosPlan{seed: seed, mywebs: n(100), apps: n(100), ats: n(100), dbus: n(30),
		during: 150 * time.Second, after: 120 * time.Second, servingWebs: 3, servingApps: 3}
	// phase: which phase a fault or edit happens in, drawn (a coin) unless the plan says.
	var phase int
	coin := func() int { return rng.IntN(2) }
	moment := func(from, to float64) time.Duration {
		length := []time.Duration{p.during, p.after}[phase]
		return time.Duration((from + rng.Float64()*(to-from)) * float64(length))
	}
	// Half the Ats early in the first phase (the upgrade waits for them), half in the second.
	for i := range p.ats {
		phase = i % 2
		p.atAt[phase] = append(p.atAt[phase], moment([]float64{0.05, 0.1}[phase], []float64{0.35, 0.8}[phase]))
	}
	pick := func(n int) int { return rng.IntN(n) }
	p.deletedWeb, p.deletedApp = p.mywebs-1, p.apps-1
	p.deletedDBU, p.rotatedDBU = p.dbus-1, p.dbus-2
	for range 3 {
		p.editedWebs = append(p.editedWebs, pick(p.mywebs-1))
		p.scaledApps = append(p.scaledApps, pick(p.apps-1))
		p.deletedChildren = append(p.deletedChildren, pick(p.mywebs-1))
		p.deletedServices = append(p.deletedServices, pick(p.apps-1))
	}

	add := func(at time.Duration, what string, do func(*testing.T, *chaosRun) error) {
		p.faults = append(p.faults, chaosFault{phase: phase, at: at, what: what, do: do})
	}
	// Two kills in each phase (whichever version runs), and one during the rollout (followUpgrade).
	for i := range 4 {
		phase = i % 2
		add(moment(0, 1), "force-delete the operator's pods", func(t *testing.T, x *chaosRun) error { return x.killOperator(t) })
	}
	// One of the kubelet and the API server restarts in each phase, in a drawn order; the database is
	// unreachable for a while in a drawn phase.
	first := coin()
	phase = first
	add(moment(0.2, 0.6), "restart the kubelet", func(t *testing.T, x *chaosRun) error { return x.restart(t, "kubelet") })
	phase = 1 - first
	add(moment(0.2, 0.6), "restart the API server", func(t *testing.T, x *chaosRun) error { return x.restart(t, "kube-apiserver") })
	phase = coin()
	pause := moment(0, 0.5)
	outage := 30*time.Second + time.Duration(rng.IntN(15))*time.Second
	add(pause, fmt.Sprintf("make the database unreachable for %s", outage.Round(time.Second)),
		func(t *testing.T, x *chaosRun) error { return x.pauseDatabase(t) })
	add(pause+outage, "make the database reachable again", func(t *testing.T, x *chaosRun) error { return x.resumeDatabase(t) })
	for i, w := range p.editedWebs {
		phase = coin()
		add(moment(0, 1), fmt.Sprintf("edit the page of MyWeb web-%d", w), func(t *testing.T, x *chaosRun) error {
			return x.patch(&operatorv1.MyWeb{}, chaosWebNS, webName(w),
				fmt.Sprintf(`{"spec":{"pageContentHtml":"<h1>web %d, edit %d</h1>"}}`, w, i))
		})
	}
	for _, a := range p.scaledApps {
		phase = coin()
		add(moment(0, 1), fmt.Sprintf("scale AppService app-%d to 2", a), func(t *testing.T, x *chaosRun) error {
			return x.patch(&appv1.AppService{}, chaosAppNS, appName(a), `{"spec":{"size":2}}`)
		})
	}
	for _, w := range p.deletedChildren {
		phase = coin()
		add(moment(0, 1), fmt.Sprintf("delete the Deployment of MyWeb web-%d", w), func(t *testing.T, x *chaosRun) error {
			return x.remove(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: chaosWebNS, Name: webName(w)}})
		})
	}
	for i, a := range p.deletedServices {
		ns := []string{chaosAppNS, chaosBatNS}[i%2] // of either group
		phase = coin()
		add(moment(0, 1), fmt.Sprintf("delete the Service of AppService %s/app-%d", ns, a), func(t *testing.T, x *chaosRun) error {
			return x.remove(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: appName(a)}})
		})
	}
	phase = coin()
	add(moment(0, 1), fmt.Sprintf("delete MyWeb web-%d", p.deletedWeb), func(t *testing.T, x *chaosRun) error {
		return x.remove(&operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Namespace: chaosWebNS, Name: webName(p.deletedWeb)}})
	})
	phase = coin()
	add(moment(0, 1), fmt.Sprintf("delete both AppServices app-%d", p.deletedApp), func(t *testing.T, x *chaosRun) error {
		if err := x.remove(&appv1.AppService{ObjectMeta: metav1.ObjectMeta{Namespace: chaosAppNS, Name: appName(p.deletedApp)}}); err != nil {
			return err
		}
		return x.remove(&batchv1alpha1.AppService{ObjectMeta: metav1.ObjectMeta{Namespace: chaosBatNS, Name: appName(p.deletedApp)}})
	})
	phase = coin()
	add(moment(0, 1), fmt.Sprintf("delete DatabaseUser db-%d", p.deletedDBU), func(t *testing.T, x *chaosRun) error {
		return x.remove(&mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: chaosDBNS, Name: dbuName(p.deletedDBU)}})
	})
	phase = coin()
	// As docs/guides/databaseuser.md tells a tenant: change the Secret, then annotate the DatabaseUser, which the operator
	// watches (it watches no Secret), so that the password changes at once rather than at the next resync.
	add(moment(0, 1), fmt.Sprintf("rotate the password of DatabaseUser db-%d (Secret, then the annotation)", p.rotatedDBU), func(t *testing.T, x *chaosRun) error {
		if err := x.patch(&corev1.Secret{}, chaosDBNS, dbuName(p.rotatedDBU),
			fmt.Sprintf(`{"stringData":{"password":%q}}`, dbuPassword(seed, p.rotatedDBU, 1))); err != nil {
			return err
		}
		return x.patch(&mygroupv1alpha1.DatabaseUser{}, chaosDBNS, dbuName(p.rotatedDBU),
			`{"metadata":{"annotations":{"operator101.io/rotated":"1"}}}`)
	})
	sort.SliceStable(p.faults, func(i, j int) bool {
		a, b := p.faults[i], p.faults[j]
		return a.phase < b.phase || (a.phase == b.phase && a.at < b.at)
	})
	return p
}

func webName(i int) string { return fmt.Sprintf("web-%d", i) }
func appName(i int) string { return fmt.Sprintf("app-%d", i) }
func atName(i int) string  { return fmt.Sprintf("at-%d", i) }
func dbuName(i int) string { return fmt.Sprintf("db-%d", i) }

// dbuUser is the account of DatabaseUser i; the seed keeps two runs' accounts apart.
func dbuUser(seed uint64, i int) string { return fmt.Sprintf("chaos%x_%d", seed%0xffff, i) }

// dbuPassword is DatabaseUser i's password, generation gen (1 after a rotation).
func dbuPassword(seed uint64, i, gen int) string {
	return fmt.Sprintf("pw-%x-%d-%d-chaos", seed, i, gen)
}

// chaosRun is the state of one run: the plan, the runs the At pods reported, the samples of the Upgradeable
// condition, and what happened.
type chaosRun struct {
	plan     chaosPlan
	start    time.Time // the approval
	recorder string    // where At pods report a run: http://NODE:PORT
	mu       sync.Mutex
	runs     map[string]map[string]bool // At name -> the run tokens reported
	samples  []upgradeableSample
	log      []string // what was done, when, and how it went
	paused   int      // the MariaDB pid stopped by pauseDatabase (0: none)
	// The operator's versions, by image: killed counts the pods force-deleted of each.
	isOld, isNew func(image string) bool
	killed       map[string]int
	upgradedAt   time.Time // when followUpgrade first saw the new CSV Succeeded
	rolloutKill  bool      // the operator's pods were killed while the new version rolled out
	done         int       // the plan's faults and edits done
	leftByOld    string    // the deleted DatabaseUser's account, when 0.1.0 released it unconfigured (see accountsMatch)
}

// upgradeableSample is the Upgradeable condition of the installed CSV at a moment, with whether an At's
// command ran (its pod Running, its status RUNNING) just before and after it was read.
type upgradeableSample struct {
	status      metav1.ConditionStatus
	atRanAround bool
}

func (x *chaosRun) note(format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	when := "before  "
	if !x.start.IsZero() {
		when = fmt.Sprintf("%7.1fs ", time.Since(x.start).Seconds())
	}
	x.log = append(x.log, when+fmt.Sprintf(format, args...))
}

// TestChaosUpgrade: see the package comment. CHAOS_SEED replays a run; the seed, the plan and a table of what
// was checked are printed.
func TestChaosUpgrade(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED=%q: %v", s, err)
		}
		seed = v
	}
	plan := planChaos(t, seed)
	t.Logf("chaos seed %d (replay: CHAOS_SEED=%d make test-chaos): %d MyWebs, %d AppServices of each group, %d Ats, %d DatabaseUsers; "+
		"phase 1 (from the approval) %s, phase 2 (from the upgrade) %s",
		seed, seed, plan.mywebs, plan.apps, plan.ats, plan.dbus, plan.during, plan.after)
	for _, fl := range plan.faults {
		t.Logf("  plan phase %d %6.1fs  %s", fl.phase+1, fl.at.Seconds(), fl.what)
	}
	t.Logf("  plan phase 1 on the new version's rollout: force-delete the operator's pods")
	x := &chaosRun{plan: plan, runs: map[string]map[string]bool{}, killed: map[string]int{},
		isOld: operatorImage(t, oldVersion), isNew: operatorImage(t, headVersion)}
	// What was done, when and how it went: printed however the test ends, so that a failure shows it too.
	t.Cleanup(func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		t.Logf("chaos seed %d: what was done", seed)
		for _, l := range x.log {
			t.Logf("  %s", l)
		}
	})
	x.serveRecorder(t)
	t.Cleanup(func() { _ = x.resumeDatabase(t) }) // never leave the database stopped

	clearInstalls(t)
	clearDatabaseTargets(t)
	for _, ns := range []string{chaosOpNS, chaosWebNS, chaosAppNS, chaosBatNS, chaosAtNS, chaosDBNS} {
		freshNamespace(t, ns)
	}
	t.Cleanup(func() { uninstall(t, chaosOpNS) })
	t.Cleanup(func() { clearDatabaseTargets(t) })
	t.Cleanup(func() { deleteChaosWorkload(t) })

	// The oldest release, by Subscription with manual approval, from the committed catalog (the releases), whose
	// head a user upgrades to. On a cluster that admits as OpenShift does it needs what its CSV does not ask for;
	// revoked once the newest release, which needs none of it, runs.
	revokeReleaseNeeds := grantReleaseNeeds(t, chaosOpNS)
	create(t, targetSecret(chaosOpNS))
	subscribeFrom(t, publishCommittedCatalog(t), chaosOpNS, nil, oldCSV, true, corev1.EnvVar{Name: "DATABASE_TARGETS", Value: legacyTargets})
	approve(t, chaosOpNS, oldCSV)
	waitCSV(t, chaosOpNS, oldCSV, operatorsv1alpha1.CSVPhaseSucceeded, 5*time.Minute)
	operatorPod(t, chaosOpNS, oldVersion)

	x.createWorkload(t)
	// Phase 1: approve the upgrade to the newest release while the workload is still converging, with the
	// first Ats about to run (OLM waits for them).
	x.start = time.Now()
	x.createAts(t, 0, x.start)
	approve(t, chaosOpNS, headCSV)
	x.note("approved the upgrade %s -> %s", oldCSV, headCSV)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); x.sampleUpgradeable(stop) }()
	go func() { defer wg.Done(); x.migrateWhenServed(t, stop) }()
	go func() { defer wg.Done(); x.followUpgrade(stop) }()
	x.runFaults(t, 0, x.start)

	// Phase 2, once the new version's CSV Succeeded: what the releases needed revoked, the other Ats, more faults.
	waitCSV(t, chaosOpNS, headCSV, operatorsv1alpha1.CSVPhaseSucceeded, 10*time.Minute)
	revokeReleaseNeeds()
	phase2 := time.Now()
	x.note("phase 2: %s Succeeded %.1fs after the approval, its rollout's pods killed: %v", headCSV,
		x.upgraded().Sub(x.start).Seconds(), x.killedInRollout())
	x.createAts(t, 1, phase2)
	x.runFaults(t, 1, phase2)
	lastFault := time.Now()

	// Converged: the new version installed, every object as its spec says.
	waitCSV(t, chaosOpNS, headCSV, operatorsv1alpha1.CSVPhaseSucceeded, 10*time.Minute)
	eventually(t, 3*time.Minute, oldCSV+" gone", func() (bool, string) {
		err := get(&operatorsv1alpha1.ClusterServiceVersion{}, chaosOpNS, oldCSV)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	operatorPod(t, chaosOpNS, headVersion)
	rows := x.waitConverged(t)
	converged := time.Since(lastFault)
	if x.leftByOld != "" {
		rows = append(rows, checkRow{"the deleted DatabaseUser's account, left by 0.1.0 unconfigured", 1,
			"dropped by the test (docs/admin/upgrade.md: 0.1.0 reinstalled without the Subscription's config)"})
		x.dropAccount(t, x.leftByOld)
	}
	close(stop)
	wg.Wait()
	rows = append(rows, x.checkUpgradeable(t), x.checkKills(t),
		checkRow{"faults done: each of the plan's faults and edits, at its moment", x.done,
			fmt.Sprintf("ok (%d of %d: kubelet and API server restarted, database unreachable, edits)", x.done, len(plan.faults))})

	t.Logf("chaos seed %d: converged %.0fs after the last fault; checked:", seed, converged.Seconds())
	t.Logf("  %-58s %8s %s", "property", "objects", "result")
	for _, r := range rows {
		t.Logf("  %-58s %8d %s", r.property, r.objects, r.result)
	}
}

// createAts creates the Ats of a phase, scheduled at the plan's moments from its start.
func (x *chaosRun) createAts(t *testing.T, phase int, from time.Time) {
	t.Helper()
	p := x.plan
	for j, d := range p.atAt[phase] {
		i := j + phase*len(p.atAt[0])
		// Each run reports a token of its own to the recorder (retrying while the network is down), then works
		// for a while, so that the Upgradeable gate has something to hold.
		cmd := fmt.Sprintf(`tok=$(cat /proc/sys/kernel/random/uuid); n=0; `+
			`until wget -q -O /dev/null "%s/ran/%s/$tok"; do n=$((n+1)); [ $n -ge 120 ] && exit 3; sleep 1; done; sleep 8`,
			x.recorder, atName(i))
		create(t, &cnatv1alpha1.At{
			ObjectMeta: metav1.ObjectMeta{Name: atName(i), Namespace: chaosAtNS},
			Spec: cnatv1alpha1.AtSpec{Schedule: from.Add(d).UTC().Format(cnatv1alpha1.ScheduleLayout), Command: cmd,
				ActiveDeadlineSeconds: ptr.To[int64](600)},
		})
	}
}

// createWorkload creates every kind, sized by the plan, in the namespaces of the release's install.
func (x *chaosRun) createWorkload(t *testing.T) {
	t.Helper()
	p := x.plan
	replicas := func(i, serving int) *int32 { return ptr.To(int32(min(1, max(0, serving-i)))) }
	// The MyWebs' node ports lie in the range's static band (its lowest 86 ports on 30000-32767; at the default
	// CHAOS_SCALE, 40 MyWebs), which the API server's random allocation uses last: the AppServices' Services, given ports at random, could otherwise
	// take a MyWeb's port before its Service exists (seen: 31017).
	for i := range p.mywebs {
		create(t, &operatorv1.MyWeb{ObjectMeta: metav1.ObjectMeta{Name: webName(i), Namespace: chaosWebNS},
			Spec: operatorv1.MyWebSpec{Image: "nginx:1.27", NodePortNumber: int32(30000 + i),
				PageContentHtml: fmt.Sprintf("<h1>web %d</h1>", i), Replicas: replicas(i, p.servingWebs)}})
	}
	for i := range p.apps {
		app := appv1.Application{Image: "nginx:1.27", Ports: []appv1.ServicePort{{Port: 80}}}
		create(t, &appv1.AppService{ObjectMeta: metav1.ObjectMeta{Name: appName(i), Namespace: chaosAppNS},
			Spec: appv1.AppServiceSpec{Size: replicas(i, p.servingApps), Application: app}})
		create(t, &batchv1alpha1.AppService{ObjectMeta: metav1.ObjectMeta{Name: appName(i), Namespace: chaosBatNS},
			Spec: batchv1alpha1.AppServiceSpec{Replicas: replicas(i, p.servingApps), Application: app}})
	}
	for i := range p.dbus {
		create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: dbuName(i), Namespace: chaosDBNS},
			StringData: map[string]string{"password": dbuPassword(p.seed, i, 0)}})
		create(t, &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Name: dbuName(i), Namespace: chaosDBNS},
			Spec: mygroupv1alpha1.DatabaseUserSpec{User: dbuUser(p.seed, i),
				Password: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: dbuName(i)}, Key: "password"},
				Grants: []mygroupv1alpha1.Grant{{Database: fmt.Sprintf("%s_%d", chaosDBNS, i),
					Privileges: []mygroupv1alpha1.Privilege{"SELECT", "INSERT"}}}}})
	}
	x.note("created %d MyWebs, %d AppServices of each group, %d DatabaseUsers", p.mywebs, p.apps, p.dbus)
}

// migrateWhenServed follows docs/admin/database-targets.md's migration from 0.1.0's DATABASE_TARGETS as soon as the new
// version's CRDs are served: a DatabaseTarget "default" that adopts the accounts 0.1.0 created.
func (x *chaosRun) migrateWhenServed(t *testing.T, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Second):
		}
		dt := databaseTarget("default")
		dt.Spec.AdminSecretRef.Namespace = chaosOpNS
		dt.Spec.AllowedNamespaces = []string{chaosDBNS}
		dt.Spec.Databases = []string{chaosDBNS + "_*"}
		dt.Spec.ExistingAccounts = mygroupv1alpha1.ExistingAccountsAdopt
		users := make([]string, x.plan.dbus)
		for i := range users {
			users[i] = dbuUser(x.plan.seed, i)
		}
		dt.Spec.AdoptableAccounts = []mygroupv1alpha1.AdoptableAccounts{{Namespace: chaosDBNS, Users: users}}
		err := c.Create(context.Background(), dt)
		if err == nil || apierrors.IsAlreadyExists(err) {
			x.note("created DatabaseTarget default (Adopt): the migration from DATABASE_TARGETS")
			return
		}
	}
}

// runFaults does the plan's faults and edits at their moments; one that fails is noted (the cluster may be down
// at that moment) and done again a second later, for at most 30 s.
func (x *chaosRun) runFaults(t *testing.T, phase int, from time.Time) {
	t.Helper()
	for _, fl := range x.plan.faults {
		if fl.phase != phase {
			continue
		}
		if d := time.Until(from.Add(fl.at)); d > 0 {
			time.Sleep(d) // the schedule's next moment: faults happen at planned times, not when something is ready
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := fl.do(t, x)
			if err == nil {
				x.note("%s", fl.what)
				x.mu.Lock()
				x.done++
				x.mu.Unlock()
				break
			}
			if time.Now().After(deadline) {
				x.note("%s: FAILED: %v", fl.what, err)
				t.Errorf("fault %q could not be done: %v", fl.what, err)
				break
			}
			time.Sleep(time.Second)
		}
	}
}

func (x *chaosRun) patch(obj client.Object, ns, name, body string) error {
	if err := get(obj, ns, name); err != nil {
		return err
	}
	return c.Patch(context.Background(), obj, client.RawPatch("application/merge-patch+json", []byte(body)))
}

func (x *chaosRun) remove(obj client.Object) error {
	return client.IgnoreNotFound(c.Delete(context.Background(), obj))
}

// killOperator force-deletes the operator's pods, whichever version runs (grace period 0), and counts them by
// version. With no pod at all the operator is down already, which is what the fault makes it: nothing to kill
// (seen when two kills come close after an API server restart, before OLM has put the pod back); the checks at
// the end still need it up again and a kill of each version.
func (x *chaosRun) killOperator(t *testing.T) error {
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(chaosOpNS),
		client.MatchingLabels{"control-plane": "controller-manager"}); err != nil {
		return err
	}
	if len(pods.Items) == 0 {
		x.note("  no operator pod: it is down already, nothing to kill")
		return nil
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if err := c.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			return err
		}
		version := x.version(pod.Spec.Containers[0].Image)
		x.mu.Lock()
		x.killed[version]++
		x.mu.Unlock()
		x.note("  killed pod %s (%s, %s)", pod.Name, version, pod.Status.Phase)
	}
	return nil
}

func (x *chaosRun) version(image string) string {
	switch {
	case x.isOld(image):
		return oldVersion
	case x.isNew(image):
		return headVersion
	}
	return image
}

// followUpgrade notes each phase the new version's CSV goes through, kills the operator's pods (the old one
// and the new one coming up) the first time it sees a pod of the new version before its CSV Succeeded, and
// records when it Succeeded.
func (x *chaosRun) followUpgrade(stop <-chan struct{}) {
	ctx := context.Background()
	last := ""
	for {
		select {
		case <-stop:
			return
		case <-time.After(500 * time.Millisecond):
		}
		var csv operatorsv1alpha1.ClusterServiceVersion
		if err := get(&csv, chaosOpNS, headCSV); err != nil {
			continue
		}
		if now := string(csv.Status.Phase) + " " + string(csv.Status.Reason); now != last {
			x.note("%s: %s", headCSV, now)
			last = now
		}
		x.mu.Lock()
		done, killed := !x.upgradedAt.IsZero(), x.rolloutKill
		x.mu.Unlock()
		if csv.Status.Phase == operatorsv1alpha1.CSVPhaseSucceeded {
			if !done {
				x.mu.Lock()
				x.upgradedAt = time.Now()
				x.mu.Unlock()
			}
			continue
		}
		if killed || done {
			continue
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(chaosOpNS), client.MatchingLabels{"control-plane": "controller-manager"}); err != nil {
			continue
		}
		for _, pod := range pods.Items {
			if x.isNew(pod.Spec.Containers[0].Image) && pod.DeletionTimestamp == nil {
				x.note("the new version's pod %s is %s while %s is %s: kill the operator's pods", pod.Name, pod.Status.Phase, headCSV, csv.Status.Phase)
				if err := x.killOperator(nil); err != nil {
					x.note("  the kill failed: %v", err)
					break
				}
				x.mu.Lock()
				x.rolloutKill = true
				x.mu.Unlock()
				break
			}
		}
	}
}

func (x *chaosRun) upgraded() time.Time {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.upgradedAt
}

func (x *chaosRun) killedInRollout() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.rolloutKill
}

// checkKills: the operator's pods were killed while the new version rolled out, and pods of both versions were
// killed.
func (x *chaosRun) checkKills(t *testing.T) checkRow {
	t.Helper()
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.rolloutKill {
		t.Errorf("the operator's pods were never killed during the new version's rollout")
	}
	if x.killed[oldVersion] == 0 || x.killed[headVersion] == 0 {
		t.Errorf("operator pods killed: %v; want pods of both %s and %s", x.killed, oldVersion, headVersion)
	}
	return checkRow{"faults done: operator pods killed, by version (one kill in the rollout)", x.killed[oldVersion] + x.killed[headVersion],
		fmt.Sprintf("ok (%s: %d, %s: %d)", oldVersion, x.killed[oldVersion], headVersion, x.killed[headVersion])}
}

// restart restarts a process of the local cluster (hack/cluster/restart.sh: killed, then started again by up.sh).
func (x *chaosRun) restart(t *testing.T, name string) error {
	out, err := exec.Command(filepath.Join(f.root, "hack", "cluster", "restart.sh"), name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("restart %s: %w\n%s", name, err, out)
	}
	return nil
}

// pauseDatabase stops the MariaDB process (SIGSTOP): connections hang, as to a server that went away on the
// network; resumeDatabase lets it go on.
func (x *chaosRun) pauseDatabase(t *testing.T) error {
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(f.mariadbEnv), "mysqld.pid"))
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	x.mu.Lock()
	x.paused = pid
	x.mu.Unlock()
	return nil
}

func (x *chaosRun) resumeDatabase(t *testing.T) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.paused == 0 {
		return nil
	}
	if err := syscall.Kill(x.paused, syscall.SIGCONT); err != nil {
		return err
	}
	x.paused = 0
	return nil
}

// serveRecorder listens on the node address (pods reach it; nothing beyond the machine does) for the At pods'
// reports: GET /ran/AT/TOKEN, one token per run of the command.
func (x *chaosRun) serveRecorder(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(f.nodeIP, "0"))
	if err != nil {
		t.Fatalf("the At recorder: %v", err)
	}
	x.recorder = "http://" + l.Addr().String()
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/ran/"), "/")
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			http.NotFound(w, r)
			return
		}
		x.mu.Lock()
		if x.runs[parts[0]] == nil {
			x.runs[parts[0]] = map[string]bool{}
		}
		x.runs[parts[0]][parts[1]] = true
		x.mu.Unlock()
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// sampleUpgradeable reads, every 2 s, whether an At's command runs and what the installed CSV's
// OperatorCondition says of Upgradeable.
func (x *chaosRun) sampleUpgradeable(stop <-chan struct{}) {
	ctx := context.Background()
	running := func() string {
		var ats cnatv1alpha1.AtList
		if err := c.List(ctx, &ats, client.InNamespace(chaosAtNS)); err != nil {
			return ""
		}
		for _, a := range ats.Items {
			if a.Status.Phase != cnatv1alpha1.PhaseRunning {
				continue
			}
			var pod corev1.Pod
			if err := get(&pod, chaosAtNS, a.Name+"-pod"); err == nil && pod.Status.Phase == corev1.PodRunning {
				return a.Name
			}
		}
		return ""
	}
	for {
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Second):
		}
		before := running()
		var sub operatorsv1alpha1.Subscription
		if err := get(&sub, chaosOpNS, "operator101"); err != nil || sub.Status.InstalledCSV == "" {
			continue
		}
		var oc operatorsv2.OperatorCondition
		if err := get(&oc, chaosOpNS, sub.Status.InstalledCSV); err != nil {
			continue
		}
		status := metav1.ConditionTrue // OLM reads a missing condition as upgradeable
		if cond := meta.FindStatusCondition(oc.Spec.Conditions, operatorsv2.Upgradeable); cond != nil {
			status = cond.Status
		}
		after := running()
		x.mu.Lock()
		x.samples = append(x.samples, upgradeableSample{status: status, atRanAround: before != "" && before == after})
		x.mu.Unlock()
	}
}

// checkRow is one line of the table the test prints.
type checkRow struct {
	property string
	objects  int
	result   string
}

// waitConverged waits until every object has converged under the new version, then checks each property once
// more and returns the table's rows.
func (x *chaosRun) waitConverged(t *testing.T) []checkRow {
	t.Helper()
	p := x.plan
	var rows []checkRow
	check := func(property string, objects int, timeout time.Duration, fn func() error) {
		t.Helper()
		var last error
		eventually(t, timeout, property, func() (bool, string) {
			last = fn()
			return last == nil, fmt.Sprint(last)
		})
		rows = append(rows, checkRow{property, objects, "ok"})
	}
	ctx := context.Background()

	check("MyWebs: observedGeneration current, Available=True", p.mywebs-1, 10*time.Minute, func() error {
		var l operatorv1.MyWebList
		if err := c.List(ctx, &l, client.InNamespace(chaosWebNS)); err != nil {
			return err
		}
		return convergedAll(len(l.Items), p.mywebs-1, func(i int) (client.Object, []metav1.Condition) {
			return &l.Items[i], l.Items[i].Status.Conditions
		}, conditions.Available)
	})
	check("AppServices (app.example.com): converged, Available=True", p.apps-1, 5*time.Minute, func() error {
		var l appv1.AppServiceList
		if err := c.List(ctx, &l, client.InNamespace(chaosAppNS)); err != nil {
			return err
		}
		return convergedAll(len(l.Items), p.apps-1, func(i int) (client.Object, []metav1.Condition) {
			return &l.Items[i], l.Items[i].Status.Conditions
		}, conditions.Available)
	})
	check("AppServices (batch.schwarzeni.github.com): converged, Available=True", p.apps-1, 5*time.Minute, func() error {
		var l batchv1alpha1.AppServiceList
		if err := c.List(ctx, &l, client.InNamespace(chaosBatNS)); err != nil {
			return err
		}
		return convergedAll(len(l.Items), p.apps-1, func(i int) (client.Object, []metav1.Condition) {
			return &l.Items[i], l.Items[i].Status.Conditions
		}, conditions.Available)
	})
	check("DatabaseUsers: converged, Ready=True", p.dbus-1, 10*time.Minute, func() error {
		var l mygroupv1alpha1.DatabaseUserList
		if err := c.List(ctx, &l, client.InNamespace(chaosDBNS)); err != nil {
			return err
		}
		return convergedAll(len(l.Items), p.dbus-1, func(i int) (client.Object, []metav1.Condition) {
			return &l.Items[i], l.Items[i].Status.Conditions
		}, mygroupv1alpha1.ConditionReady)
	})
	check("children: each one's controller exists; each object has its children", p.mywebs-1+2*(p.apps-1), 5*time.Minute,
		func() error { return x.childrenMatch(ctx) })
	check("children as the spec says: page, replicas (edited and scaled ones too)", p.mywebs-1+2*(p.apps-1), 3*time.Minute,
		func() error { return x.childrenFollowSpec(ctx) })
	check("Ats: each ran exactly once (recorder, pod and status agree)", p.ats, 10*time.Minute, func() error { return x.atsRanOnce(ctx) })
	check("accounts: password and grants as the spec says; none orphaned", p.dbus, 5*time.Minute, func() error { return x.accountsMatch() })
	return rows
}

// convergedAll: want objects, each with observedGeneration current, condType True and, where the kind has it,
// Degraded not True.
func convergedAll(n, want int, item func(i int) (client.Object, []metav1.Condition), condType string) error {
	if n != want {
		return fmt.Errorf("%d objects, want %d", n, want)
	}
	for i := range n {
		obj, conds := item(i)
		cond := meta.FindStatusCondition(conds, condType)
		if cond == nil || cond.Status != metav1.ConditionTrue || cond.ObservedGeneration != obj.GetGeneration() {
			return fmt.Errorf("%s: %+v (generation %d)", obj.GetName(), cond, obj.GetGeneration())
		}
		if d := meta.FindStatusCondition(conds, conditions.Degraded); d != nil && d.Status == metav1.ConditionTrue {
			return fmt.Errorf("%s: Degraded %s: %s", obj.GetName(), d.Reason, d.Message)
		}
	}
	return nil
}

// childrenMatch: every child operator101 made in the workload's namespaces has its controller, which exists; each
// MyWeb has its ConfigMap, Deployment and Service, each AppService its Deployment and Service (a Service per
// group: the kubebuilder group's are named after the object too, in the same namespace, so both are checked by
// their owner's kind).
func (x *chaosRun) childrenMatch(ctx context.Context) error {
	owners := map[string]bool{} // kind/ns/name of every custom resource
	var webs operatorv1.MyWebList
	var apps appv1.AppServiceList
	var batch batchv1alpha1.AppServiceList
	for _, l := range []client.ObjectList{&webs, &apps, &batch} {
		if err := c.List(ctx, l); err != nil {
			return err
		}
	}
	for _, w := range webs.Items {
		owners["MyWeb/"+w.Namespace+"/"+w.Name] = true
	}
	for _, a := range apps.Items {
		owners["AppService/"+a.Namespace+"/"+a.Name+"/app.example.com"] = true
	}
	for _, a := range batch.Items {
		owners["AppService/"+a.Namespace+"/"+a.Name+"/batch.schwarzeni.github.com"] = true
	}
	have := map[string]int{} // owner key -> children seen
	managed := client.MatchingLabels{"app.kubernetes.io/managed-by": "operator101"}
	var cms corev1.ConfigMapList
	var deps appsv1.DeploymentList
	var svcs corev1.ServiceList
	for _, ns := range []string{chaosWebNS, chaosAppNS, chaosBatNS} {
		for _, l := range []client.ObjectList{&cms, &deps, &svcs} {
			if err := c.List(ctx, l, client.InNamespace(ns), managed); err != nil {
				return err
			}
			items, err := meta.ExtractList(l)
			if err != nil {
				return err
			}
			for _, it := range items {
				obj := it.(client.Object)
				ref := metav1.GetControllerOf(obj)
				if ref == nil {
					return fmt.Errorf("%T %s/%s has no controller", obj, obj.GetNamespace(), obj.GetName())
				}
				key := ref.Kind + "/" + obj.GetNamespace() + "/" + ref.Name
				if ref.Kind == "AppService" {
					key += "/" + strings.Split(ref.APIVersion, "/")[0]
				}
				if !owners[key] {
					return fmt.Errorf("%T %s/%s is orphaned: its controller %s is gone", obj, obj.GetNamespace(), obj.GetName(), key)
				}
				have[key]++
			}
		}
	}
	for key := range owners {
		want := 2
		if strings.HasPrefix(key, "MyWeb/") {
			want = 3
		}
		if have[key] != want {
			return fmt.Errorf("%s has %d children, want %d", key, have[key], want)
		}
	}
	return nil
}

// childrenFollowSpec: each MyWeb's ConfigMap holds its page and its Deployment its replicas; each AppService's
// Deployment, of either group, its size. The edits and scalings of the run are among them.
func (x *chaosRun) childrenFollowSpec(ctx context.Context) error {
	// One List per kind and namespace: a GET per object would queue behind the client's rate limit.
	deployments := map[string]appsv1.Deployment{} // ns/name
	pages := map[string]string{}                  // MyWeb name -> its ConfigMap's page
	for _, ns := range []string{chaosWebNS, chaosAppNS, chaosBatNS} {
		var l appsv1.DeploymentList
		if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, d := range l.Items {
			deployments[ns+"/"+d.Name] = d
		}
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace(chaosWebNS)); err != nil {
		return err
	}
	for _, cm := range cms.Items {
		pages[cm.Name] = cm.Data["index.html"]
	}
	replicas := func(ns, name string, want *int32) error {
		d, ok := deployments[ns+"/"+name]
		if !ok {
			return fmt.Errorf("no Deployment %s/%s", ns, name)
		}
		if want != nil && (d.Spec.Replicas == nil || *d.Spec.Replicas != *want) {
			return fmt.Errorf("Deployment %s/%s: %v replicas, its owner says %d", ns, name, ptr.Deref(d.Spec.Replicas, -1), *want)
		}
		return nil
	}
	var webs operatorv1.MyWebList
	if err := c.List(ctx, &webs, client.InNamespace(chaosWebNS)); err != nil {
		return err
	}
	for _, w := range webs.Items {
		if page, ok := pages[w.Name]; !ok || page != w.Spec.PageContentHtml {
			return fmt.Errorf("MyWeb %s: its ConfigMap holds %q, its spec %q", w.Name, page, w.Spec.PageContentHtml)
		}
		if err := replicas(chaosWebNS, w.Name, w.Spec.Replicas); err != nil {
			return err
		}
	}
	var apps appv1.AppServiceList
	if err := c.List(ctx, &apps, client.InNamespace(chaosAppNS)); err != nil {
		return err
	}
	for _, a := range apps.Items {
		if err := replicas(chaosAppNS, a.Name, a.Spec.Size); err != nil {
			return err
		}
	}
	var batch batchv1alpha1.AppServiceList
	if err := c.List(ctx, &batch, client.InNamespace(chaosBatNS)); err != nil {
		return err
	}
	for _, a := range batch.Items {
		if err := replicas(chaosBatNS, a.Name, a.Spec.Replicas); err != nil {
			return err
		}
	}
	return nil
}

// atsRanOnce: every At is DONE, its pod Succeeded (one pod per At, none else), and its command reported exactly
// one run.
func (x *chaosRun) atsRanOnce(ctx context.Context) error {
	var ats cnatv1alpha1.AtList
	if err := c.List(ctx, &ats, client.InNamespace(chaosAtNS)); err != nil {
		return err
	}
	if len(ats.Items) != x.plan.ats {
		return fmt.Errorf("%d Ats, want %d", len(ats.Items), x.plan.ats)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(chaosAtNS)); err != nil {
		return err
	}
	if len(pods.Items) != len(ats.Items) {
		return fmt.Errorf("%d pods for %d Ats", len(pods.Items), len(ats.Items))
	}
	byName := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		byName[p.Name] = p
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	runs := len(x.runs)
	for _, a := range ats.Items {
		pod, ok := byName[a.Name+"-pod"]
		// A kubelet restarted while it created the command's container fails the pod with StartError: the
		// command never ran, and an At runs at most once, so it is FAILED with no run. Exactly once is what
		// the operator promises for every pod the node did start.
		if ok && a.Status.Phase == cnatv1alpha1.PhaseFailed && a.Status.ObservedGeneration == a.Generation &&
			neverStarted(pod) && len(x.runs[a.Name]) == 0 {
			runs++
			continue
		}
		if a.Status.Phase != cnatv1alpha1.PhaseDone || a.Status.ObservedGeneration != a.Generation {
			return fmt.Errorf("At %s: %s %s", a.Name, a.Status.Phase, a.Status.Message)
		}
		if !ok {
			return fmt.Errorf("At %s DONE, its pod is missing", a.Name)
		}
		if pod.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("At %s DONE, its pod %s", a.Name, pod.Status.Phase)
		}
		if n := len(x.runs[a.Name]); n != 1 {
			return fmt.Errorf("At %s: its command ran %d times", a.Name, n)
		}
	}
	if runs != x.plan.ats {
		return fmt.Errorf("runs reported for %d Ats (and %d never started), want %d", len(x.runs), runs-len(x.runs), x.plan.ats)
	}
	return nil
}

// neverStarted: the pod failed before its container started (the runtime's StartError).
func neverStarted(pod corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodFailed {
		return false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.Reason == "StartError" && cs.State.Running == nil {
			return true
		}
	}
	return false
}

// accountsMatch: each DatabaseUser's account logs in with its Secret's password and holds exactly the grants of
// its spec; the deleted one's account is gone, and no account of the run is without its DatabaseUser.
func (x *chaosRun) accountsMatch() error {
	p := x.plan
	admin, err := sql.Open("mysql", mariadbDSN("", ""))
	if err != nil {
		return err
	}
	defer admin.Close()
	rows, err := admin.Query("SELECT User FROM mysql.user WHERE User LIKE ?", fmt.Sprintf("chaos%x\\_%%", p.seed%0xffff))
	if err != nil {
		return err
	}
	var users []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return err
		}
		users = append(users, u)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for i := range p.dbus {
		user := dbuUser(p.seed, i)
		if i == p.deletedDBU {
			if !slices.Contains(users, user) {
				continue
			}
			// OLM applies the Subscription's config only to the CSV its status.installedCSV names, the new one
			// once the upgrade's InstallPlan ran: when OLM reinstalls 0.1.0 after its pods were lost, 0.1.0 runs
			// without DATABASE_TARGETS and releases a DatabaseUser deleted then without dropping its account, as
			// docs/admin/upgrade.md says. Accepted only when 0.1.0 said so in its Event; the newest release never does.
			left, err := releasedUnconfigured(dbuName(i))
			if err != nil {
				return err
			}
			if !left {
				return fmt.Errorf("%s: the account of the deleted DatabaseUser is still there", user)
			}
			x.mu.Lock()
			x.leftByOld = user
			x.mu.Unlock()
			users = slices.DeleteFunc(users, func(u string) bool { return u == user })
			continue
		}
		if !slices.Contains(users, user) {
			return fmt.Errorf("%s: no account", user)
		}
		gen := 0
		if i == p.rotatedDBU {
			gen = 1
		}
		db, err := sql.Open("mysql", mariadbDSN(user, dbuPassword(p.seed, i, gen)))
		if err != nil {
			return err
		}
		err = db.Ping()
		_ = db.Close()
		if err != nil {
			return fmt.Errorf("%s cannot log in with its Secret's password: %w", user, err)
		}
		var dbs []string
		grants, err := admin.Query("SELECT Db, Select_priv, Insert_priv, Update_priv, Delete_priv FROM mysql.db WHERE User = ?", user)
		if err != nil {
			return err
		}
		for grants.Next() {
			var d, s, ins, upd, del string
			if err := grants.Scan(&d, &s, &ins, &upd, &del); err != nil {
				return err
			}
			// Names are granted literally, so the server stores them with `_` escaped.
			dbs = append(dbs, fmt.Sprintf("%s:%s%s%s%s", strings.ReplaceAll(d, `\_`, "_"), s, ins, upd, del))
		}
		if err := grants.Close(); err != nil {
			return err
		}
		want := fmt.Sprintf("%s_%d:YYNN", chaosDBNS, i)
		if len(dbs) != 1 || dbs[0] != want {
			return fmt.Errorf("%s holds %v, want [%s]", user, dbs, want)
		}
	}
	if len(users) != p.dbus-1 {
		return fmt.Errorf("%d accounts of this run, want %d: %v", len(users), p.dbus-1, users)
	}
	return nil
}

// dropAccount drops an account of this run that no DatabaseUser manages any more.
func (x *chaosRun) dropAccount(t *testing.T, user string) {
	t.Helper()
	admin, err := sql.Open("mysql", mariadbDSN("", ""))
	if err != nil {
		t.Fatalf("drop %s: %v", user, err)
	}
	defer admin.Close()
	var host string
	if err := admin.QueryRow("SELECT Host FROM mysql.user WHERE User = ?", user).Scan(&host); err != nil {
		t.Fatalf("drop %s: %v", user, err)
	}
	// The test's own names (chaos<hex>_<n>) and hosts need no escaping beyond the quotes.
	if _, err := admin.Exec(fmt.Sprintf("DROP USER IF EXISTS '%s'@'%s'", user, host)); err != nil {
		t.Fatalf("drop %s: %v", user, err)
	}
}

// releasedUnconfigured: 0.1.0 released DatabaseUser name because its target was not in its DATABASE_TARGETS
// (0.1.0's Event; the newest release has no such message).
func releasedUnconfigured(name string) (bool, error) {
	var l corev1.EventList
	if err := c.List(context.Background(), &l, client.InNamespace(chaosDBNS)); err != nil {
		return false, err
	}
	for _, e := range l.Items {
		if e.InvolvedObject.Name == name && e.Reason == "AccountNotDropped" &&
			strings.Contains(e.Message, "is not configured in the operator; the account was not dropped") {
			return true, nil
		}
	}
	return false, nil
}

// checkUpgradeable: some sample saw Upgradeable=False while an At's command ran, none saw it False with no
// command running for long, and it is True at the end.
func (x *chaosRun) checkUpgradeable(t *testing.T) checkRow {
	t.Helper()
	x.mu.Lock()
	samples := slices.Clone(x.samples)
	x.mu.Unlock()
	held := 0
	for _, s := range samples {
		if s.atRanAround && s.status == metav1.ConditionFalse {
			held++
		}
	}
	if held == 0 {
		t.Errorf("no sample of the %d saw Upgradeable=False while an At's command ran", len(samples))
	}
	var oc operatorsv2.OperatorCondition
	eventually(t, 2*time.Minute, "Upgradeable=True at the end", func() (bool, string) {
		if err := get(&oc, chaosOpNS, headCSV); err != nil {
			return false, err.Error()
		}
		cond := meta.FindStatusCondition(oc.Spec.Conditions, operatorsv2.Upgradeable)
		return cond == nil || cond.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", cond)
	})
	return checkRow{"Upgradeable: False while a command ran, True at the end", len(samples),
		fmt.Sprintf("ok (%d samples held it)", held)}
}

// deleteChaosWorkload deletes the custom resources while the operator still runs (DatabaseUsers' finalizers
// need it), before the namespaces go.
func deleteChaosWorkload(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, obj := range []client.Object{&mygroupv1alpha1.DatabaseUser{}, &operatorv1.MyWeb{}, &appv1.AppService{},
		&batchv1alpha1.AppService{}, &cnatv1alpha1.At{}} {
		for _, ns := range []string{chaosWebNS, chaosAppNS, chaosBatNS, chaosAtNS, chaosDBNS} {
			if err := c.DeleteAllOf(ctx, obj, client.InNamespace(ns)); err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
				t.Errorf("deleting %T in %s: %v", obj, ns, err)
			}
		}
	}
	eventually(t, 3*time.Minute, "the chaos DatabaseUsers gone", func() (bool, string) {
		var l mygroupv1alpha1.DatabaseUserList
		err := c.List(ctx, &l, client.InNamespace(chaosDBNS))
		return (err == nil && len(l.Items) == 0) || meta.IsNoMatchError(err), fmt.Sprint(len(l.Items), err)
	})
}
