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

package appservice_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appv1 "github.com/operator101/operator101/api/app/v1"
	batchv1alpha1 "github.com/operator101/operator101/api/batch/v1alpha1"
	"github.com/operator101/operator101/api/conditions"
	"github.com/operator101/operator101/internal/controller/appservice"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/proxyenv"
	"github.com/operator101/operator101/test/testenv"
)

func newApp(ns, name string, nodePort int32) *appv1.AppService {
	return &appv1.AppService{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appv1.AppServiceSpec{Size: ptr.To[int32](2), Application: appv1.Application{Image: "nginx:1.27",
			Ports: []appv1.ServicePort{{Port: 80, TargetPort: ptr.To[int32](8080), NodePort: nodePort}}}},
	}
}

func getDeployment(g gomega.Gomega, key types.NamespacedName) *appsv1.Deployment {
	d := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, key, d)).To(gomega.Succeed())
	return d
}

func getService(g gomega.Gomega, key types.NamespacedName) *corev1.Service {
	s := &corev1.Service{}
	g.Expect(env.Client.Get(ctx, key, s)).To(gomega.Succeed())
	return s
}

// expectFollows checks that the children carry a's spec and that the status describes this generation.
func expectFollows(g gomega.Gomega, a *appv1.AppService) {
	g.Expect(a.Status.ObservedGeneration).To(gomega.Equal(a.Generation))
	d := getDeployment(g, client.ObjectKeyFromObject(a))
	g.Expect(d.Spec.Replicas).To(gomega.HaveValue(gomega.Equal(*a.Spec.Size)))
	c := d.Spec.Template.Spec.Containers[0]
	g.Expect(c.Image).To(gomega.Equal(a.Spec.Image))
	g.Expect(a.Spec.AutomountServiceAccountToken).NotTo(gomega.BeNil(), "the schema defaults it")
	g.Expect(d.Spec.Template.Spec.AutomountServiceAccountToken).To(gomega.Equal(a.Spec.AutomountServiceAccountToken))
	for _, e := range a.Spec.Envs {
		g.Expect(c.Env).To(gomega.ContainElement(corev1.EnvVar{Name: e.Name, Value: e.Value, ValueFrom: e.ValueFrom}))
	}
	g.Expect(c.Resources.Limits).To(gomega.Equal(a.Spec.Resources.Limits))
	g.Expect(c.Resources.Requests).To(gomega.Equal(a.Spec.Resources.Requests))
	svc := &corev1.Service{}
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(a), svc)
	if len(a.Spec.Ports) == 0 {
		g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "no ports, no Service: %v", err)
		return
	}
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(svc.Spec.Type).To(gomega.Equal(appservice.ServiceType(a)))
	g.Expect(svc.Spec.Ports).To(gomega.HaveLen(len(a.Spec.Ports)))
	for i, p := range a.Spec.Ports {
		target := p.Port
		if p.TargetPort != nil {
			target = *p.TargetPort
		}
		got := svc.Spec.Ports[i]
		g.Expect(got.Port).To(gomega.Equal(p.Port))
		g.Expect(got.TargetPort).To(gomega.Equal(intstr.FromInt32(target)))
		g.Expect(string(got.Protocol)).To(gomega.Equal(string(p.Protocol)))
		switch {
		case svc.Spec.Type == corev1.ServiceTypeClusterIP:
			g.Expect(got.NodePort).To(gomega.BeZero())
		case p.NodePort != 0:
			g.Expect(got.NodePort).To(gomega.Equal(p.NodePort))
		default:
			g.Expect(got.NodePort).NotTo(gomega.BeZero(), "the cluster chooses a node port")
		}
		g.Expect(c.Ports).To(gomega.ContainElement(gomega.HaveField("ContainerPort", target)))
	}
}

