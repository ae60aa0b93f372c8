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

// Package conditions names the condition types and reasons that more than one kind reports: MyWeb and
// AppService both run a Deployment and report it the same way. What only one kind reports is in that kind's
// API package.
package conditions

// Condition types of a kind that runs a Deployment (MyWeb, AppService).
const (
	// Available is True when the Deployment has its minimum of ready pods.
	Available = "Available"
	// Progressing is True while a rollout (a new image, page, environment or replica count) is under way.
	Progressing = "Progressing"
	// Degraded is True when the operator cannot bring the children to the spec, or the rollout is stuck.
	Degraded = "Degraded"
)

// Reasons of Available, Progressing and Degraded.
const (
	// ReasonAvailable: Available=True, the Deployment has its minimum of ready pods.
	ReasonAvailable = "MinimumReplicasAvailable"
	// ReasonUnavailable: Available=False, fewer pods are ready than the minimum.
	ReasonUnavailable = "MinimumReplicasUnavailable"
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
