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

package at_test

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// A wall-clock time in Europe/Berlin: CET (+01:00) in winter, CEST (+02:00) in summer; on 2030-03-31 the clocks
// jump from 02:00 to 03:00 (02:xx does not exist), on 2030-10-27 they go back from 03:00 to 02:00 (02:xx is
// there twice).
func TestLocalTime(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ wall, want, why string }{
		{"2030-01-15T10:00:00", "2030-01-15T09:00:00Z", "winter: CET"},
		{"2030-06-01T14:00:00", "2030-06-01T12:00:00Z", "summer: CEST"},
		{"2030-03-31T01:59:59", "2030-03-31T00:59:59Z", "the last second before the gap"},
		{"2030-03-31T02:00:00", "2030-03-31T01:00:00Z", "the gap's first second: 03:00 CEST"},
		{"2030-03-31T02:30:00", "2030-03-31T01:30:00Z", "in the gap: shifted forward by the gap, 03:30 CEST"},
		{"2030-03-31T03:00:00", "2030-03-31T01:00:00Z", "the first wall time after the gap"},
		{"2030-10-27T01:59:59", "2030-10-26T23:59:59Z", "before the repeated hour"},
		{"2030-10-27T02:00:00", "2030-10-27T00:00:00Z", "the repeated hour's start: the first (CEST)"},
		{"2030-10-27T02:30:00", "2030-10-27T00:30:00Z", "in the repeated hour: the first occurrence (CEST), not time.Date's"},
		{"2030-10-27T03:00:00", "2030-10-27T02:00:00Z", "after the repeated hour: CET"},
	} {
		wall, err := time.Parse(cnatv1alpha1.LocalScheduleLayout, c.wall)
		if err != nil {
			t.Fatal(err)
		}
		if got := atctl.LocalTime(wall, berlin); !got.Equal(utc(c.want)) || got.Location() != time.UTC {
			t.Errorf("%s (%s): got %s, want %s", c.wall, c.why, got, c.want)
		}
	}
	// A zone without daylight saving, and one east of UTC across the date line.
	for _, c := range []struct{ zone, wall, want string }{
		{"UTC", "2030-03-31T02:30:00", "2030-03-31T02:30:00Z"},
		{"Asia/Tokyo", "2030-01-01T08:00:00", "2029-12-31T23:00:00Z"},
		{"America/New_York", "2030-03-10T02:30:00", "2030-03-10T07:30:00Z"}, // gap: 03:30 EDT
		{"America/New_York", "2030-11-03T01:30:00", "2030-11-03T05:30:00Z"}, // repeat: the first, EDT
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		wall, _ := time.Parse(cnatv1alpha1.LocalScheduleLayout, c.wall)
		if got := atctl.LocalTime(wall, loc); !got.Equal(utc(c.want)) {
			t.Errorf("%s %s: got %s, want %s", c.zone, c.wall, got, c.want)
		}
	}
}

// Schedule: UTC without a zone, as before; in the zone with one; an unknown zone is an error of its own kind.
func TestSchedule(t *testing.T) {
	at := func(schedule string, zone *string) *cnatv1alpha1.At {
		return &cnatv1alpha1.At{Spec: cnatv1alpha1.AtSpec{Schedule: schedule, TimeZone: zone}}
	}
	got, err := atctl.Schedule(at("2019-04-12T10:12:00Z", nil))
	if err != nil || !got.Equal(utc("2019-04-12T10:12:00Z")) {
		t.Errorf("UTC: %s, %v", got, err)
	}
	got, err = atctl.Schedule(at("2019-04-12T10:12:00", ptr.To("Europe/Berlin")))
	if err != nil || !got.Equal(utc("2019-04-12T08:12:00Z")) {
		t.Errorf("Berlin: %s, %v", got, err)
	}
	for _, z := range []string{"Mars/Olympus_Mons", "Local", "", "../../etc/passwd"} {
		if _, err := atctl.Schedule(at("2019-04-12T10:12:00", ptr.To(z))); !atctl.IsUnknownZone(err) {
			t.Errorf("zone %q: %v, want an unknown zone", z, err)
		}
	}
	if _, err := atctl.Schedule(at("2019-04-12T10:12:00Z", ptr.To("Europe/Berlin"))); err == nil || atctl.IsUnknownZone(err) {
		t.Errorf("a Z schedule with a zone: %v, want an invalid schedule", err)
	}
}