// TestAppServiceCreateAndUpdate: the Deployment and the Service appear, owned by the AppService (so that
// garbage collection deletes them with it), pass on the operator's proxy settings and follow every spec field.
func TestAppServiceCreateAndUpdate(t *testing.T) {
	// The cluster's proxy, as cmd/main.go reads it from OLM's environment (operator-lib's two spellings).
	app().StartWith(t, nil, reconciler.Options{ProxyEnv: proxyenv.New([]corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy.example:3128"}, {Name: "https_proxy", Value: "http://proxy.example:3128"}})})
	ns := env.NewNamespace(t, "appservice")
	a := newApp(ns, "shop", 30210)
	a.Spec.Envs = []appv1.EnvVar{{Name: "MODE", Value: "prod"}}
	key := testenv.Create(t, env.Client, a)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		a = getApp(g, key)
		expectFollows(g, a)
		g.Expect(a.Status.Selector).To(gomega.Equal(appservice.Selector("shop")))
		g.Expect(a.Status.Ready).To(gomega.Equal("0/2"))
		g.Expect(meta.IsStatusConditionFalse(a.Status.Conditions, conditions.Available)).To(gomega.BeTrue())
		g.Expect(meta.IsStatusConditionTrue(a.Status.Conditions, conditions.Progressing)).To(gomega.BeTrue())
		g.Expect(meta.IsStatusConditionFalse(a.Status.Conditions, conditions.Degraded)).To(gomega.BeTrue())
	})
	g := gomega.NewWithT(t)
	dep, svc := getDeployment(g, key), getService(g, key)
	testenv.ExpectControlledBy(t, a, "AppService", "app.example.com/v1", dep, svc)
	g.Expect(dep.Spec.Template.Spec.Containers[0].Env).To(gomega.ContainElements(
		corev1.EnvVar{Name: "HTTPS_PROXY", Value: "http://proxy.example:3128"},
		corev1.EnvVar{Name: "https_proxy", Value: "http://proxy.example:3128"}), "the operator's proxy settings are passed on")

	updates := []struct {
		field string
		f     func(*appv1.AppService)
	}{
		{"image", func(a *appv1.AppService) { a.Spec.Image = "nginx:1.27-alpine" }},
		{"size", func(a *appv1.AppService) { a.Spec.Size = ptr.To[int32](5) }},
		{"envs", func(a *appv1.AppService) {
			a.Spec.Envs = []appv1.EnvVar{{Name: "MODE", Value: "debug"},
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}
		}},
		{"resources", func(a *appv1.AppService) {
			a.Spec.Resources = corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
		}},
		{"ports", func(a *appv1.AppService) {
			a.Spec.Ports = []appv1.ServicePort{{Name: "http", Port: 80, NodePort: 30211}, {Name: "dns", Port: 53, Protocol: "UDP"}}
		}},
		{"ports removed", func(a *appv1.AppService) { a.Spec.Ports = nil }},
		{"ports back", func(a *appv1.AppService) { a.Spec.Ports = []appv1.ServicePort{{Port: 8080, NodePort: 30212}} }},
		{"automountServiceAccountToken", func(a *appv1.AppService) { a.Spec.AutomountServiceAccountToken = ptr.To(true) }},
	}
	for _, u := range updates {
		t.Run(u.field, func(t *testing.T) {
			patchApp(t, key, u.f)
			testenv.Eventually(t, timeout, func(g gomega.Gomega) { expectFollows(g, getApp(g, key)) })
		})
	}
}

// TestAppServiceDriftReverted: a Deployment scaled by hand and a deleted Service come back.
func TestAppServiceDriftReverted(t *testing.T) {
	app().Start(t, nil)
	ns := env.NewNamespace(t, "appservice")
	key := testenv.Create(t, env.Client, newApp(ns, "drift", 30220))
	var dep *appsv1.Deployment
	var svc *corev1.Service
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { dep, svc = getDeployment(g, key), getService(g, key) })

	scaled := dep.DeepCopy()
	scaled.Spec.Replicas = ptr.To[int32](7)
	scaled.Spec.Template.Spec.Containers[0].Image = "evil:latest"
	if err := env.Client.Patch(ctx, scaled, client.MergeFrom(dep), client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, svc); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectFollows(g, getApp(g, key))
		g.Expect(getService(g, key).UID).NotTo(gomega.Equal(svc.UID), "the Service is a new one")
	})
}

