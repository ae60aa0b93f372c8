//go:build faults

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

package faults

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/mysqlaccount"
	"github.com/operator101/operator101/test/mariadbtest"
)

// TestKillTheOperatorAtRandomPoints runs the real manager binary against an API server and a private MariaDB
// and kills it with SIGKILL at random points (FAULTS_KILLS times, 100 by default) while At objects fire and
// DatabaseUsers are created, changed and deleted. Then a last manager runs to the end, and:
//   - no At ran twice: exactly one pod was created per At, told apart by UID: the pods of the creations the
//     API server's audit log shows answered 201, and the pods the stand-in kubelet saw (a creation whose
//     client was killed is logged "500 client disconnected" without its pod, yet may have made one);
//   - no database account is lost or orphaned: mysql.user holds exactly the accounts of the DatabaseUsers that
//     exist, each with its current password;
//   - every object converges: Ats DONE, DatabaseUsers Ready for their generation, deleted ones gone.
func TestKillTheOperatorAtRandomPoints(t *testing.T) {
	began := time.Now()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seedFromEnv(t, "FAULTS_SEED", 101), 1))
	kills := 100
	if v := os.Getenv("FAULTS_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		must(t, err)
		kills = n
	}

	db, err := mariadbtest.Start()
	must(t, err)
	t.Cleanup(func() {
		if err := db.Stop(); err != nil {
			t.Errorf("stopping MariaDB: %v", err)
		}
	})
	admin := db.SQL(t)

	c := startCluster(t)
	k := c.client
	const opNS, ns = "operator", "work"
	for _, n := range []string{opNS, ns} {
		must(t, k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}))
	}
	must(t, k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: "mariadb-target"},
		StringData: map[string]string{"host": db.Admin.Host, "port": strconv.Itoa(db.Admin.Port),
			"username": db.Admin.User, "password": db.Admin.Password}}))
	must(t, k.Create(ctx, &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: mygroupv1alpha1.DatabaseTargetSpec{
			AdminSecretRef:    mygroupv1alpha1.SecretReference{Namespace: opNS, Name: "mariadb-target"},
			TLS:               mygroupv1alpha1.DatabaseTargetTLS{Mode: mygroupv1alpha1.TLSDisabled}, // the private MariaDB has none
			AllowedNamespaces: []string{ns},
			Databases:         []string{"db_*"},
		}}))
	managerEnv := []string{"POD_NAMESPACE=" + opNS, "DATABASE_RESYNC_PERIOD=2s"}
	args := []string{"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--max-concurrent-reconciles=2"}

	// The kubelet: every pod the operator creates succeeds soon after; it notes the UID of each.
	seen := &podsSeen{}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := completePods(ctx, k, ns, seen); err != nil {
				t.Errorf("completing pods: %v", err)
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-stopped })

	// The workload, driven by rng. passwords holds the DatabaseUsers that exist, with their current password.
	var ats []string
	passwords := map[string]string{}
	var deleted []string
	var dbCreated, changed, rotated int
	next := 0
	existing := func() string {
		names := make([]string, 0, len(passwords))
		for n := range passwords {
			names = append(names, n)
		}
		sort.Strings(names)
		return names[rng.IntN(len(names))]
	}
	step := func() {
		next++
		switch r := rng.IntN(100); {
		case r < 35 || len(passwords) == 0 && r >= 60:
			name := fmt.Sprintf("at-%d", next)
			at := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: cnatv1alpha1.AtSpec{Schedule: time.Now().UTC().Add(time.Duration(rng.IntN(3000)) * time.Millisecond).
					Format(cnatv1alpha1.ScheduleLayout), Command: fmt.Sprintf("echo %d", next)}}
			if rng.IntN(2) == 0 {
				at.Spec.TTLSecondsAfterFinished = ptr.To(int32(rng.IntN(2)))
			}
			must(t, k.Create(ctx, at))
			ats = append(ats, name)
		case r < 60:
			name := fmt.Sprintf("fz-%d", next)
			pw := fmt.Sprintf("pw-%d-%d", next, rng.Uint64())
			must(t, k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				StringData: map[string]string{"password": pw}}))
			must(t, k.Create(ctx, &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: mygroupv1alpha1.DatabaseUserSpec{User: strings.ReplaceAll(name, "-", "_"),
					Password:           &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "password"},
					Grants:             []mygroupv1alpha1.Grant{{Database: "db_" + strconv.Itoa(next), Privileges: []mygroupv1alpha1.Privilege{"SELECT"}}},
					MaxUserConnections: ptr.To(int32(rng.IntN(10))), CleanupPolicy: mygroupv1alpha1.CleanupDelete}}))
			passwords[name] = pw
			dbCreated++
		case r < 75:
			name := existing()
			maxConn, privs := int32(rng.IntN(10)), []mygroupv1alpha1.Privilege{"SELECT", "INSERT"}[:1+rng.IntN(2)]
			// A merge patch: no conflict with the operator's concurrent writes of status and finalizers.
			var d mygroupv1alpha1.DatabaseUser
			must(t, k.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &d))
			patch := client.MergeFrom(d.DeepCopy())
			d.Spec.MaxUserConnections = ptr.To(maxConn)
			d.Spec.Grants[0].Privileges = privs
			must(t, k.Patch(ctx, &d, patch))
			changed++
		case r < 85:
			name := existing()
			pw := fmt.Sprintf("pw-%d-%d", next, rng.Uint64())
			must(t, k.Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				StringData: map[string]string{"password": pw}}))
			passwords[name] = pw
			rotated++
		default:
			name := existing()
			must(t, k.Delete(ctx, &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
			delete(passwords, name)
			deleted = append(deleted, name)
		}
	}

	midWork := 0 // kills while an At or a DatabaseUser had not converged
	for i := range kills {
		p := startManager(t, c, managerEnv, args...)
		// The work arrives at random moments of the run, and the fault, SIGKILL, at a random point after it:
		// during the manager's start-up, in the middle of its reconciles, or once it is idle.
		for range 1 + rng.IntN(4) {
			time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
			step()
		}
		time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond)
		if p.exited() {
			t.Fatalf("kill %d: the manager exited by itself: %v\n%s", i, p.err, p.log())
		}
		if unfinished(ctx, k, ns) {
			midWork++
		}
		p.kill(t)
	}
	killed := time.Since(began)

	final := startManager(t, c, managerEnv, args...)
	eventually(t, 5*time.Minute, "convergence after the last kill", func() (bool, string) {
		var list cnatv1alpha1.AtList
		if err := k.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, a := range list.Items {
			if a.Status.Phase != cnatv1alpha1.PhaseDone {
				return false, fmt.Sprintf("At %s is %q", a.Name, a.Status.Phase)
			}
		}
		var dbus mygroupv1alpha1.DatabaseUserList
		if err := k.List(ctx, &dbus, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		if len(dbus.Items) != len(passwords) {
			return false, fmt.Sprintf("%d DatabaseUsers, want %d (deletions pending)", len(dbus.Items), len(passwords))
		}
		for _, d := range dbus.Items {
			r := meta.FindStatusCondition(d.Status.Conditions, mygroupv1alpha1.ConditionReady)
			if r == nil || r.Status != metav1.ConditionTrue || d.Status.ObservedGeneration != d.Generation {
				return false, fmt.Sprintf("DatabaseUser %s: %+v (generation %d)", d.Name, r, d.Generation)
			}
			if err := mariadbtest.CanLogin(ctx, mysqlaccount.Target{Host: db.Admin.Host, Port: db.Admin.Port, User: d.Spec.User,
				Password: passwords[d.Name]}, 5*time.Second); err != nil {
				return false, fmt.Sprintf("DatabaseUser %s cannot log in with its current password: %v", d.Name, err)
			}
		}
		return true, ""
	})
	converged := time.Since(began) - killed
	if final.exited() {
		t.Fatalf("the last manager exited: %v\n%s", final.err, final.log())
	}

	// Grants and connection limits, read back from the server: each account has exactly its DatabaseUser's
	// spec as it stands after the last change (the changes patched both while managers were being killed).
	var finalDBUs mygroupv1alpha1.DatabaseUserList
	must(t, k.List(ctx, &finalDBUs, client.InNamespace(ns)))
	checkedSpecs := 0
	for _, d := range finalDBUs.Items {
		maxConn, grants := accountOnServer(ctx, t, admin, d.Spec.User)
		want := map[string]string{}
		for _, g := range d.Spec.Grants {
			var privs []string
			for _, p := range g.Privileges {
				privs = append(privs, string(p))
			}
			sort.Strings(privs)
			want[g.Database] = strings.Join(privs, ",")
		}
		if wantConn := int(ptr.Deref(d.Spec.MaxUserConnections, 0)); maxConn != wantConn {
			t.Errorf("account %s: max_user_connections %d on the server, %d in DatabaseUser %s", d.Spec.User, maxConn, wantConn, d.Name)
		}
		if fmt.Sprint(grants) != fmt.Sprint(want) {
			t.Errorf("account %s: grants %v on the server, %v in DatabaseUser %s", d.Spec.User, grants, want, d.Name)
		}
		checkedSpecs++
	}
	if checkedSpecs != len(passwords) {
		t.Errorf("grants and limits checked for %d accounts, want %d", checkedSpecs, len(passwords))
	}
	t.Logf("grants and max_user_connections of %d accounts read back from the server", checkedSpecs)

	// Accounts: exactly those of the DatabaseUsers that exist.
	rows, err := admin.QueryContext(ctx, "SELECT User FROM mysql.user WHERE User LIKE 'fz\\_%' AND Host = '%'")
	must(t, err)
	accounts := map[string]bool{}
	for rows.Next() {
		var u string
		must(t, rows.Scan(&u))
		accounts[u] = true
	}
	must(t, rows.Err())
	must(t, rows.Close())
	var lost, orphans []string
	for name := range passwords {
		if u := strings.ReplaceAll(name, "-", "_"); !accounts[u] {
			lost = append(lost, u)
		}
	}
	for _, name := range deleted {
		if u := strings.ReplaceAll(name, "-", "_"); accounts[u] {
			orphans = append(orphans, u)
		}
		var d mygroupv1alpha1.DatabaseUser
		if err := k.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &d); !apierrors.IsNotFound(err) {
			t.Errorf("deleted DatabaseUser %s still there: %v", name, err)
		}
	}
	if len(accounts) != len(passwords) {
		t.Errorf("%d accounts in mysql.user, want %d", len(accounts), len(passwords))
	}
	// Ownership records: exactly one per account, naming the DatabaseUser that exists (a kill between the
	// record and CREATE USER, or between DROP USER and the record's delete, heals by the next reconcile).
	owned := map[string]string{}
	rows, err = admin.QueryContext(ctx, "SELECT user, owner_name FROM operator101.accounts WHERE user LIKE 'fz\\_%' AND host = '%'")
	must(t, err)
	for rows.Next() {
		var u, name string
		must(t, rows.Scan(&u, &name))
		owned[u] = name
	}
	must(t, rows.Err())
	must(t, rows.Close())
	for name := range passwords {
		if u := strings.ReplaceAll(name, "-", "_"); owned[u] != name {
			t.Errorf("account %s is recorded as owned by %q, want DatabaseUser %s", u, owned[u], name)
		}
	}
	if len(owned) != len(passwords) {
		t.Errorf("%d claims, want %d (one per account): %v", len(owned), len(passwords), owned)
	}

	// Pods: exactly one created per At, none for anything else. A pod is a UID: one answered 201, or one the
	// kubelet saw (made by a creation whose client was killed); two UIDs for one At are two runs.
	creates := c.podCreations(t)
	perAt, unanswered, strays := podsPerAt(ns, ats, creates, seen.get())
	duplicates, created := 0, 0
	for _, name := range ats {
		key := ns + "/" + name + "-pod"
		n := len(perAt[name])
		created += n
		if n != 1 {
			t.Errorf("At %s: %d pods created (UIDs %v), want 1: %d creations answered 201 (UIDs %v), %d ended \"client disconnected\"",
				name, n, keys(perAt[name]), creates.created[key], keys(creates.uids[key]), creates.disconnected[key])
		}
		if n > 1 {
			duplicates += n - 1
		}
	}
	if len(strays) > 0 {
		t.Errorf("pods created for no At: %v", strays)
	}
	if len(lost) > 0 || len(orphans) > 0 {
		t.Errorf("lost accounts %v, orphaned accounts %v", lost, orphans)
	}
	t.Logf("%d manager runs, %d SIGKILLs at random points (%d of them with work unfinished); %d Ats (%d pods created, %d of them "+
		"by a creation whose client was killed, %d duplicates); DatabaseUsers: "+
		"%d created, %d changed, %d passwords rotated, %d deleted; accounts at the end: %d (lost %d, orphaned %d); "+
		"kills took %s, convergence after the last one %s, total %s",
		kills+1, kills, midWork, len(ats), created, unanswered, duplicates, dbCreated, changed, rotated, len(deleted), len(accounts), len(lost),
		len(orphans), killed.Round(time.Second), converged.Round(100*time.Millisecond), time.Since(began).Round(time.Second))
}