// The schema: a schedule ends in Z without timeZone and has no Z (nor offset) with one; timeZone is a zone's
// name (not Local, nothing a path could make of it) and cannot change once the command started.
func TestTimeZoneValidation(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t, "at")
	bad := func(schedule string, zone *string, want string) {
		t.Helper()
		at := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bad-"},
			Spec: cnatv1alpha1.AtSpec{Schedule: schedule, Command: "true", TimeZone: zone}}
		testenv.ExpectInvalid(t, env.Client, at, want)
	}
	bad("2030-01-01T10:00:00Z", ptr.To("Europe/Berlin"), "has no Z with timeZone")
	bad("2030-01-01T10:00:00", nil, "ends in Z (UTC) without timeZone")
	bad("2030-01-01T10:00:00+01:00", ptr.To("Europe/Berlin"), "spec.schedule")
	bad("2030-02-30T10:00:00", ptr.To("Europe/Berlin"), "spec.schedule")
	bad("2030-01-01T10:00:00", ptr.To("Local"), "timeZone Local would be the operator's zone")
	bad("2030-01-01T10:00:00", ptr.To(""), "spec.timeZone")
	bad("2030-01-01T10:00:00", ptr.To("../etc/passwd"), "spec.timeZone")
	bad("2030-01-01T10:00:00", ptr.To("Europe/Berlin "), "spec.timeZone")

	at := createAt(t, ns, "berlin", "2030-01-01T10:00:00", "true", func(a *cnatv1alpha1.At) { a.Spec.TimeZone = ptr.To("Europe/Berlin") })
	edit := func(mutate func(*cnatv1alpha1.At)) error {
		cur := getAt(g, key(at))
		mutate(cur)
		return env.Client.Update(ctx, cur)
	}
	// Free while PENDING: another zone, or UTC again (with a Z).
	g.Expect(edit(func(a *cnatv1alpha1.At) { a.Spec.TimeZone = ptr.To("America/New_York") })).To(gomega.Succeed())
	g.Expect(edit(func(a *cnatv1alpha1.At) { a.Spec.TimeZone = nil; a.Spec.Schedule = "2030-01-01T10:00:00Z" })).To(gomega.Succeed())
	g.Expect(edit(func(a *cnatv1alpha1.At) {
		a.Spec.TimeZone = ptr.To("Asia/Tokyo")
		a.Spec.Schedule = "2030-01-01T10:00:00"
	})).To(gomega.Succeed())
	cur := getAt(g, key(at))
	cur.Status.Phase = cnatv1alpha1.PhaseRunning
	must(t, env.Client.Status().Update(ctx, cur))
	err := edit(func(a *cnatv1alpha1.At) { a.Spec.TimeZone = ptr.To("Europe/Berlin") })
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("timeZone cannot change once the command started")))
}