// TestAppServiceZeroWritesAtRest counts the API writes of the controller: a few at creation, none once
// converged, whatever triggers a reconcile (a label on the AppService, a restart of the operator).
func TestAppServiceZeroWritesAtRest(t *testing.T) {
	cfg, counter := testenv.Counting(env.Config)
	mgr, rec := app().Start(t, cfg)
	ns := env.NewNamespace(t, "appservice")
	key := testenv.Create(t, env.Client, newApp(ns, "quiet", 30230))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { expectFollows(g, getApp(g, key)) })
	// The children's watch events reconcile the AppService a few more times: wait until one wrote nothing.
	waitQuiet(t, rec, key, counter)
	t.Logf("writes at creation of one AppService: %d (%s)", counter.Total(), counter)
	t.Logf("uncached lookups at creation: %v", counter.Gets())
	// Its 2 pods get a PodDisruptionBudget: 3 children and a status, and one write to spare, as before the budget.
	if n := counter.Total(); n > 5 {
		t.Errorf("%d writes to create one AppService (3 children and a status), want at most 5: %s", n, counter)
	}

	// The pods become ready: one status write.
	counter.Reset()
	testenv.MarkDeploymentAvailable(t, env.Client, key)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		g.Expect(meta.IsStatusConditionTrue(getApp(g, key).Status.Conditions, conditions.Available)).To(gomega.BeTrue())
	})
	waitQuiet(t, rec, key, counter)
	t.Logf("writes when the Deployment becomes available: %d (%s)", counter.Total(), counter)
	if w := counter.Writes(false); counter.Total() != 1 || w["PATCH appservices/status"] != 1 {
		t.Errorf("writes when the Deployment became available: %s, want 1 status patch", counter)
	}

	app().ExpectNoWritesAtRest(t, mgr, rec, cfg, counter, key, timeout)
	t.Logf("writes at rest (a label, a restart): %d", counter.Total())
}

// TestAppServiceScaleSubresource: the scale subresource reads and writes spec.size, reports the Deployment's
// replicas and the pods' selector, as `kubectl scale appservice NAME --replicas=N` and an autoscaler need.
func TestAppServiceScaleSubresource(t *testing.T) {
	app().Start(t, nil)
	ns := env.NewNamespace(t, "appservice")
	a := newApp(ns, "scaled", 30240)
	a.Spec.Size = ptr.To[int32](1)
	key := testenv.Create(t, env.Client, a)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { expectFollows(g, getApp(g, key)) })

	scale := &autoscalingv1.Scale{}
	if err := env.Client.SubResource("scale").Patch(ctx, a, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":4}}`)),
		client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("patching /scale: %v", err)
	}
	if scale.Spec.Replicas != 4 {
		t.Errorf("/scale answered spec.replicas %d, want 4", scale.Spec.Replicas)
	}
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		a := getApp(g, key)
		g.Expect(a.Spec.Size).To(gomega.HaveValue(gomega.Equal(int32(4))))
		expectFollows(g, a)
	})
	testenv.MarkDeploymentAvailable(t, env.Client, key)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		s := &autoscalingv1.Scale{}
		g.Expect(env.Client.SubResource("scale").Get(ctx, getApp(g, key), s)).To(gomega.Succeed())
		g.Expect(s.Spec.Replicas).To(gomega.Equal(int32(4)))
		g.Expect(s.Status.Replicas).To(gomega.Equal(int32(4)))
		g.Expect(s.Status.Selector).To(gomega.Equal(appservice.Selector("scaled")))
		g.Expect(getApp(g, key).Status.Ready).To(gomega.Equal("4/4"))
	})
}

