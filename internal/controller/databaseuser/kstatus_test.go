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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/test/kstatustest"
)

// kstatus, as Flux and kpt read it, tells each state of a DatabaseUser and of a DatabaseTarget: a server that
// does not answer yet is InProgress (a retry may fix it), a refusal only a person can fix is Failed.
func TestKstatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name     string
		user     outcome
		target   outcome
		deleting bool
		want     status.Status
	}{
		{"converging, server unreachable",
			outcome{reason: mygroupv1alpha1.ReasonDatabaseUnreachable, message: "no answer", retry: true},
			outcome{reason: mygroupv1alpha1.ReasonDatabaseUnreachable, message: "no answer", retry: true}, false, status.InProgressStatus},
		{"available",
			outcome{reason: mygroupv1alpha1.ReasonReady, message: "the account matches"},
			outcome{reason: mygroupv1alpha1.ReasonConnected, message: "connected"}, false, status.CurrentStatus},
		{"degraded, refused until someone acts",
			outcome{reason: mygroupv1alpha1.ReasonAccountNotOwned, message: "not ours", recheck: true},
			outcome{reason: mygroupv1alpha1.ReasonUnsupportedServer, message: "too old", recheck: true}, false, status.FailedStatus},
		{"failed, invalid",
			outcome{reason: mygroupv1alpha1.ReasonInvalidGrant, message: "no such privilege"},
			outcome{reason: mygroupv1alpha1.ReasonTargetSecretInvalid, message: "no password key"}, false, status.FailedStatus},
		{"deleted",
			outcome{reason: mygroupv1alpha1.ReasonReady, message: "the account matches"},
			outcome{reason: mygroupv1alpha1.ReasonConnected, message: "connected"}, true, status.TerminatingStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &mygroupv1alpha1.DatabaseUser{ObjectMeta: metav1.ObjectMeta{Name: "u", Namespace: "ns", Generation: 2}}
			tg := &mygroupv1alpha1.DatabaseTarget{ObjectMeta: metav1.ObjectMeta{Name: "t", Generation: 2}}
			if tc.deleting {
				u.DeletionTimestamp, tg.DeletionTimestamp = &now, &now
			}
			u.Status = computeStatus(u.Status, u.Generation, "t", tc.user, now, time.Hour)
			tg.Status = computeTargetStatus(tg.Status, tg.Generation, "db:3306", tc.target, now)
			if got := kstatustest.Compute(t, u, mygroupv1alpha1.GroupVersion.WithKind("DatabaseUser")); got.Status != tc.want {
				t.Errorf("DatabaseUser: kstatus says %s (%s), want %s; conditions %+v", got.Status, got.Message, tc.want, u.Status.Conditions)
			}
			if got := kstatustest.Compute(t, tg, mygroupv1alpha1.GroupVersion.WithKind("DatabaseTarget")); got.Status != tc.want {
				t.Errorf("DatabaseTarget: kstatus says %s (%s), want %s; conditions %+v", got.Status, got.Message, tc.want, tg.Status.Conditions)
			}
		})
	}
}

// A check is labelled with its target unless no DatabaseTarget has that name: a name a tenant made up is in no
// metric's label.
func TestMetricTarget(t *testing.T) {
	if got := metricTarget("main", outcome{reason: mygroupv1alpha1.ReasonReady}); got != "main" {
		t.Errorf("a known target is labelled %q", got)
	}
	if got := metricTarget("made-up-by-a-tenant", outcome{reason: mygroupv1alpha1.ReasonUnknownTarget}); got != "" {
		t.Errorf("an unknown target is labelled %q", got)
	}
}
