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
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mygroupv1alpha1 "github.com/operator101/operator101/api/mygroup/v1alpha1"
	"github.com/operator101/operator101/internal/controller/health"
	"github.com/operator101/operator101/internal/controller/reconciler"
)

// DatabaseTargets are the cluster admin's: the operator reads them and writes only their status, which says
// whether it can log in to the server. Cluster-scoped, so the rules are the CSV's clusterPermissions.
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databasetargets,verbs=get;list;watch
// +kubebuilder:rbac:groups=mygroup.handsomeguy.cn,resources=databasetargets/status,verbs=get;patch

// TargetReconciler reports, in each DatabaseTarget this installation serves, whether its server answers.
// It records no Events: those of a cluster-scoped object go to the "default" namespace, where an operator
// installed for its own namespace may not write.
type TargetReconciler struct {
	reconciler.Base
	cfg Config
}

// Reconcile logs in to one target's server and writes what it found, when that changed.
func (r *TargetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &mygroupv1alpha1.DatabaseTarget{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !servedHere(t, r.cfg.OperatorNamespace) || !t.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // another installation's, or going
	}
	out := outcome{reason: mygroupv1alpha1.ReasonConnected}
	server := t.Status.Server
	db, failed, _, _ := connect(ctx, r.Reader, &r.cfg, t)
	if db != nil {
		server = db.Server().String()
		out.message = "the operator logs in to " + server + " as the admin account"
		_ = db.Close()
	} else {
		// The target is the cluster admin's: its status says all (the server's address, the admin account,
		// the server's error), which a DatabaseUser's does not.
		out = failed
		out.message, out.detail = failed.logged(), ""
	}
	before := t.DeepCopy()
	now := metav1.NewTime(r.Clock.Now())
	t.Status = computeTargetStatus(t.Status, t.Generation, server, out, now)
	meta.SetStatusCondition(&t.Status.Conditions, adminLoginCondition(t.Spec.TLS.Mode, t.Generation, now))
	if err := r.Report(ctx, before, t); err != nil {
		return ctrl.Result{}, err
	}
	if out.retry {
		return ctrl.Result{}, errors.New(out.reason + ": " + out.message)
	}
	return ctrl.Result{RequeueAfter: r.cfg.ResyncPeriod}, nil
}

// computeTargetStatus is the status one check leads to.
func computeTargetStatus(old mygroupv1alpha1.DatabaseTargetStatus, generation int64, server string, out outcome,
	now metav1.Time) mygroupv1alpha1.DatabaseTargetStatus {
	s := *old.DeepCopy()
	cond := metav1.Condition{Type: mygroupv1alpha1.ConditionReady, Status: metav1.ConditionFalse,
		Reason: out.reason, Message: out.message, ObservedGeneration: generation, LastTransitionTime: now}
	if out.reason == mygroupv1alpha1.ReasonConnected {
		cond.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&s.Conditions, cond)
	v := out.verdict()
	if cond.Status == metav1.ConditionTrue {
		v.State = health.Current
	}
	s.Conditions = health.Set(s.Conditions, generation, v, now)
	s.ObservedGeneration = generation
	s.Server = server
	return s
}

// adminLoginCondition says whether mode protects the admin login (ConditionAdminLoginProtected). Disabled and
// Required verify no server: the operator refuses to send the password itself to it (mysqlaccount's
// authguard.go), but an impostor can still relay the login to the server and then act as the admin account.
func adminLoginCondition(mode mygroupv1alpha1.TLSMode, generation int64, now metav1.Time) metav1.Condition {
	c := metav1.Condition{Type: mygroupv1alpha1.ConditionAdminLoginProtected, Status: metav1.ConditionFalse,
		Reason: mygroupv1alpha1.ReasonUnverifiedTLS, ObservedGeneration: generation, LastTransitionTime: now}
	const unverified = " does not verify the server: whoever is on the network path can pose as it, or relay the " +
		"admin login to it and act as the admin account, which manages every tenant's accounts. Only tls.mode " +
		"VerifyCA or VerifyFull protects the admin login. Meanwhile the operator sends the admin password only as " +
		"a scramble"
	const refuses = ", and refuses a server that asks for it otherwise."
	switch mode {
	case mygroupv1alpha1.TLSDisabled:
		c.Message = "tls.mode Disabled encrypts nothing and" + unverified +
			" (or encrypted to the admin Secret's server-public-key.pem)" + refuses
	case mygroupv1alpha1.TLSRequired:
		c.Message = "tls.mode Required encrypts but" + unverified + refuses
	case mygroupv1alpha1.TLSVerifyCA:
		c.Status, c.Reason = metav1.ConditionTrue, mygroupv1alpha1.ReasonVerifiedTLS
		c.Message = "tls.mode VerifyCA checks the server's certificate against ca.crt before the admin login"
	default: // VerifyFull, the default
		c.Status, c.Reason = metav1.ConditionTrue, mygroupv1alpha1.ReasonVerifiedTLS
		c.Message = "tls.mode VerifyFull checks the server's certificate and name before the admin login"
	}
	return c
}