// TestAppServiceInvalidRejected: the schema refuses what cannot work, with a message that names the field.
func TestAppServiceInvalidRejected(t *testing.T) {
	ns := env.NewNamespace(t, "appservice")
	port := func(p appv1.ServicePort) func(*appv1.AppService) {
		return func(a *appv1.AppService) { a.Spec.Ports = []appv1.ServicePort{p} }
	}
	tests := []struct {
		name   string
		mutate func(*appv1.AppService)
		want   string
	}{
		{"negative size", func(a *appv1.AppService) { a.Spec.Size = ptr.To[int32](-1) }, "spec.size"},
		{"size too large", func(a *appv1.AppService) { a.Spec.Size = ptr.To[int32](101) }, "spec.size"},
		{"empty image", func(a *appv1.AppService) { a.Spec.Image = "" }, "spec.image"},
		{"port 0", port(appv1.ServicePort{Port: 0}), "spec.ports[0].port"},
		{"port above 65535", port(appv1.ServicePort{Port: 70000}), "spec.ports[0].port"},
		{"target port above 65535", port(appv1.ServicePort{Port: 80, TargetPort: ptr.To[int32](65536)}), "spec.ports[0].targetPort"},
		{"unknown protocol", port(appv1.ServicePort{Port: 80, Protocol: "HTTP"}), `spec.ports[0].protocol: Unsupported value: "HTTP"`},
		{"node port above 65535", port(appv1.ServicePort{Port: 80, NodePort: 65536}), "spec.ports[0].nodePort"},
		{"node port on a ClusterIP Service", func(a *appv1.AppService) { a.Spec.ServiceType = appv1.ServiceTypeClusterIP },
			"a port's nodePort needs serviceType NodePort or LoadBalancer"},
		{"unknown service type", func(a *appv1.AppService) { a.Spec.ServiceType = "ExternalName" }, "spec.serviceType"},
		{"ingress without a TCP port", func(a *appv1.AppService) {
			a.Spec.Ports = []appv1.ServicePort{{Port: 53, Protocol: "UDP"}}
			a.Spec.Ingress = &appv1.Ingress{Host: "shop.example"}
		}, "ingress needs a TCP port to route to"},
		{"ingress host not a DNS name", func(a *appv1.AppService) { a.Spec.Ingress = &appv1.Ingress{Host: "Shop_Example"} }, "spec.ingress.host"},
		{"httpRoute without a TCP port", func(a *appv1.AppService) {
			a.Spec.Ports = []appv1.ServicePort{{Port: 53, Protocol: "UDP"}}
			a.Spec.HTTPRoute = &appv1.HTTPRoute{ParentRefs: []appv1.ParentReference{{Name: "public"}}}
		}, "httpRoute needs a TCP port to route to"},
		{"httpRoute without a parent", func(a *appv1.AppService) { a.Spec.HTTPRoute = &appv1.HTTPRoute{} }, "spec.httpRoute.parentRefs"},
		{"unnamed ports", func(a *appv1.AppService) {
			a.Spec.Ports = []appv1.ServicePort{{Port: 80}, {Port: 81}}
		}, "every port needs a name when there is more than one"},
		{"shared node port", func(a *appv1.AppService) {
			a.Spec.Ports = []appv1.ServicePort{{Name: "a", Port: 80, NodePort: 30300}, {Name: "b", Port: 81, NodePort: 30300}}
		}, "two ports cannot share a nodePort"},
		{"env name with a space", func(a *appv1.AppService) { a.Spec.Envs = []appv1.EnvVar{{Name: "MY VAR", Value: "x"}} }, "spec.envs[0].name"},
		{"env name starting with a digit", func(a *appv1.AppService) { a.Spec.Envs = []appv1.EnvVar{{Name: "1VAR", Value: "x"}} }, "spec.envs[0].name"},
		{"env twice", func(a *appv1.AppService) {
			a.Spec.Envs = []appv1.EnvVar{{Name: "A", Value: "x"}, {Name: "A", Value: "y"}}
		}, "Duplicate value"},
		{"resource claims", func(a *appv1.AppService) {
			a.Spec.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
		}, "resource claims are not supported"},
		{"name not a DNS label", func(a *appv1.AppService) { a.Name = "9.app" }, "metadata.name must be a DNS label"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newApp(ns, "bad", 30250)
			tc.mutate(a)
			testenv.ExpectInvalid(t, env.Client, a, tc.want)
		})
	}
}

