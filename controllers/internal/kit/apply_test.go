/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package kit

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

func TestEqual(t *testing.T) {
	rl := func(cpu string) *corev1ac.ResourceRequirementsApplyConfiguration {
		return corev1ac.ResourceRequirements().WithLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)})
	}
	cases := []struct {
		name string
		a, b any
		want bool
	}{
		{"same quantity, other spelling", rl("0.5"), rl("500m"), true},
		{"other quantity", rl("0.5"), rl("1"), false},
		{"extra field", corev1ac.Container().WithName("a"), corev1ac.Container().WithName("a").WithImage("x"), false},
		{"nil and nil", nil, (*corev1ac.ContainerApplyConfiguration)(nil), true},
	}
	for _, c := range cases {
		got, err := Equal(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("%s: Equal = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestTrimForCacheKeepsOnlyOurManagedFields(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "kubectl"}, {Manager: FieldOwner}, {Manager: "kube-controller-manager"},
	}}}
	out, err := TrimForCache(cm)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.ConfigMap).ManagedFields
	if len(got) != 1 || got[0].Manager != FieldOwner {
		t.Errorf("managedFields after trim = %+v, want only %s", got, FieldOwner)
	}
	applied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"index.html":"a whole page"}}`, "team": "web"}}}
	out, err = TrimForCache(applied)
	if err != nil {
		t.Fatal(err)
	}
	if a := out.(*corev1.ConfigMap).Annotations; len(a) != 1 || a["team"] != "web" {
		t.Errorf("annotations after trim = %v, want only team=web", a)
	}
	if _, err := TrimForCache("not an object"); err != nil {
		t.Errorf("TrimForCache on a non-object: %v", err)
	}
}

// TestIfChanged runs against a real API server: a write only when the owned fields differ, drift taken back,
// fields others add left alone.
func TestIfChanged(t *testing.T) {
	ctx := context.Background()
	cfg, counter := testenv.Counting(env.Config)
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	desired := corev1ac.ConfigMap("page", "default").WithLabels(map[string]string{"app": "web"}).
		WithData(map[string]string{"index.html": "<h1>hi</h1>"})
	get := func() *corev1.ConfigMap {
		t.Helper()
		var cm corev1.ConfigMap
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "page"}, &cm); err != nil {
			t.Fatal(err)
		}
		return &cm
	}
	step := func(name string, observed *corev1.ConfigMap, wantWrite bool) {
		t.Helper()
		counter.Reset()
		wrote, err := IfChanged(ctx, c, observed, desired, corev1ac.ExtractConfigMap)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if wrote != wantWrite || counter.Total() != map[bool]int{true: 1, false: 0}[wantWrite] {
			t.Fatalf("%s: wrote=%v writes=[%s], want wrote=%v", name, wrote, counter, wantWrite)
		}
	}

	step("absent object is created", nil, true)
	step("converged object costs no write", get(), false)

	// Someone else adds a key: it is theirs, so nothing to take back.
	cm := get()
	cm.Data["extra"] = "theirs"
	if err := env.Client.Update(ctx, cm, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	step("a field another manager added is left alone", get(), false)

	// Someone else changes a key we set: it is drift, and it is reverted.
	cm = get()
	cm.Data["index.html"] = "defaced"
	if err := env.Client.Update(ctx, cm, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	step("drift of an owned field is reverted", get(), true)
	if got := get().Data; got["index.html"] != "<h1>hi</h1>" || got["extra"] != "theirs" {
		t.Errorf("after revert data = %v", got)
	}
	step("converged again", get(), false)

	// The cache keeps only our managedFields entries; the comparison still holds on the trimmed copy.
	trimmed, _ := TrimForCache(get())
	step("trimmed cached copy costs no write", trimmed.(*corev1.ConfigMap), false)
}