// A schedule in Europe/Berlin runs at the right instant, the DST gap and repeat as documented (LocalTime),
// with a fake clock: the reconciler asks to come back exactly then, and creates the pod only then.
func TestTimeZoneRunsAtTheZonesInstant(t *testing.T) {
	for _, c := range []struct{ name, wall, instant string }{
		{"summer", "2030-06-01T14:00:00", "2030-06-01T12:00:00Z"},
		{"gap", "2030-03-31T02:30:00", "2030-03-31T01:30:00Z"},
		{"repeat", "2030-10-27T02:30:00", "2030-10-27T00:30:00Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := gomega.NewWithT(t)
			ns := env.NewNamespace(t, "at")
			due := utc(c.instant)
			clk := newClock()
			clk.SetTime(due.Add(-time.Hour))
			r := atctl.NewReconciler(env.Client, events.NewFakeRecorder(100), reconciler.Options{Clock: clk, Reader: env.Client}, atctl.Config{})
			at := createAt(t, ns, "berlin", c.wall, "date", func(a *cnatv1alpha1.At) { a.Spec.TimeZone = ptr.To("Europe/Berlin") })
			req := ctrl.Request{NamespacedName: key(at)}
			res, err := r.Reconcile(context.Background(), req)
			must(t, err)
			g.Expect(res.RequeueAfter).To(gomega.Equal(time.Hour))
			st := getAt(g, key(at)).Status
			g.Expect(st.Phase).To(gomega.Equal(cnatv1alpha1.PhasePending))
			g.Expect(st.Message).To(gomega.ContainSubstring(c.instant))

			clk.Step(time.Hour - time.Second)
			res, err = r.Reconcile(context.Background(), req)
			must(t, err)
			g.Expect(res.RequeueAfter).To(gomega.Equal(time.Second))
			_, ok := getPod(t, key(at))
			g.Expect(ok).To(gomega.BeFalse(), "a pod a second early")

			clk.Step(time.Second)
			_, err = r.Reconcile(context.Background(), req)
			must(t, err)
			_, ok = getPod(t, key(at))
			g.Expect(ok).To(gomega.BeTrue(), "no pod at the zone's instant")
		})
	}
}

// A timeZone the zone database does not hold (the schema cannot know it): PENDING, reason UnknownTimeZone, one
// Warning Event however often it is reconciled, no requeue (no hot loop); fixing the zone schedules it.
func TestUnknownTimeZone(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := env.NewNamespace(t, "at")
	clk := newClock()
	rec := events.NewFakeRecorder(100)
	r := atctl.NewReconciler(env.Client, rec, reconciler.Options{Clock: clk, Reader: env.Client}, atctl.Config{})
	at := createAt(t, ns, "mars", "2030-06-01T16:00:00", "date", func(a *cnatv1alpha1.At) { a.Spec.TimeZone = ptr.To("Mars/Olympus_Mons") })
	req := ctrl.Request{NamespacedName: key(at)}
	for range 3 {
		res, err := r.Reconcile(context.Background(), req)
		must(t, err)
		g.Expect(res).To(gomega.Equal(ctrl.Result{}), "requeued: a hot loop")
	}
	cur := getAt(g, key(at))
	g.Expect(cur.Status.Phase).To(gomega.Equal(cnatv1alpha1.PhasePending))
	c := meta.FindStatusCondition(cur.Status.Conditions, cnatv1alpha1.ConditionSucceeded)
	g.Expect(c).NotTo(gomega.BeNil())
	g.Expect(c.Status).To(gomega.Equal(metav1.ConditionFalse))
	g.Expect(c.Reason).To(gomega.Equal(cnatv1alpha1.ReasonUnknownTimeZone))
	g.Expect(c.Message).To(gomega.ContainSubstring("Mars/Olympus_Mons"))
	g.Expect(c.ObservedGeneration).To(gomega.Equal(cur.Generation))
	g.Expect(rec.Events).To(gomega.HaveLen(1))
	g.Expect(<-rec.Events).To(gomega.ContainSubstring(cnatv1alpha1.ReasonUnknownTimeZone))
	_, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeFalse())

	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.TimeZone = ptr.To("Europe/Berlin")
	must(t, env.Client.Patch(context.Background(), cur, patch))
	res, err := r.Reconcile(context.Background(), req)
	must(t, err)
	g.Expect(res.RequeueAfter).To(gomega.Equal(2 * time.Hour))
	c = meta.FindStatusCondition(getAt(g, key(at)).Status.Conditions, cnatv1alpha1.ConditionSucceeded)
	g.Expect(c.Reason).To(gomega.Equal(cnatv1alpha1.ReasonScheduled))
}
