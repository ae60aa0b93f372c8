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

// Package podtemplate holds the parts of a pod template that MyWeb and AppService build the same way from a
// tenant's spec: probes (the defaults and the tenant's own), the Deployment's rollout strategy, and the
// PodDisruptionBudget of its pods.
package podtemplate

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
)

// The timing of the default probes: a readiness check every 5 s (a new pod serves soon after it can), a
// liveness check every 10 s that restarts a container only after 3 failures in a row and not in its first 10 s.
const (
	readinessPeriod = 5
	livenessPeriod  = 10
	livenessDelay   = 10
	failures        = 3
)

// HTTPReadiness is the default readiness probe of a web server: an HTTP GET of path on the container port
// named port.
func HTTPReadiness(path, port string) *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().WithHTTPGet(httpGet(path, port)).
		WithPeriodSeconds(readinessPeriod).WithFailureThreshold(failures)
}

// HTTPLiveness is the default liveness probe of a web server: the same GET as HTTPReadiness, less often.
func HTTPLiveness(path, port string) *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().WithHTTPGet(httpGet(path, port)).
		WithInitialDelaySeconds(livenessDelay).WithPeriodSeconds(livenessPeriod).WithFailureThreshold(failures)
}

func httpGet(path, port string) *corev1ac.HTTPGetActionApplyConfiguration {
	return corev1ac.HTTPGetAction().WithPath(path).WithPort(intstr.FromString(port)).WithScheme(corev1.URISchemeHTTP)
}

// TCPReadiness is the default readiness probe of an application that may not speak HTTP: a TCP connection to
// port.
func TCPReadiness(port int32) *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromInt32(port))).
		WithPeriodSeconds(readinessPeriod).WithFailureThreshold(failures)
}

// TCPLiveness is the default liveness probe of such an application: the same connection, less often.
func TCPLiveness(port int32) *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromInt32(port))).
		WithInitialDelaySeconds(livenessDelay).WithPeriodSeconds(livenessPeriod).WithFailureThreshold(failures)
}

// Probe is the tenant's probe p as an apply configuration; def when p is nil (def may be nil: no probe).
// Fields p leaves at zero are left to the API server's defaults.
func Probe(p *corev1.Probe, def *corev1ac.ProbeApplyConfiguration) *corev1ac.ProbeApplyConfiguration {
	if p == nil {
		return def
	}
	out := corev1ac.Probe()
	h := p.ProbeHandler
	switch {
	case h.Exec != nil:
		out.WithExec(corev1ac.ExecAction().WithCommand(h.Exec.Command...))
	case h.HTTPGet != nil:
		g := corev1ac.HTTPGetAction().WithPort(h.HTTPGet.Port)
		if h.HTTPGet.Path != "" {
			g.WithPath(h.HTTPGet.Path)
		}
		if h.HTTPGet.Host != "" {
			g.WithHost(h.HTTPGet.Host)
		}
		if h.HTTPGet.Scheme != "" {
			g.WithScheme(h.HTTPGet.Scheme)
		}
		for _, hh := range h.HTTPGet.HTTPHeaders {
			g.WithHTTPHeaders(corev1ac.HTTPHeader().WithName(hh.Name).WithValue(hh.Value))
		}
		out.WithHTTPGet(g)
	case h.TCPSocket != nil:
		t := corev1ac.TCPSocketAction().WithPort(h.TCPSocket.Port)
		if h.TCPSocket.Host != "" {
			t.WithHost(h.TCPSocket.Host)
		}
		out.WithTCPSocket(t)
	case h.GRPC != nil:
		g := corev1ac.GRPCAction().WithPort(h.GRPC.Port)
		if h.GRPC.Service != nil {
			g.WithService(*h.GRPC.Service)
		}
		out.WithGRPC(g)
	}
	set := func(v int32, with func(int32) *corev1ac.ProbeApplyConfiguration) {
		if v != 0 {
			with(v)
		}
	}
	set(p.InitialDelaySeconds, out.WithInitialDelaySeconds)
	set(p.TimeoutSeconds, out.WithTimeoutSeconds)
	set(p.PeriodSeconds, out.WithPeriodSeconds)
	set(p.SuccessThreshold, out.WithSuccessThreshold)
	set(p.FailureThreshold, out.WithFailureThreshold)
	if p.TerminationGracePeriodSeconds != nil {
		out.WithTerminationGracePeriodSeconds(*p.TerminationGracePeriodSeconds)
	}
	return out
}

// Strategy is the tenant's rollout strategy s as an apply configuration: RollingUpdate (the default, when s is
// nil or names no type) or Recreate. A RollingUpdate gets both its maxUnavailable and maxSurge, the tenant's or
// the API server's default (25%), so that the operator's field manager owns them: a change to Recreate then
// removes them, as the API server requires, instead of leaving defaults nobody owns behind.
func Strategy(s *appsv1.DeploymentStrategy) *appsv1ac.DeploymentStrategyApplyConfiguration {
	if s != nil && s.Type == appsv1.RecreateDeploymentStrategyType {
		return appsv1ac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType)
	}
	maxUnavailable, maxSurge := intstr.FromString(defaultMaxUnavailable), intstr.FromString(defaultMaxSurge)
	if s != nil && s.RollingUpdate != nil {
		if s.RollingUpdate.MaxUnavailable != nil {
			maxUnavailable = *s.RollingUpdate.MaxUnavailable
		}
		if s.RollingUpdate.MaxSurge != nil {
			maxSurge = *s.RollingUpdate.MaxSurge
		}
	}
	return appsv1ac.DeploymentStrategy().WithType(appsv1.RollingUpdateDeploymentStrategyType).
		WithRollingUpdate(appsv1ac.RollingUpdateDeployment().WithMaxUnavailable(maxUnavailable).WithMaxSurge(maxSurge))
}

// The API server's defaults of a RollingUpdate.
const (
	defaultMaxUnavailable = "25%"
	defaultMaxSurge       = "25%"
)

// Resources is the tenant's resources r as an apply configuration; nil when r has neither limits nor requests.
func Resources(r corev1.ResourceRequirements) *corev1ac.ResourceRequirementsApplyConfiguration {
	if len(r.Limits) == 0 && len(r.Requests) == 0 {
		return nil
	}
	res := corev1ac.ResourceRequirements()
	if len(r.Limits) > 0 {
		res.WithLimits(r.Limits.DeepCopy())
	}
	if len(r.Requests) > 0 {
		res.WithRequests(r.Requests.DeepCopy())
	}
	return res
}

// DisruptionBudget is the PodDisruptionBudget of a Deployment of replicas pods labelled podLabels, named name in
// namespace and controlled by owner: a voluntary disruption (a node drain) evicts one pod at a time, and a pod
// that is not ready may always be evicted, so a broken application does not hold a drain up. nil when replicas
// is 1 or less: a budget cannot keep a single pod serving through a drain, and would only block it.
func DisruptionBudget(name, namespace string, podLabels map[string]string, owner *metav1ac.OwnerReferenceApplyConfiguration,
	replicas int32) *policyv1ac.PodDisruptionBudgetApplyConfiguration {
	if replicas <= 1 {
		return nil
	}
	return policyv1ac.PodDisruptionBudget(name, namespace).
		WithLabels(podLabels).
		WithOwnerReferences(owner).
		WithSpec(policyv1ac.PodDisruptionBudgetSpec().
			WithMaxUnavailable(intstr.FromInt32(1)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(podLabels)).
			WithUnhealthyPodEvictionPolicy(policyv1.AlwaysAllow))
}
