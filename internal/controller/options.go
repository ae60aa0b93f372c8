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

package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/internal/metrics"
	"github.com/operator101/operator101/internal/proxyenv"
)

// LeaderElectionID names the Lease through which the manager's replicas elect a leader (in the manager's
// namespace). The leader-election Role (config/rbac/leader_election_role.yaml) grants get and update on this
// Lease alone; test/rbac fails when the two differ.
const LeaderElectionID = "operator101.operator101.io"

// Options is what the manager's configuration gives the controllers. cmd/main.go reads it from the flags and
// the environment, once; nothing below it reads the environment. A zero field takes the default of the package
// that uses it (reconciler.DefaultWorkers, at.DefaultWorkers, databaseuser.DefaultTarget, ...), and only that package
// sets it.
type Options struct {
	// WatchNamespaces are the namespaces the manager watches; nil means all of them. OLM gives them as
	// WATCH_NAMESPACE, from the OperatorGroup's target namespaces.
	WatchNamespaces []string
	// OperatorNamespace is the namespace the manager runs in.
	OperatorNamespace string
	// Workers is the number of workers of each controller but the At controller's.
	Workers int
	// AtWorkers is the number of workers of the At controller.
	AtWorkers int
	// ProxyEnv is the cluster's proxy settings, which every workload the operator runs is given.
	ProxyEnv proxyenv.Env

	// OperatorConditionName names the OperatorCondition OLM made for this installation; empty outside OLM.
	OperatorConditionName string
	// AtDefaultImage runs an At's command when the At names no image.
	AtDefaultImage string

	// DatabaseDefaultTarget is the DatabaseTarget of DatabaseUsers and Databases without a `target` label.
	DatabaseDefaultTarget string
	// DatabaseResyncPeriod is how often each DatabaseUser and Database is checked against its database server.
	DatabaseResyncPeriod time.Duration
	// DatabaseMigratingTargets are the target names the former DATABASE_TARGETS still lists (databaseuser.Config).
	DatabaseMigratingTargets []string
	// Metrics receives what the controllers count; cmd/main.go registers it with controller-runtime's
	// registry. nil: each controller counts into one of its own, registered nowhere.
	Metrics *metrics.Metrics

	// Discovery asks the API server, once (Discover), which optional APIs it serves: the Gateway API's
	// HTTPRoute. cmd/main.go builds it from the manager's rest.Config. nil: none is served.
	Discovery discovery.ServerResourcesInterface
	// Routes is Discover's answer, which AddToScheme, CacheOptions and SetupWithManager read: a kind the cluster
	// did not serve then is neither registered, cached nor watched, and /readyz does not wait for it. A CRD
	// installed later is picked up when the operator restarts.
	Routes route.Served
}

// Discover fills o.Routes from o.Discovery: call it once, before AddToScheme and CacheOptions.
func Discover(o Options) (Options, error) {
	served, err := route.Discover(o.Discovery)
	if err != nil {
		return o, err
	}
	o.Routes = served
	return o, nil
}

// AddToScheme registers in s the optional APIs o.Routes says the cluster serves.
func AddToScheme(s *runtime.Scheme, o Options) error {
	if o.Routes.HTTPRoute {
		return gatewayv1.Install(s)
	}
	return nil
}