// TestAppServiceServiceType: the Service has node ports only where the AppService asks for them, and follows
// every change of type; a converged AppService whose node port the cluster chose costs no write.
func TestAppServiceServiceType(t *testing.T) {
	cfg, counter := testenv.Counting(env.Config)
	mgr, rec := app().Start(t, cfg)
	ns := env.NewNamespace(t, "appservice")
	a := newApp(ns, "types", 0)
	key := testenv.Create(t, env.Client, a)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectFollows(g, getApp(g, key))
		g.Expect(getService(g, key).Spec.Type).To(gomega.Equal(corev1.ServiceTypeClusterIP), "no node port unless asked")
	})

	patchApp(t, key, func(a *appv1.AppService) { a.Spec.ServiceType = appv1.ServiceTypeNodePort })
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectFollows(g, getApp(g, key))
		g.Expect(getService(g, key).Spec.Type).To(gomega.Equal(corev1.ServiceTypeNodePort))
	})
	waitQuiet(t, rec, key, counter)
	app().ExpectNoWritesAtRest(t, mgr, rec, cfg, counter, key, timeout)

	patchApp(t, key, func(a *appv1.AppService) {
		a.Spec.ServiceType = appv1.ServiceTypeLoadBalancer
		a.Spec.Ports[0].NodePort = 30261
	})
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectFollows(g, getApp(g, key))
		g.Expect(getService(g, key).Spec.Type).To(gomega.Equal(corev1.ServiceTypeLoadBalancer))
	})

	patchApp(t, key, func(a *appv1.AppService) { a.Spec.ServiceType = ""; a.Spec.Ports[0].NodePort = 0 })
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectFollows(g, getApp(g, key))
		svc := getService(g, key)
		g.Expect(svc.Spec.Type).To(gomega.Equal(corev1.ServiceTypeClusterIP))
		g.Expect(svc.Spec.Ports[0].NodePort).To(gomega.BeZero(), "the node port is given back")
	})
}

// TestAppServiceHealthAndRollout: the pods get a TCP readiness and liveness check of the first TCP port, the
// AppService's own probe replaces it, and the rollout strategy goes to Recreate and back.
func TestAppServiceHealthAndRollout(t *testing.T) {
	app().Start(t, nil)
	ns := env.NewNamespace(t, "appservice")
	key := testenv.Create(t, env.Client, newApp(ns, "healthy", 0))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectFollows(g, getApp(g, key))
		c := getDeployment(g, key).Spec.Template.Spec.Containers[0]
		g.Expect(c.ReadinessProbe).NotTo(gomega.BeNil())
		g.Expect(c.ReadinessProbe.TCPSocket).NotTo(gomega.BeNil())
		g.Expect(c.ReadinessProbe.TCPSocket.Port).To(gomega.Equal(intstr.FromInt32(8080)), "the first port's targetPort")
		g.Expect(c.LivenessProbe).NotTo(gomega.BeNil())
	})

	own := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}}
	patchApp(t, key, func(a *appv1.AppService) {
		a.Spec.ReadinessProbe = own
		a.Spec.Strategy = &appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	})
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectFollows(g, getApp(g, key))
		d := getDeployment(g, key)
		g.Expect(d.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet).NotTo(gomega.BeNil())
		g.Expect(d.Spec.Template.Spec.Containers[0].ReadinessProbe.TCPSocket).To(gomega.BeNil())
		g.Expect(d.Spec.Strategy.Type).To(gomega.Equal(appsv1.RecreateDeploymentStrategyType))
		g.Expect(meta.IsStatusConditionFalse(getApp(g, key).Status.Conditions, conditions.Degraded)).To(gomega.BeTrue())
	})
	patchApp(t, key, func(a *appv1.AppService) { a.Spec.Strategy = nil })
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectFollows(g, getApp(g, key))
		g.Expect(getDeployment(g, key).Spec.Strategy.Type).To(gomega.Equal(appsv1.RollingUpdateDeploymentStrategyType))
	})
}

