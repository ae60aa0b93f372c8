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

package manager

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
)

const leaseName = "operator101.operator101.io"

// TestLeaderFailover runs two replicas with leader election, kills the leader without warning (SIGKILL, so it
// cannot release the Lease) and measures how long until the other one holds the Lease and reconciles.
func TestLeaderFailover(t *testing.T) {
	ctx := context.Background()
	// A namespace of its own each run (go test -count=N), for the Lease and the DatabaseUsers.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: env.NewNamespace(t, "leader-election")}}
	kc := adminKubeconfig(t)
	args := []string{"--leader-elect=true", "--leader-election-namespace=" + ns.Name,
		"--metrics-bind-address=0", "--health-probe-bind-address=0"}
	first := start(t, kc, args...)
	holder := waitForHolder(t, ns.Name, "", 60*time.Second)
	second := start(t, kc, args...)

	// Only the leader reconciles: a DatabaseUser whose DatabaseTarget does not exist gets UnknownTarget.
	dbu := func(name string) *mygroupv1alpha1.DatabaseUser {
		return &mygroupv1alpha1.DatabaseUser{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name,
				Labels: map[string]string{mygroupv1alpha1.TargetLabel: "nowhere"}},
			Spec: mygroupv1alpha1.DatabaseUserSpec{User: name,
				Password: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}},
		}
	}
	if err := env.Client.Create(ctx, dbu("before")); err != nil {
		t.Fatal(err)
	}
	if !waitForReason(t, ns.Name, "before", mygroupv1alpha1.ReasonUnknownTarget, 60*time.Second) {
		t.Fatalf("no reconcile before the failover; logs:\n%s\n---\n%s", first.log(), second.log())
	}

	// The first replica took the Lease before the second one started, so it is the leader.
	leader, follower := first, second
	killedAt := time.Now()
	if err := leader.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	newHolder := waitForHolder(t, ns.Name, holder, 90*time.Second)
	tookOver := time.Since(killedAt)
	if err := env.Client.Create(ctx, dbu("after")); err != nil {
		t.Fatal(err)
	}
	waitForReason(t, ns.Name, "after", mygroupv1alpha1.ReasonUnknownTarget, 60*time.Second)
	reconciled := time.Since(killedAt)
	if newHolder == holder || follower.cmd.ProcessState != nil {
		t.Errorf("the surviving replica did not take over (holder %q)", newHolder)
	}
	t.Logf("leader killed: lease taken over after %s, first reconcile by the new leader after %s",
		tookOver.Round(100*time.Millisecond), reconciled.Round(100*time.Millisecond))
}

func waitForHolder(t *testing.T, ns, not string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var l coordinationv1.Lease
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: leaseName}, &l); err == nil &&
			l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" && *l.Spec.HolderIdentity != not {
			return *l.Spec.HolderIdentity
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no new Lease holder (other than %q) within %s", not, within)
	return ""
}

func waitForReason(t *testing.T, ns, name, reason string, within time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var d mygroupv1alpha1.DatabaseUser
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &d); err == nil {
			if c := meta.FindStatusCondition(d.Status.Conditions, "Ready"); c != nil && c.Reason == reason {
				return true
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("DatabaseUser %s/%s did not reach reason %s within %s", ns, name, reason, within)
	return false
}
