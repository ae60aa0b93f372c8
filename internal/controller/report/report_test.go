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

package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

func ptr[T any](v T) *T { return &v }

// noEvents records nothing.
type noEvents struct{ recorder.EventRecorder }

// TestReportKnowsItsOwnWrites: once Report wrote the status of a version, a status computed from that version
// again (the cache has not caught up) is ErrStale without a request; once the cache holds a newer version
// (Seen), Report sends again, and the server's Conflict is ErrStale too.
func TestReportKnowsItsOwnWrites(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "report")
	cfg, counter := testenv.Counting(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "x"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}}}
	if err := env.Client.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	statuses := NewStatuses()
	cached := dep.DeepCopy() // what the cache holds until it sees the write
	report := func(observed int64) error {
		before := cached.DeepCopy()
		obj := cached.DeepCopy()
		obj.Status.ObservedGeneration = observed
		return statuses.Report(ctx, c, noEvents{}, before, obj)
	}

	counter.Reset()
	if err := report(1); err != nil || counter.Total() != 1 {
		t.Fatalf("first write: %v, %d writes [%s]; want it written", err, counter.Total(), counter)
	}
	counter.Reset()
	if err := report(2); !errors.Is(err, ErrStale) || counter.Total() != 0 {
		t.Errorf("from the version just written: %v, %d writes [%s]; want ErrStale and no request", err, counter.Total(), counter)
	}

	// The cache (here the API server itself, which c reads) moves on to a newer version: Report forgets its
	// write, and a write from the older version it still has is not sent either.
	newer := cached.DeepCopy()
	newer.ResourceVersion = "newer"
	statuses.Seen(newer)
	if n := len(statuses.m); n != 0 {
		t.Errorf("%d writes remembered after the cache moved on, want none", n)
	}
	counter.Reset()
	if err := report(2); !errors.Is(err, ErrStale) || counter.Total() != 0 {
		t.Errorf("from a version the cache moved past: %v, %d writes [%s]; want ErrStale and no request", err, counter.Total(), counter)
	}
	// From the version the cache holds, the write goes.
	if err := c.Get(ctx, client.ObjectKeyFromObject(dep), cached); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	if err := report(2); err != nil || counter.Total() != 1 {
		t.Errorf("from the cache's version: %v, %d writes [%s]; want it written", err, counter.Total(), counter)
	}
	var now appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), &now); err != nil || now.Status.ObservedGeneration != 2 {
		t.Errorf("the status stored: %+v (%v), want the last write's", now.Status, err)
	}
}

// The watch event of a status write may reach the cache before the write's answer reaches Report: what Report
// remembers of the write is gone once the cache holds the newer version all the same, so that it does not stay
// for every object at rest.
func TestReportForgetsAWriteTheCacheSawFirst(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t, "report")
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}}}
	if err := env.Client.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	statuses := NewStatuses()
	// The cache sees the write (Seen, as the informer's handler calls it) before the patch returns.
	w, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := interceptor.NewClient(w, interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client,
		sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
		if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
			return err
		}
		statuses.Seen(obj)
		return nil
	}})
	before := dep.DeepCopy()
	obj := dep.DeepCopy()
	obj.Status.ObservedGeneration = 1
	if err := statuses.Report(ctx, c, noEvents{}, before, obj); err != nil {
		t.Fatal(err)
	}
	if n := len(statuses.m); n != 0 {
		t.Errorf("%d writes remembered after the cache saw the write, want none", n)
	}
}

func TestEventNote(t *testing.T) {
	if got := eventNote("short"); got != "short" {
		t.Errorf("eventNote(short) = %q", got)
	}
	if got := eventNote(fmt.Sprintf("%01200d", 0)); len(got) > maxNote || !strings.HasSuffix(got, "...") {
		t.Errorf("note of %d bytes (%q...), want at most %d ending in ...", len(got), got[:20], maxNote)
	}
}
