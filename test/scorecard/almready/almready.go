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

// Package almready is operator101's own scorecard test: every alm-examples object of the bundle's CSV,
// created in a namespace, reaches its Ready (or Available) condition, or for an At the phase DONE. The
// scorecard image's binary (test/scorecard/cmd/operator101-scorecard) and `make scorecard` both run it.
package almready

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	scapiv1alpha3 "github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
	apimanifests "github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestName is the scorecard test's name (its entrypoint argument).
const TestName = "alm-examples-ready"

// Examples reads the alm-examples of the CSV in a bundle directory.
func Examples(bundleDir string) ([]unstructured.Unstructured, error) {
	b, err := apimanifests.GetBundleFromDir(filepath.Clean(bundleDir))
	if err != nil {
		return nil, fmt.Errorf("loading the bundle from %s: %w", bundleDir, err)
	}
	return ExamplesOf(b.CSV)
}

// ExamplesOf parses the alm-examples of csv.
func ExamplesOf(csv *operatorsv1alpha1.ClusterServiceVersion) ([]unstructured.Unstructured, error) {
	var objs []map[string]any
	if err := json.Unmarshal([]byte(csv.GetAnnotations()["alm-examples"]), &objs); err != nil {
		return nil, fmt.Errorf("parsing alm-examples of %s: %w", csv.GetName(), err)
	}
	out := make([]unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, unstructured.Unstructured{Object: o})
	}
	return out, nil
}

// Outcome is what happened to one example.
type Outcome struct {
	Kind, Name string
	Ready      bool
	// Detail is the condition (or phase) seen last, or the error.
	Detail string
	Took   time.Duration
}

// Run creates every example in ns (with the password Secret a DatabaseUser refers to, when missing), waits
// up to timeout for each to be ready, deletes what it created, and reports each outcome. Examples that cannot
// live side by side (the same name, so the same children; or the same node port, which is the cluster's)
// run in later rounds, after the earlier ones and their children are deleted.
func Run(ctx context.Context, c client.Client, ns string, examples []unstructured.Unstructured,
	timeout time.Duration) []Outcome {
	outcomes := make([]Outcome, len(examples))
	for _, round := range rounds(examples) {
		var batch []unstructured.Unstructured
		for _, i := range round {
			batch = append(batch, examples[i])
		}
		for k, o := range runRound(ctx, c, ns, batch, timeout) {
			outcomes[round[k]] = o
		}
	}
	return outcomes
}

func runRound(ctx context.Context, c client.Client, ns string, examples []unstructured.Unstructured,
	timeout time.Duration) []Outcome {
	created, outcomes := CreateAll(ctx, c, ns, examples)
	defer deleteAll(c, ns, created)
	start := time.Now()
	// One poll over every example still pending, so a slow or broken one does not eat the others' time.
	pending := map[int]bool{}
	for i := range examples {
		if outcomes[i].Detail == "" {
			pending[i] = true
		}
	}
	_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for i := range pending {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(examples[i].GroupVersionKind())
			key := client.ObjectKey{Namespace: ns, Name: examples[i].GetName()}
			if err := c.Get(ctx, key, obj); err != nil {
				outcomes[i].Detail = err.Error()
				continue
			}
			outcomes[i].Ready, outcomes[i].Detail = ready(obj)
			outcomes[i].Took = time.Since(start).Round(time.Millisecond)
			if outcomes[i].Ready {
				delete(pending, i)
			}
		}
		return len(pending) == 0, nil
	})
	return outcomes
}

// rounds groups the examples (by index, in order) so that no two in a round share a name or a node port.
func rounds(examples []unstructured.Unstructured) [][]int {
	var out [][]int
	var taken []map[string]bool
	for i := range examples {
		keys := conflictKeys(&examples[i])
		r := 0
		for ; r < len(out); r++ {
			free := true
			for _, k := range keys {
				free = free && !taken[r][k]
			}
			if free {
				break
			}
		}
		if r == len(out) {
			out, taken = append(out, nil), append(taken, map[string]bool{})
		}
		out[r] = append(out[r], i)
		for _, k := range keys {
			taken[r][k] = true
		}
	}
	return out
}