// TestAppServiceSample: the sample applies unchanged (in a namespace, as `kubectl apply -n` does) and
// converges.
func TestAppServiceSample(t *testing.T) {
	app().Start(t, nil)
	key := app().CreateSample(t, "app_v1_appservice.yaml", "appservice")
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		a := getApp(g, key)
		expectFollows(g, a)
		svc := getService(g, key) // the node port is the cluster's choice
		g.Expect(svc.Spec.Type).To(gomega.Equal(corev1.ServiceTypeNodePort))
		g.Expect(svc.Spec.Ports[0].NodePort).NotTo(gomega.BeZero())
		g.Expect(getDeployment(g, key).Spec.Template.Spec.Containers[0].Image).To(gomega.Equal("nginx:1.27"))
	})
	testenv.MarkDeploymentAvailable(t, env.Client, key)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		a := getApp(g, key)
		g.Expect(meta.IsStatusConditionTrue(a.Status.Conditions, conditions.Available)).To(gomega.BeTrue())
		g.Expect(meta.IsStatusConditionFalse(a.Status.Conditions, conditions.Progressing)).To(gomega.BeTrue())
		g.Expect(a.Status.Ready).To(gomega.Equal("2/2"))
		g.Expect(events(g, key.Namespace, key.Name)).To(gomega.ContainElement("Normal MinimumReplicasAvailable"))
	})
}

// TestAppServiceRolloutStuck: an image that never pulls shows, through the Deployment's conditions, as
// Degraded with the Deployment's message and a Warning Event.
func TestAppServiceRolloutStuck(t *testing.T) {
	app().Start(t, nil)
	ns := env.NewNamespace(t, "appservice")
	key := testenv.Create(t, env.Client, newApp(ns, "stuck", 30260))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { getDeployment(g, key) })
	testenv.SetDeploymentStatus(t, env.Client, key, func(s *appsv1.DeploymentStatus, d *appsv1.Deployment) {
		*s = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, UnavailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
					Message: `ReplicaSet "stuck-1" has timed out progressing.`},
			}}
	})
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		testenv.ExpectCondition(g, getApp(g, key).Status.Conditions, conditions.Degraded, metav1.ConditionTrue,
			"ProgressDeadlineExceeded", "timed out progressing")
		g.Expect(events(g, ns, "stuck")).To(gomega.ContainElement("Warning ProgressDeadlineExceeded"))
	})
}

// TestAppServiceNodePortTaken: a node port another Service holds makes the AppService Degraded with the API
// server's message and one Warning Event; the controller retries with backoff (no hot loop) and recovers once
// the port is free.
func TestAppServiceNodePortTaken(t *testing.T) {
	app().ExpectNodePortTaken(t, "appservice", func(ns string) *appv1.AppService { return newApp(ns, "late", 30270) }, 30270,
		func(g gomega.Gomega, key types.NamespacedName) { expectFollows(g, getApp(g, key)) }, timeout)
}

