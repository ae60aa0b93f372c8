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

// Package conditions names the condition types and reasons that more than one kind reports: every kind's
// Ready, Reconciling and Stalled (kstatus' conditions), and the conditions of MyWeb and AppService, which both run
// a Deployment and report it the same way. What only one kind reports is in that kind's API package.
package conditions

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Getter is what every kind of operator101 has: its status conditions, as the API server stores them.
type Getter interface {
	GetConditions() []metav1.Condition
}

// Condition types of a kind that runs a Deployment (MyWeb, AppService).
const (
	// Available is True when the Deployment has its minimum of ready pods.
	Available = "Available"
	// Progressing is True while a rollout (a new image, page, environment or replica count) is under way.
	Progressing = "Progressing"
	// Degraded is True when the operator cannot bring the children to the spec, or the rollout is stuck.
	Degraded = "Degraded"
)

// IngressAdmitted is True when an ingress controller admitted the object's Ingress (it wrote an address into the
// Ingress's status); set only while the object asks for an Ingress.
const IngressAdmitted = "IngressAdmitted"

// Reasons of IngressAdmitted.
const (
	// ReasonIngressAdmitted: IngressAdmitted=True, the Ingress has an address.
	ReasonIngressAdmitted = "Admitted"
	// ReasonIngressNotAdmitted: IngressAdmitted=False, no ingress controller gave the Ingress an address: none
	// serves its class (a className the cluster does not have), or none is installed.
	ReasonIngressNotAdmitted = "NotAdmitted"
)

// HTTPRouteAdmitted is True when every Gateway the object's HTTPRoute names in parentRefs accepted it (the
// Gateway's controller wrote Accepted=True for it into the HTTPRoute's status); set only while the object asks
// for an HTTPRoute.
const HTTPRouteAdmitted = "HTTPRouteAdmitted"

// Reasons of HTTPRouteAdmitted.
const (
	// ReasonHTTPRouteAccepted: HTTPRouteAdmitted=True, every parent accepted the HTTPRoute.
	ReasonHTTPRouteAccepted = "Accepted"
	// ReasonHTTPRouteNotAccepted: HTTPRouteAdmitted=False, a parent's controller refused the HTTPRoute; the
	// message carries its reason and message (NotAllowedByListeners, NoMatchingParent, ...).
	ReasonHTTPRouteNotAccepted = "NotAccepted"
	// ReasonHTTPRoutePending: HTTPRouteAdmitted=Unknown, some parent has not answered yet (no Gateway
	// controller serves it, or it has not seen the HTTPRoute's current generation).
	ReasonHTTPRoutePending = "Pending"
	// ReasonHTTPRouteNotServed: HTTPRouteAdmitted=False, the cluster did not serve the Gateway API's HTTPRoute
	// when the operator started, so there is none; everything else is applied.
	ReasonHTTPRouteNotServed = "HTTPRouteNotServed"
)

// Reasons of Available, Progressing and Degraded.
const (
	// ReasonAvailable: Available=True, the Deployment has its minimum of ready pods.
	ReasonAvailable = "MinimumReplicasAvailable"
	// ReasonUnavailable: Available=False, fewer pods are ready than the minimum.
	ReasonUnavailable = "MinimumReplicasUnavailable"
	// ReasonProbeFailing: Available=False (or Progressing=True while older pods still serve), a pod's container
	// runs but does not pass its readiness probe.
	ReasonProbeFailing = "ReadinessProbeFailing"
	// ReasonRollingOut: Progressing=True, pods of an older spec still run.
	ReasonRollingOut = "RollingOut"
	// ReasonRolloutComplete: Progressing=False, every pod runs the current spec.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonDeadlineExceeded: Progressing=False and Degraded=True, the rollout made no progress in time.
	ReasonDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonReplicaFailure: Degraded=True, the Deployment cannot create pods (quota, admission).
	ReasonReplicaFailure = "ReplicaFailure"
	// ReasonNodePortInUse: Degraded=True, the node port belongs to another Service.
	ReasonNodePortInUse = "NodePortInUse"
	// ReasonNodePortOutOfRange: Degraded=True, the node port is outside the cluster's node-port range.
	ReasonNodePortOutOfRange = "NodePortOutOfRange"
	// ReasonNotOwned: Degraded=True, a child's name is taken by an object this resource does not control.
	ReasonNotOwned = "ChildNotOwned"
	// ReasonApplyFailed: Degraded=True, writing a child failed for another reason (the message says which).
	ReasonApplyFailed = "ApplyFailed"
	// ReasonAsExpected: Degraded=False, the children match the spec.
	ReasonAsExpected = "AsExpected"
)

// Condition types every kind reports, as kstatus (sigs.k8s.io/cli-utils/pkg/kstatus) and the tools built on it
// (Flux's health checks, kpt, cli-utils' appliers) read them, beside the kind's own conditions. Exactly one of
// the three is True once the object's status has been written: Ready when the object is as its spec asks,
// Reconciling while the operator is still bringing it there, Stalled when it cannot without a person (a
// failed At, a Degraded MyWeb, a DatabaseUser the target refuses). The True one's reason and message are the
// kind's own condition's (Degraded's, Succeeded's, ...); the two others carry the same.
const (
	// Ready is True when the object is as its spec asks and nothing needs a person (`kubectl wait
	// --for=condition=Ready`). For an At: scheduled (PENDING with a valid schedule, or suspended as asked),
	// RUNNING, or DONE; whether the command succeeded is Succeeded.
	Ready = "Ready"
	// Reconciling is True while the operator works towards the spec and expects to get there by itself: a
	// rollout under way, a database server that does not answer yet (kstatus: InProgress).
	Reconciling = "Reconciling"
	// Stalled is True when the operator cannot bring the object to its spec without a person: a Degraded
	// MyWeb or AppService, a FAILED or MISSED At, a DatabaseUser or DatabaseTarget refused for a reason a retry
	// does not fix (kstatus: Failed).
	Stalled = "Stalled"
)