// conflictKeys are what an example holds that another cannot hold at the same time: its name (children are
// named after it) and its node ports (MyWeb's nodePortNumber, AppService's ports[].nodePort).
func conflictKeys(obj *unstructured.Unstructured) []string {
	keys := []string{"name/" + obj.GetName()}
	if p, ok, _ := unstructured.NestedInt64(obj.Object, "spec", "nodePortNumber"); ok {
		keys = append(keys, fmt.Sprintf("nodePort/%d", p))
	}
	ports, _, _ := unstructured.NestedSlice(obj.Object, "spec", "ports")
	for _, p := range ports {
		port, _ := p.(map[string]any)
		if n, ok, _ := unstructured.NestedInt64(port, "nodePort"); ok {
			keys = append(keys, fmt.Sprintf("nodePort/%d", n))
		}
	}
	return keys
}

// deleteAll deletes what a round created, then the children the operator made for it (named after it and
// controlled by it): a cluster's garbage collector would, but not at once, and an API server alone (make
// scorecard) has none; the next round may need the names and node ports.
func deleteAll(c client.Client, ns string, created []client.Object) {
	ctx := context.Background()
	for _, o := range created {
		_ = c.Delete(ctx, o)
	}
	// A reconcile already under way may write a child again just after its owner is gone: look until none is left.
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		left := 0
		for _, o := range created {
			for _, child := range []client.Object{&corev1.Service{}, &appsv1.Deployment{}, &corev1.ConfigMap{}} {
				if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.GetName()}, child); err != nil {
					continue
				}
				if o.GetUID() != "" && metav1.IsControlledBy(child, o) {
					left++
					_ = c.Delete(ctx, child, client.Preconditions{UID: ptr.To(child.GetUID())})
				}
			}
		}
		return left == 0, nil
	})
}

// CreateAll creates every example in ns, with the password Secret a DatabaseUser refers to when missing. It
// returns what it created (for the caller to delete) and an outcome per example whose Detail says why its
// creation failed, if it did.
func CreateAll(ctx context.Context, c client.Client, ns string, examples []unstructured.Unstructured) ([]client.Object, []Outcome) {
	var created []client.Object
	outcomes := make([]Outcome, len(examples))
	for i := range examples {
		obj := examples[i].DeepCopy()
		outcomes[i] = Outcome{Kind: obj.GetKind(), Name: obj.GetName()}
		if namespaced, err := c.IsObjectNamespaced(obj); err == nil && !namespaced {
			// A DatabaseTarget: the cluster admin's, which a namespace's test may neither create nor read. The
			// DatabaseUser example that uses it proves it works.
			outcomes[i].Ready, outcomes[i].Detail = true, "cluster-scoped: set up by the cluster admin, not created here"
			continue
		}
		obj.SetNamespace(ns)
		if err := forNamespace(obj, ns); err != nil {
			outcomes[i].Detail = err.Error()
			continue
		}
		pre, err := prerequisites(ctx, c, obj)
		created = append(created, pre...)
		if err == nil {
			err = c.Create(ctx, obj)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			outcomes[i].Detail = fmt.Sprintf("creating: %v", err)
			continue
		}
		created = append(created, obj)
	}
	return created, outcomes
}

// ready tells whether an object is ready: condition Ready or Available True, or phase DONE (At).
func ready(obj *unstructured.Unstructured) (bool, string) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var seen []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		if t == "Ready" || t == "Available" {
			seen = append(seen, fmt.Sprintf("%s=%s (%s)", t, s, r))
			if s == string(metav1.ConditionTrue) {
				return true, seen[len(seen)-1]
			}
		}
	}
	if phase, ok, _ := unstructured.NestedString(obj.Object, "status", "phase"); ok {
		if phase == "DONE" {
			return true, "phase DONE"
		}
		seen = append(seen, "phase "+phase)
	}
	if len(seen) == 0 {
		return false, "no Ready or Available condition yet"
	}
	return false, strings.Join(seen, ", ")
}

