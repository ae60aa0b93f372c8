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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/controller/at"
)

// tenantClient is the client of user "tenant", whom the Samples step made admin of samplesNS (the RoleBinding
// tenant-admin): what a namespace's owner may do, and no more.
func tenantClient(t *testing.T) client.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "tenant"}
	tenant, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return tenant
}

// atAsATenant tries, as a tenant (the namespace's admin) would, what issue 56 asks of an At: a schedule in
// Europe/Berlin runs at that zone's instant; a suspended At does not run, and runs once resumed; a missed
// deadline is reported without a run; a command reads a Secret's value through env; retries stop at the limit
// with each attempt recorded. Schedules are seconds away, so the step takes about a minute.
func atAsATenant(t *testing.T) {
	ctx := context.Background()
	tenant := tenantClient(t)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	newAt := func(name, command string, mutate func(*cnatv1alpha1.AtSpec)) {
		t.Helper()
		a := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: samplesNS},
			Spec: cnatv1alpha1.AtSpec{Schedule: time.Now().UTC().Format(cnatv1alpha1.ScheduleLayout), Command: command}}
		mutate(&a.Spec)
		if err := tenant.Create(ctx, a); err != nil {
			t.Fatalf("the tenant's create of At %s: %v", name, err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), a) })
	}
	podExists := func(name string) bool {
		err := get(&corev1.Pod{}, samplesNS, name)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	atNow := func(name string) cnatv1alpha1.At {
		var a cnatv1alpha1.At
		if err := get(&a, samplesNS, name); err != nil {
			t.Fatal(err)
		}
		return a
	}

	// A wall-clock time in Europe/Berlin, 15 s from now: the pod is created at that instant, not an hour or two
	// off (UTC+1 or +2).
	due := time.Now().Add(15 * time.Second).Truncate(time.Second)
	newAt("tz-berlin", "date -u", func(s *cnatv1alpha1.AtSpec) {
		s.TimeZone = ptr.To("Europe/Berlin")
		s.Schedule = due.In(berlin).Format(cnatv1alpha1.LocalScheduleLayout)
	})
	// Suspended from the start, its schedule already past.
	newAt("suspended", "echo resumed", func(s *cnatv1alpha1.AtSpec) { s.Suspend = ptr.To(true) })
	// Created an hour late, with ten seconds to start.
	newAt("missed", "echo never", func(s *cnatv1alpha1.AtSpec) {
		s.Schedule = time.Now().Add(-time.Hour).UTC().Format(cnatv1alpha1.ScheduleLayout)
		s.StartingDeadlineSeconds = ptr.To[int64](10)
	})
	// A Secret's value, read by the command (it exits 0 only if it got it), never printed.
	const value = "tenant-token-56"
	if err := tenant.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "at-token", Namespace: samplesNS},
		StringData: map[string]string{"token": value}}); err != nil {
		t.Fatalf("the tenant's Secret: %v", err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "at-token", Namespace: samplesNS}})
	})
	newAt("reads-secret", `test "$TOKEN" = "`+value+`"`, func(s *cnatv1alpha1.AtSpec) {
		s.Env = []cnatv1alpha1.AtEnvVar{{Name: "TOKEN", ValueFrom: &cnatv1alpha1.AtEnvVarSource{
			SecretKeyRef: &cnatv1alpha1.AtKeySelector{Name: "at-token", Key: "token"}}}}
	})
	// Fails every time: three attempts, then FAILED.
	newAt("retries", "exit 7", func(s *cnatv1alpha1.AtSpec) { s.Retries = ptr.To[int32](2) })

	// The zone's instant.
	waitAtPhase(t, samplesNS, "tz-berlin", cnatv1alpha1.PhaseDone, 2*time.Minute)
	var pod corev1.Pod
	if err := get(&pod, samplesNS, at.PodName("tz-berlin")); err != nil {
		t.Fatal(err)
	}
	if created := pod.CreationTimestamp.Time; created.Before(due) || created.After(due.Add(30*time.Second)) {
		t.Errorf("the Europe/Berlin At's pod was created at %s, want at %s (within 30 s)", created.UTC(), due.UTC())
	}

	// Missed: reported, no pod.
	waitAtPhase(t, samplesNS, "missed", cnatv1alpha1.PhaseMissed, time.Minute)
	if cond := meta.FindStatusCondition(atNow("missed").Status.Conditions, cnatv1alpha1.ConditionSucceeded); cond == nil || cond.Reason != cnatv1alpha1.ReasonMissed {
		t.Errorf("the missed At's condition %+v, want reason %s", cond, cnatv1alpha1.ReasonMissed)
	}
	if podExists(at.PodName("missed")) {
		t.Errorf("the missed At ran")
	}

	// Suspended: still PENDING, no pod, long after its schedule; resumed, it runs once.
	suspended := atNow("suspended")
	if suspended.Status.Phase != cnatv1alpha1.PhasePending || podExists(at.PodName("suspended")) {
		t.Fatalf("the suspended At is %s (pod exists: %v)", suspended.Status.Phase, podExists(at.PodName("suspended")))
	}
	patch := client.MergeFrom(suspended.DeepCopy())
	suspended.Spec.Suspend = ptr.To(false)
	if err := tenant.Patch(ctx, &suspended, patch); err != nil {
		t.Fatalf("the tenant's resume: %v", err)
	}
	waitAtPhase(t, samplesNS, "suspended", cnatv1alpha1.PhaseDone, 2*time.Minute)
	if logs := kubectl(t, "logs", "-n", samplesNS, at.PodName("suspended")); strings.TrimSpace(logs) != "resumed" {
		t.Errorf("the resumed At's log is %q", logs)
	}

	// The Secret's value reached the command (it exited 0), and nothing the operator wrote holds it.
	waitAtPhase(t, samplesNS, "reads-secret", cnatv1alpha1.PhaseDone, 2*time.Minute)
	if st := fmt.Sprintf("%+v", atNow("reads-secret").Status); strings.Contains(st, value) {
		t.Errorf("the At's status holds the Secret's value: %s", st)
	}
	if events := kubectl(t, "get", "events", "-n", samplesNS, "-o", "yaml"); strings.Contains(events, value) {
		t.Errorf("an Event holds the Secret's value")
	}

	// Retries: three attempts, each recorded with its pod and exit code, then FAILED; no fourth pod.
	eventually(t, 3*time.Minute, "At retries FAILED after three attempts", func() (bool, string) {
		a := atNow("retries")
		return a.Status.Phase == cnatv1alpha1.PhaseFailed, fmt.Sprintf("%s %s (%d attempts)", a.Status.Phase, a.Status.Message, len(a.Status.Attempts))
	})
	retries := atNow("retries")
	if len(retries.Status.Attempts) != 3 {
		t.Fatalf("attempts %+v, want 3", retries.Status.Attempts)
	}
	for k, a := range retries.Status.Attempts {
		if int(a.Attempt) != k || a.PodName != at.AttemptPodName("retries", int32(k)) || ptr.Deref(a.ExitCode, -1) != 7 ||
			a.StartTime == nil || a.CompletionTime == nil {
			t.Errorf("attempt %d recorded as %+v", k, a)
		}
		if k > 0 && a.StartTime.Before(retries.Status.Attempts[k-1].CompletionTime) {
			t.Errorf("attempt %d started before attempt %d finished", k, k-1)
		}
	}
	time.Sleep(5 * time.Second)
	if podExists(at.AttemptPodName("retries", 3)) {
		t.Errorf("a fourth attempt ran")
	}
}