// accountOnServer reads user@'%'s max_user_connections from mysql.user and its database-level privileges
// from mysql.db: by database name (the operator escapes `_` in the pattern; unescaped here), the privileges
// granted, sorted and joined with commas ("INSERT,SELECT").
func accountOnServer(ctx context.Context, t *testing.T, admin *sql.DB, user string) (int, map[string]string) {
	t.Helper()
	var maxConn int
	must(t, admin.QueryRowContext(ctx, "SELECT max_user_connections FROM mysql.user WHERE User = ? AND Host = '%'", user).Scan(&maxConn))
	rows, err := admin.QueryContext(ctx, "SELECT * FROM mysql.db WHERE User = ? AND Host = '%'", user)
	must(t, err)
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	must(t, err)
	grants := map[string]string{}
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		must(t, rows.Scan(ptrs...))
		var db string
		var privs []string
		for i, c := range cols {
			switch {
			case c == "Db":
				db = strings.ReplaceAll(string(vals[i]), `\_`, "_")
			case strings.HasSuffix(c, "_priv") && string(vals[i]) == "Y":
				privs = append(privs, strings.ToUpper(strings.ReplaceAll(strings.TrimSuffix(c, "_priv"), "_", " ")))
			}
		}
		sort.Strings(privs)
		grants[db] = strings.Join(privs, ",")
	}
	must(t, rows.Err())
	return maxConn, grants
}

// keys lists a set's UIDs, sorted.
func keys(set map[types.UID]bool) []types.UID {
	out := make([]types.UID, 0, len(set))
	for u := range set {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// unfinished says whether an At in ns has not finished or a DatabaseUser is not Ready for its generation or is
// being deleted.
func unfinished(ctx context.Context, k client.Client, ns string) bool {
	var ats cnatv1alpha1.AtList
	var dbus mygroupv1alpha1.DatabaseUserList
	if k.List(ctx, &ats, client.InNamespace(ns)) != nil || k.List(ctx, &dbus, client.InNamespace(ns)) != nil {
		return false
	}
	for _, a := range ats.Items {
		if a.Status.Phase != cnatv1alpha1.PhaseDone {
			return true
		}
	}
	for _, d := range dbus.Items {
		if !d.DeletionTimestamp.IsZero() || d.Status.ObservedGeneration != d.Generation ||
			!meta.IsStatusConditionTrue(d.Status.Conditions, mygroupv1alpha1.ConditionReady) {
			return true
		}
	}
	return false
}
