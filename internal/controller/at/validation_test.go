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
	"os"
	"path/filepath"
	"testing"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	atctl "github.com/operator101/operator101/internal/controller/at"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/test/testenv"
)

// The CRD schema: schedule must be a real UTC time; schedule and command are frozen once the pod exists,
// and free while PENDING.
func TestValidation(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t, "at")
	for _, bad := range []string{"", "2019-04-12 10:12:00", "2019-04-12T10:12:00+02:00", "2019-04-12T10:12:00.5Z",
		"2019-02-30T10:12:00Z", "2019-04-12T25:12:00Z", "tomorrow"} {
		at := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bad-"},
			Spec: cnatv1alpha1.AtSpec{Schedule: bad, Command: "true"}}
		err := env.Client.Create(ctx, at)
		g.Expect(err).To(gomega.HaveOccurred(), "schedule %q accepted", bad)
		g.Expect(err.Error()).To(gomega.ContainSubstring("schedule"))
		// Readable: says what is wrong, not how a rule failed to evaluate.
		g.Expect(err.Error()).NotTo(gomega.ContainSubstring("conversion error"), "schedule %q", bad)
	}
	impossible := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bad-"},
		Spec: cnatv1alpha1.AtSpec{Schedule: "2019-02-30T10:12:00Z", Command: "true"}}
	err := env.Client.Create(ctx, impossible)
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("schedule must be a date and time that exist on the calendar")))
	noCommand := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nocmd"},
		Spec: cnatv1alpha1.AtSpec{Schedule: "2019-04-12T10:12:00Z"}}
	g.Expect(env.Client.Create(ctx, noCommand)).NotTo(gomega.Succeed())

	at := createAt(t, ns, "edit", "2030-01-01T00:00:00Z", "echo a")
	setPhase := func(phase string) {
		t.Helper()
		cur := getAt(g, key(at))
		cur.Status.Phase = phase
		must(t, env.Client.Status().Update(ctx, cur))
	}
	edit := func(mutate func(*cnatv1alpha1.At)) error {
		cur := getAt(g, key(at))
		mutate(cur)
		return env.Client.Update(ctx, cur)
	}
	// No status yet, then PENDING: both editable.
	g.Expect(edit(func(a *cnatv1alpha1.At) { a.Spec.Command = "echo b" })).To(gomega.Succeed())
	setPhase(cnatv1alpha1.PhasePending)
	g.Expect(edit(func(a *cnatv1alpha1.At) { a.Spec.Command = "echo c"; a.Spec.Schedule = "2031-01-01T00:00:00Z" })).To(gomega.Succeed())

	for _, phase := range []string{cnatv1alpha1.PhaseRunning, cnatv1alpha1.PhaseDone, cnatv1alpha1.PhaseFailed} {
		setPhase(phase)
		err := edit(func(a *cnatv1alpha1.At) { a.Spec.Command = "echo d" })
		g.Expect(err).To(gomega.HaveOccurred(), "command edited while %s", phase)
		g.Expect(err.Error()).To(gomega.ContainSubstring("schedule and command cannot change once the command started"))
		g.Expect(edit(func(a *cnatv1alpha1.At) { a.Spec.Schedule = "2032-01-01T00:00:00Z" })).NotTo(gomega.Succeed(), "schedule edited while %s", phase)
		// Other changes stay possible.
		g.Expect(edit(func(a *cnatv1alpha1.At) { a.Labels = map[string]string{"phase": phase} })).To(gomega.Succeed())
	}
	g.Expect(getAt(g, key(at)).Spec.Command).To(gomega.Equal("echo c"))
}

// activeDeadlineSeconds: the API server fills in the default (3600) when the At sets none, refuses more than a
// day (86400) and less than a second, and freezes the value once the command started.
func TestActiveDeadlineSecondsDefaultAndMax(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx := context.Background()
	ns := env.NewNamespace(t, "at")
	at := createAt(t, ns, "defaulted", "2030-01-01T00:00:00Z", "true")
	g.Expect(at.Spec.ActiveDeadlineSeconds).To(gomega.HaveValue(gomega.BeEquivalentTo(cnatv1alpha1.DefaultActiveDeadlineSeconds)))
	g.Expect(getAt(g, key(at)).Spec.ActiveDeadlineSeconds).To(gomega.HaveValue(gomega.BeEquivalentTo(3600)))

	for _, v := range []int64{cnatv1alpha1.MaxActiveDeadlineSeconds + 1, 0, -5} {
		bad := &cnatv1alpha1.At{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bad-"},
			Spec: cnatv1alpha1.AtSpec{Schedule: "2030-01-01T00:00:00Z", Command: "true", ActiveDeadlineSeconds: ptr.To(v)}}
		testenv.ExpectInvalid(t, env.Client, bad, "spec.activeDeadlineSeconds")
	}
	longest := createAt(t, ns, "a-day", "2030-01-01T00:00:00Z", "true",
		func(a *cnatv1alpha1.At) {
			a.Spec.ActiveDeadlineSeconds = ptr.To[int64](cnatv1alpha1.MaxActiveDeadlineSeconds)
		})
	g.Expect(longest.Spec.ActiveDeadlineSeconds).To(gomega.HaveValue(gomega.BeEquivalentTo(86400)))

	// Free while PENDING, frozen once the command started.
	edit := func(v int64) error {
		cur := getAt(g, key(at))
		cur.Spec.ActiveDeadlineSeconds = ptr.To(v)
		return env.Client.Update(ctx, cur)
	}
	g.Expect(edit(60)).To(gomega.Succeed())
	cur := getAt(g, key(at))
	cur.Status.Phase = cnatv1alpha1.PhaseRunning
	must(t, env.Client.Status().Update(ctx, cur))
	err := edit(120)
	g.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("activeDeadlineSeconds cannot change once the command started")))
	g.Expect(getAt(g, key(at)).Spec.ActiveDeadlineSeconds).To(gomega.HaveValue(gomega.BeEquivalentTo(60)))
}

// The book's example applies unchanged, and (its schedule long past) runs at once, in the image the operator's
// RELATED_IMAGE_BUSYBOX names (a mirror's, here).
func TestBookSample(t *testing.T) {
	g := gomega.NewWithT(t)
	const mirrored = "mirror.example:5000/library/busybox:1.36"
	ns := env.NewNamespace(t, "at")
	raw, err := os.ReadFile(filepath.Join(env.Root, "config", "samples", "cnat_v1alpha1_at.yaml"))
	must(t, err)
	at := &cnatv1alpha1.At{}
	must(t, yaml.UnmarshalStrict(raw, at))
	at.Namespace = ns
	startOperator(t, nil, ns, reconciler.Options{}, atctl.Config{DefaultImage: mirrored})
	must(t, env.Client.Create(context.Background(), at))
	waitPhase(t, key(at), cnatv1alpha1.PhaseRunning)
	pod, ok := getPod(t, key(at))
	g.Expect(ok).To(gomega.BeTrue())
	g.Expect(pod.Name).To(gomega.Equal("example-at-pod"))
	g.Expect(pod.Spec.Containers[0].Command).To(gomega.Equal([]string{"/bin/sh", "-c", "echo YAY"}))
	g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(mirrored))
	// Bounded by the default deadline, which the API server filled in.
	g.Expect(pod.Spec.ActiveDeadlineSeconds).To(gomega.HaveValue(gomega.BeEquivalentTo(cnatv1alpha1.DefaultActiveDeadlineSeconds)))
}
