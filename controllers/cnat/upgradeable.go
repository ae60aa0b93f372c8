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

package cnat

import (
	"context"
	"fmt"
	"sync"

	apiv2 "github.com/operator-framework/api/pkg/operators/v2"
	"github.com/operator-framework/operator-lib/conditions"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/apis/cnat/v1alpha1"
)

// upgradeable keeps OLM's Upgradeable condition False while any At is RUNNING, so that OLM does not replace
// the operator in the middle of a run. Without an OperatorCondition (cond nil) it does nothing.
type upgradeable struct {
	cache client.Reader
	cond  conditions.Condition

	mu   sync.Mutex
	last metav1.ConditionStatus // what the OperatorCondition is known to hold; "" after a start
}

func newUpgradeable(cache client.Reader, cond conditions.Condition) *upgradeable {
	return &upgradeable{cache: cache, cond: cond}
}

// sync sets the condition from the Ats in the cache; it writes only when the condition changes.
func (u *upgradeable) sync(ctx context.Context) error {
	if u == nil || u.cond == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	ats := &cnatv1alpha1.AtList{}
	if err := u.cache.List(ctx, ats); err != nil {
		return fmt.Errorf("listing Ats for the Upgradeable condition: %w", err)
	}
	running := 0
	for i := range ats.Items {
		if ats.Items[i].Status.Phase == cnatv1alpha1.PhaseRunning {
			running++
		}
	}
	status, reason, msg := metav1.ConditionTrue, cnatv1alpha1.ReasonNoAtRunning, "no At is running a command"
	if running > 0 {
		status, reason, msg = metav1.ConditionFalse, cnatv1alpha1.ReasonAtRunning, "an At is running a command; upgrade when it finished"
	}
	if u.last == status {
		return nil
	}
	if cur, err := u.cond.Get(ctx); err == nil && cur.Status == status && cur.Reason == reason {
		u.last = status
		return nil
	}
	if err := u.cond.Set(ctx, status, conditions.WithReason(reason), conditions.WithMessage(msg)); err != nil {
		return fmt.Errorf("setting the OperatorCondition's Upgradeable=%s: %w", status, err)
	}
	u.last = status
	return nil
}

// namespacedCondition is operator-lib's condition for an OperatorCondition whose namespace is known.
// operator-lib's factory reads the namespace only from the service account's namespace file, which exists in
// a pod but not in a local run or in tests; this one takes it from the operator's options.
type namespacedCondition struct {
	c    client.Client
	key  types.NamespacedName
	kind apiv2.ConditionType
}

// newOperatorCondition returns the condition kind of the OperatorCondition key, read and written through c
// (an uncached client whose scheme knows operators.coreos.com/v2).
func newOperatorCondition(c client.Client, key types.NamespacedName, kind apiv2.ConditionType) conditions.Condition {
	return &namespacedCondition{c: c, key: key, kind: kind}
}

func (n *namespacedCondition) Get(ctx context.Context) (*metav1.Condition, error) {
	oc := &apiv2.OperatorCondition{}
	if err := n.c.Get(ctx, n.key, oc); err != nil {
		return nil, err
	}
	if c := meta.FindStatusCondition(oc.Spec.Conditions, string(n.kind)); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("condition %s not found in OperatorCondition %s", n.kind, n.key)
}

func (n *namespacedCondition) Set(ctx context.Context, status metav1.ConditionStatus, opts ...conditions.Option) error {
	oc := &apiv2.OperatorCondition{}
	if err := n.c.Get(ctx, n.key, oc); err != nil {
		return err
	}
	c := metav1.Condition{Type: string(n.kind), Status: status}
	for _, o := range opts {
		o(&c)
	}
	meta.SetStatusCondition(&oc.Spec.Conditions, c)
	return n.c.Update(ctx, oc)
}