// forNamespace fits a Database example to the namespace it is created in: a database's name must be one the
// DatabaseTarget allows that namespace, by default <namespace> or <namespace>_*, which no example can know, so
// the test names it <namespace>_<the example's name>. It also asks for cleanupPolicy Delete, so that the test
// leaves no database behind for its next run (the example keeps the default, Skip, that never drops data).
func forNamespace(obj *unstructured.Unstructured, ns string) error {
	if obj.GetKind() != "Database" {
		return nil
	}
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "name")
	if err := unstructured.SetNestedField(obj.Object, ns+"_"+name, "spec", "name"); err != nil {
		return fmt.Errorf("naming the Database example's database: %w", err)
	}
	return unstructured.SetNestedField(obj.Object, "Delete", "spec", "cleanupPolicy")
}

// prerequisites creates what an example needs and cannot carry itself: a DatabaseUser's password Secret.
func prerequisites(ctx context.Context, c client.Client, obj *unstructured.Unstructured) ([]client.Object, error) {
	if obj.GetKind() != "DatabaseUser" {
		return nil, nil
	}
	name, _, _ := unstructured.NestedString(obj.Object, "spec", "password", "name")
	key, _, _ := unstructured.NestedString(obj.Object, "spec", "password", "key")
	if name == "" || key == "" {
		return nil, nil
	}
	pw := make([]byte, 12)
	if _, err := rand.Read(pw); err != nil {
		return nil, err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: obj.GetNamespace()},
		Data:       map[string][]byte{key: []byte(hex.EncodeToString(pw))},
	}
	if err := c.Create(ctx, s); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("creating the password Secret %s: %w", name, err)
	}
	return []client.Object{s}, nil
}

// Status turns the outcomes into the scorecard's v1alpha3 TestStatus.
func Status(outcomes []Outcome, setupErr error) scapiv1alpha3.TestStatus {
	r := scapiv1alpha3.TestResult{Name: TestName, State: scapiv1alpha3.PassState, Errors: []string{}, Suggestions: []string{}}
	var log strings.Builder
	if setupErr != nil {
		r.State = scapiv1alpha3.ErrorState
		r.Errors = append(r.Errors, setupErr.Error())
	}
	for _, o := range outcomes {
		mark := "ready"
		if !o.Ready {
			mark = "NOT ready"
			r.State = scapiv1alpha3.FailState
			r.Errors = append(r.Errors, fmt.Sprintf("%s %s not ready: %s", o.Kind, o.Name, o.Detail))
		}
		fmt.Fprintf(&log, "%s %s: %s after %s: %s\n", o.Kind, o.Name, mark, o.Took, o.Detail)
	}
	if len(outcomes) == 0 && setupErr == nil {
		r.State = scapiv1alpha3.FailState
		r.Errors = append(r.Errors, "the CSV has no alm-examples")
	}
	r.Log = log.String()
	return scapiv1alpha3.TestStatus{Results: []scapiv1alpha3.TestResult{r}}
}

// KubeletStandIn does, in namespace ns, what a node would: a Deployment's pods become ready, and a Pod whose
// command a node would run finishes with exit code 0. It runs until ctx ends. An API server without nodes
// (envtest) needs it for Deployments to become available and Pods to finish.
func KubeletStandIn(ctx context.Context, cs kubernetes.Interface, ns string) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if deps, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); err == nil {
			for i := range deps.Items {
				d := &deps.Items[i]
				want := int32(1)
				if d.Spec.Replicas != nil {
					want = *d.Spec.Replicas
				}
				if d.Status.ObservedGeneration == d.Generation && d.Status.ReadyReplicas == want &&
					d.Status.AvailableReplicas == want && d.Status.Replicas == want {
					continue
				}
				now := metav1.Now()
				d.Status = appsv1.DeploymentStatus{
					ObservedGeneration: d.Generation, Replicas: want, UpdatedReplicas: want,
					ReadyReplicas: want, AvailableReplicas: want,
					Conditions: []appsv1.DeploymentCondition{
						{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
							LastUpdateTime: now, LastTransitionTime: now},
						{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
							LastUpdateTime: now, LastTransitionTime: now},
					},
				}
				_, _ = cs.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
			}
		}
		if pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
					continue
				}
				now := metav1.Now()
				p.Status.Phase = corev1.PodSucceeded
				p.Status.StartTime = &now
				p.Status.ContainerStatuses = nil
				for _, c := range p.Spec.Containers {
					p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
						Name: c.Name, Image: c.Image,
						State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
							ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
					})
				}
				_, _ = cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			}
		}
	}
}