// TestAppServiceNeverAdoptsAnObjectItDidNotCreate: a tenant's own Deployment, Service, PodDisruptionBudget or
// Ingress (no operator101 label, so not in the operator's cache) that has the AppService's name is never
// written, for both AppService APIs: the AppService is Degraded, ChildNotOwned, naming it, with one Warning
// Event; the object gets no owner reference, so it survives the AppService's deletion; and the AppService heals
// by itself once the object is deleted (testenv.TakenName). test/gatewayapi does the same for the HTTPRoute.
func TestAppServiceNeverAdoptsAnObjectItDidNotCreate(t *testing.T) {
	cfg, counter := testenv.Counting(env.Config)
	_, rec := app().StartWith(t, cfg, reconciler.Options{NotOwnedRetry: 200 * time.Millisecond})
	port := int32(30280)
	children := []func() client.ObjectList{
		func() client.ObjectList { return &appsv1.DeploymentList{} },
		func() client.ObjectList { return &corev1.ServiceList{} },
		// newApp wants 2 pods: a budget too.
		func() client.ObjectList { return &policyv1.PodDisruptionBudgetList{} },
	}
	// newOwner is an AppService of api wanting what newApp's does, changed by want.
	newOwner := func(api string, want func(*appv1.Application)) func(ns, name string) client.Object {
		return func(ns, name string) client.Object {
			port++
			a := newApp(ns, name, port)
			if want != nil {
				want(&a.Spec.Application)
			}
			if api == "app.example.com" {
				return a
			}
			return &batchv1alpha1.AppService{ObjectMeta: a.ObjectMeta,
				Spec: batchv1alpha1.AppServiceSpec{Replicas: a.Spec.Size, Application: a.Spec.Application}}
		}
	}
	conditionsOfAPI := map[string]func(g gomega.Gomega, key types.NamespacedName) []metav1.Condition{
		"app.example.com": conditionsOf,
		"batch.schwarzeni.github.com": func(g gomega.Gomega, key types.NamespacedName) []metav1.Condition {
			a := &batchv1alpha1.AppService{}
			g.Expect(env.Client.Get(ctx, key, a)).To(gomega.Succeed())
			return a.Status.Conditions
		},
	}
	for _, api := range []string{"app.example.com", "batch.schwarzeni.github.com"} {
		for _, c := range []struct {
			kind   string
			tenant func(ns, name string) client.Object
			// want makes the AppService want a child it has only when asked for, of kind child.
			want  func(*appv1.Application)
			child func() client.ObjectList
		}{
			{kind: "Deployment", tenant: func(ns, name string) client.Object { return testenv.TenantDeployment(ns, name) }},
			{kind: "Service", tenant: func(ns, name string) client.Object { return testenv.TenantService(ns, name) }},
			{kind: "PodDisruptionBudget", tenant: func(ns, name string) client.Object {
				return testenv.TenantDisruptionBudget(ns, name)
			}},
			{kind: "Ingress", tenant: func(ns, name string) client.Object { return testenv.TenantIngress(ns, name) },
				want:  func(a *appv1.Application) { a.Ingress = &appv1.Ingress{Host: "shop.example"} },
				child: func() client.ObjectList { return &networkingv1.IngressList{} }},
		} {
			t.Run(api+"/"+c.kind, func(t *testing.T) {
				check := testenv.TakenName{
					Client: env.Client, Counter: counter, Reconciles: rec, Children: children,
					NewOwner: newOwner(api, c.want), Conditions: conditionsOfAPI[api],
				}
				if c.child != nil {
					check.Children = append(slices.Clip(children), c.child)
				}
				check.Run(t, c.tenant(env.NewNamespace(t, "appservice"), "shop"), timeout)
			})
		}
	}
}

// TestAppServiceCacheHoldsNoEnvironment: the manager's cache holds an AppService without its environment (up
// to 100 values of 32 KiB) and without the labels and annotations a tenant gave it; a changed value still
// reaches the Deployment, and a converged AppService costs no write and no read past the cache.
func TestAppServiceCacheHoldsNoEnvironment(t *testing.T) {
	cfg, counter := testenv.Counting(env.Config)
	mgr, rec := app().Start(t, cfg)
	ns := env.NewNamespace(t, "appservice")
	a := newApp(ns, "large", 30235)
	for i := range 20 {
		a.Spec.Envs = append(a.Spec.Envs, appv1.EnvVar{Name: fmt.Sprintf("V%d", i), Value: strings.Repeat("v", 32768)})
	}
	a.Annotations = map[string]string{"tenant.example/blob": strings.Repeat("b", 200<<10)}
	key := testenv.Create(t, env.Client, a)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { expectFollows(g, getApp(g, key)) })
	waitQuiet(t, rec, key, counter)

	cached, size := app().Cached(t, mgr, key)
	t.Logf("the cache's copy of an AppService with 640 KiB of environment and 200 KiB of annotations: %d bytes", size)
	if len(cached.Spec.Envs) != 0 || size > 4096 {
		t.Errorf("the cache holds %d bytes of the AppService (%d environment variables), want none and at most 4 KiB",
			size, len(cached.Spec.Envs))
	}

	counter.Reset()
	patchApp(t, key, func(a *appv1.AppService) { a.Spec.Envs[3].Value = "changed" })
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectFollows(g, getApp(g, key))
		env := getDeployment(g, key).Spec.Template.Spec.Containers[0].Env
		g.Expect(env).To(gomega.ContainElement(corev1.EnvVar{Name: "V3", Value: "changed"}))
	})
	if counter.Gets()["GET appservices"] == 0 {
		t.Errorf("the change reached the Deployment without a read of the whole AppService: %v", counter.Gets())
	}

	app().ExpectConvergedCostsNothing(t, rec, key, counter, timeout, "a converged AppService with a large environment")
}

// TestAppServicePodsRefusedByPodSecurity: in a namespace enforcing the restricted Pod Security Standard, the
// pods of an AppService whose image runs as root (no runAsNonRoot) are refused; the Deployment says so
// (ReplicaFailure, with PodSecurity's message, fed here from a real refusal by the API server), and the
// AppService reports it as Degraded=True, ReplicaFailure, with that message, and one Warning Event, however
// often it is reconciled (testenv.ExpectPodsRefusedByPodSecurity).
func TestAppServicePodsRefusedByPodSecurity(t *testing.T) {
	_, rec := app().Start(t, nil)
	testenv.ExpectPodsRefusedByPodSecurity(t, env, rec, timeout, "appservice-restricted", newApp("", "root", 30277), getDeployment, conditionsOf)
}

// TestAppServiceProbeFailing: a pod that runs but never passes its readiness probe keeps the AppService from
// Available, with a reason of its own that names the pod.
func TestAppServiceProbeFailing(t *testing.T) {
	app().ExpectProbeFailureReported(t, "appservice", func(ns string) *appv1.AppService {
		a := newApp(ns, "unready", 0)
		a.Spec.Size = ptr.To[int32](1)
		return a
	}, timeout)
}

// TestAppServiceDisruptionBudget: more than one pod, a PodDisruptionBudget; one, none.
func TestAppServiceDisruptionBudget(t *testing.T) {
	app().ExpectDisruptionBudget(t, "appservice", func(ns string) *appv1.AppService {
		return newApp(ns, "budget", 0)
	}, func(t *testing.T, key types.NamespacedName, n int32) {
		patchApp(t, key, func(a *appv1.AppService) { a.Spec.Size = ptr.To(n) })
	}, timeout)
}

// TestAppServiceIngress: spec.ingress gets an Ingress to the Service's first TCP port over TLS, whose admission
// by an ingress controller the AppService reports; removed from the spec, the Ingress goes.
func TestAppServiceIngress(t *testing.T) {
	app().ExpectIngress(t, "appservice", func(ns string) *appv1.AppService {
		a := newApp(ns, "routed", 0)
		a.Spec.Ports = []appv1.ServicePort{{Name: "dns", Port: 53, Protocol: "UDP"}, {Name: "web", Port: 8000, TargetPort: ptr.To[int32](8080)}}
		a.Spec.Ingress = &appv1.Ingress{Host: "shop.example", ClassName: "web", TLSSecretName: "shop-tls"}
		return a
	}, 8000, func(t *testing.T, key types.NamespacedName) {
		patchApp(t, key, func(a *appv1.AppService) { a.Spec.Ingress = nil })
	}, timeout)
}

// TestAppServiceHTTPRouteNotServed: on an API server without the Gateway API, an AppService that asks for an
// HTTPRoute gets everything else, becomes Available and says HTTPRouteNotServed, at no write at rest.
func TestAppServiceHTTPRouteNotServed(t *testing.T) {
	app().ExpectHTTPRouteNotServed(t, "appservice", func(ns string) *appv1.AppService {
		a := newApp(ns, "unrouted", 0)
		a.Spec.Size = ptr.To[int32](1)
		a.Spec.HTTPRoute = &appv1.HTTPRoute{ParentRefs: []appv1.ParentReference{{Name: "public"}}}
		return a
	}, timeout)
}
