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

package myweb_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/operator101/operator101/api/conditions"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/myweb"
	"github.com/operator101/operator101/internal/controller/reconciler"
	"github.com/operator101/operator101/internal/proxyenv"
	"github.com/operator101/operator101/test/testenv"
)

func newWeb(ns, name string, port int32) *operatorv1.MyWeb {
	return &operatorv1.MyWeb{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       operatorv1.MyWebSpec{Image: "nginx", NodePortNumber: port, PageContentHtml: "<h1>one</h1>"},
	}
}

type children struct {
	cm  corev1.ConfigMap
	dep appsv1.Deployment
	svc corev1.Service
}

func getChildren(g gomega.Gomega, key types.NamespacedName) *children {
	c := &children{}
	g.Expect(env.Client.Get(ctx, key, &c.cm)).To(gomega.Succeed())
	g.Expect(env.Client.Get(ctx, key, &c.dep)).To(gomega.Succeed())
	g.Expect(env.Client.Get(ctx, key, &c.svc)).To(gomega.Succeed())
	return c
}

// conditionsOf reads the conditions of the MyWeb key.
func conditionsOf(g gomega.Gomega, key types.NamespacedName) []metav1.Condition {
	return getWeb(g, key).Status.Conditions
}

func getWeb(g gomega.Gomega, key types.NamespacedName) *operatorv1.MyWeb {
	w := &operatorv1.MyWeb{}
	g.Expect(env.Client.Get(ctx, key, w)).To(gomega.Succeed())
	return w
}

// expectFollows checks that the children carry w's spec.
func expectFollows(g gomega.Gomega, w *operatorv1.MyWeb, c *children) {
	g.Expect(c.cm.Data).To(gomega.HaveKeyWithValue("index.html", w.Spec.PageContentHtml))
	replicas := int32(1)
	if w.Spec.Replicas != nil {
		replicas = *w.Spec.Replicas
	}
	g.Expect(c.dep.Spec.Replicas).To(gomega.HaveValue(gomega.Equal(replicas)))
	pod := c.dep.Spec.Template
	g.Expect(pod.Spec.Containers[0].Image).To(gomega.Equal(w.Spec.Image))
	g.Expect(pod.Annotations).To(gomega.HaveKeyWithValue(myweb.PageHashAnnotation, myweb.PageHash(w.Spec.PageContentHtml)))
	g.Expect(pod.Spec.Containers[0].VolumeMounts[0].MountPath).To(gomega.Equal("/usr/share/nginx/html"))
	g.Expect(pod.Spec.Volumes[0].ConfigMap.Name).To(gomega.Equal(w.Name))
	g.Expect(w.Spec.AutomountServiceAccountToken).NotTo(gomega.BeNil(), "the schema defaults it")
	g.Expect(pod.Spec.AutomountServiceAccountToken).To(gomega.Equal(w.Spec.AutomountServiceAccountToken))
	g.Expect(c.svc.Spec.Type).To(gomega.Equal(myweb.ServiceType(w)))
	g.Expect(c.svc.Spec.Ports).To(gomega.HaveLen(1))
	switch {
	case c.svc.Spec.Type == corev1.ServiceTypeClusterIP:
		g.Expect(c.svc.Spec.Ports[0].NodePort).To(gomega.BeZero())
	case w.Spec.NodePortNumber != 0:
		g.Expect(c.svc.Spec.Ports[0].NodePort).To(gomega.Equal(w.Spec.NodePortNumber))
	default:
		g.Expect(c.svc.Spec.Ports[0].NodePort).NotTo(gomega.BeZero(), "the cluster chooses a node port")
	}
	g.Expect(c.svc.Spec.Ports[0].TargetPort).To(gomega.Equal(intstr.FromString("http")))
}

// expectConverged checks that the children of the MyWeb key carry its spec and that its status describes this
// generation, and returns it.
func expectConverged(g gomega.Gomega, key types.NamespacedName) *operatorv1.MyWeb {
	w := getWeb(g, key)
	expectFollows(g, w, getChildren(g, key))
	g.Expect(w.Status.ObservedGeneration).To(gomega.Equal(w.Generation))
	return w
}

// TestMyWebCreateAndUpdate: the children appear, owned by the MyWeb, and follow every spec field.
func TestMyWebCreateAndUpdate(t *testing.T) {
	// The cluster's proxy, as cmd/main.go reads it from OLM's environment (operator-lib's two spellings).
	web().StartWith(t, nil, reconciler.Options{ProxyEnv: proxyenv.New([]corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy.example:3128"}, {Name: "http_proxy", Value: "http://proxy.example:3128"}})})
	ns := env.NewNamespace(t, "web")
	w := newWeb(ns, "site", 30110)
	key := testenv.Create(t, env.Client, w)
	var c *children
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w = getWeb(g, key)
		g.Expect(w.Spec.Replicas).To(gomega.HaveValue(gomega.Equal(int32(1))), "replicas defaults to 1")
		c = getChildren(g, key)
		expectFollows(g, w, c)
		g.Expect(w.Status.ObservedGeneration).To(gomega.Equal(w.Generation))
		g.Expect(w.Status.URL).To(gomega.Equal("http://NODE:30110/"))
		g.Expect(w.Status.Ready).To(gomega.Equal("0/1"))
		g.Expect(meta.IsStatusConditionFalse(w.Status.Conditions, conditions.Available)).To(gomega.BeTrue())
		g.Expect(meta.IsStatusConditionTrue(w.Status.Conditions, conditions.Progressing)).To(gomega.BeTrue())
		g.Expect(meta.IsStatusConditionFalse(w.Status.Conditions, conditions.Degraded)).To(gomega.BeTrue())
	})
	testenv.ExpectControlledBy(t, w, "MyWeb", "operator.k8s-summit.org/v1", &c.cm, &c.dep, &c.svc)
	env := c.dep.Spec.Template.Spec.Containers[0].Env
	if !containsEnv(env, "HTTP_PROXY", "http://proxy.example:3128") || !containsEnv(env, "http_proxy", "http://proxy.example:3128") {
		t.Errorf("the operator's proxy settings are not passed on: %v", env)
	}

	updates := map[string]func(*operatorv1.MyWeb){
		"image":           func(w *operatorv1.MyWeb) { w.Spec.Image = "nginx:1.27-alpine" },
		"nodePortNumber":  func(w *operatorv1.MyWeb) { w.Spec.NodePortNumber = 30111 },
		"pageContentHtml": func(w *operatorv1.MyWeb) { w.Spec.PageContentHtml = "<h1>two</h1>" },
		"replicas":        func(w *operatorv1.MyWeb) { w.Spec.Replicas = ptr.To[int32](3) },
		"automountServiceAccountToken": func(w *operatorv1.MyWeb) {
			w.Spec.AutomountServiceAccountToken = ptr.To(true)
		},
	}
	for _, field := range []string{"image", "nodePortNumber", "pageContentHtml", "replicas", "automountServiceAccountToken"} {
		t.Run(field, func(t *testing.T) {
			patchWeb(t, key, updates[field])
			testenv.Eventually(t, timeout, func(g gomega.Gomega) { expectConverged(g, key) })
		})
	}
}

func containsEnv(env []corev1.EnvVar, name, value string) bool {
	for _, e := range env {
		if e.Name == name && e.Value == value {
			return true
		}
	}
	return false
}

func patchWeb(t *testing.T, key types.NamespacedName, f func(*operatorv1.MyWeb)) {
	t.Helper()
	testenv.Patch(t, env.Client, key, &operatorv1.MyWeb{}, f)
}

// TestMyWebDriftReverted: a Deployment scaled by hand, a page edited by hand and a deleted Service come back.
func TestMyWebDriftReverted(t *testing.T) {
	web().Start(t, nil)
	ns := env.NewNamespace(t, "web")
	w := newWeb(ns, "drift", 30120)
	key := testenv.Create(t, env.Client, w)
	var c *children
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { c = getChildren(g, key) })

	scaled := c.dep.DeepCopy()
	scaled.Spec.Replicas = ptr.To[int32](5)
	if err := env.Client.Patch(ctx, scaled, client.MergeFrom(&c.dep), client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	edited := c.cm.DeepCopy()
	edited.Data["index.html"] = "defaced"
	if err := env.Client.Patch(ctx, edited, client.MergeFrom(&c.cm), client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, &c.svc); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		now := getChildren(g, key)
		expectFollows(g, getWeb(g, key), now)
		g.Expect(now.svc.UID).NotTo(gomega.Equal(c.svc.UID), "the Service is a new one")
	})
}

// TestMyWebZeroWritesAtRest counts the API writes of the controller: a few at creation, none once converged,
// whatever triggers a reconcile (a label on the MyWeb, a restart of the operator).
func TestMyWebZeroWritesAtRest(t *testing.T) {
	cfg, counter := testenv.Counting(env.Config)
	mgr, rec := web().Start(t, cfg)
	ns := env.NewNamespace(t, "web")
	w := newWeb(ns, "quiet", 30130)
	key := testenv.Create(t, env.Client, w)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { expectConverged(g, key) })
	// The children's watch events reconcile the MyWeb a few more times: wait until one reconcile wrote nothing.
	waitQuiet(t, rec, key, counter)
	t.Logf("writes at creation of one MyWeb: %d (%s)", counter.Total(), counter)
	t.Logf("uncached lookups at creation: %v", counter.Gets())
	if n := counter.Total(); n > 6 {
		t.Errorf("%d writes to create one MyWeb (3 children and a status), want at most 6: %s", n, counter)
	}

	web().ExpectNoWritesAtRest(t, mgr, rec, cfg, counter, key, timeout)
}

// waitQuiet waits until the writes have stopped: the counter does not move across a reconcile of key (poked
// through an annotation).
func waitQuiet(t *testing.T, rec *testenv.Reconciles, key types.NamespacedName, counter *testenv.Counter) {
	t.Helper()
	web().WaitQuiet(t, rec, key, counter, timeout)
}

// TestMyWebInvalidRejected: the schema refuses what cannot work, with a message that names the field.
func TestMyWebInvalidRejected(t *testing.T) {
	ns := env.NewNamespace(t, "web")
	tests := []struct {
		name   string
		mutate func(*operatorv1.MyWeb)
		want   string
	}{
		{"node port negative", func(w *operatorv1.MyWeb) { w.Spec.NodePortNumber = -1 }, "spec.nodePortNumber"},
		{"node port on a ClusterIP Service", func(w *operatorv1.MyWeb) { w.Spec.ServiceType = operatorv1.ServiceTypeClusterIP },
			"nodePortNumber needs serviceType NodePort or LoadBalancer"},
		{"unknown service type", func(w *operatorv1.MyWeb) { w.Spec.ServiceType = "ExternalName" }, "spec.serviceType"},
		{"node port above 65535", func(w *operatorv1.MyWeb) { w.Spec.NodePortNumber = 65536 }, "spec.nodePortNumber"},
		{"empty image", func(w *operatorv1.MyWeb) { w.Spec.Image = "" }, "spec.image"},
		{"negative replicas", func(w *operatorv1.MyWeb) { w.Spec.Replicas = ptr.To[int32](-1) }, "spec.replicas"},
		{"too many replicas", func(w *operatorv1.MyWeb) { w.Spec.Replicas = ptr.To[int32](101) }, "spec.replicas"},
		{"name not a DNS label", func(w *operatorv1.MyWeb) { w.Name = "9.site" }, "metadata.name must be a DNS label"},
		{"httpRoute without a parent", func(w *operatorv1.MyWeb) { w.Spec.HTTPRoute = &operatorv1.HTTPRoute{} }, "spec.httpRoute.parentRefs"},
		{"httpRoute host name not a DNS name", func(w *operatorv1.MyWeb) {
			w.Spec.HTTPRoute = &operatorv1.HTTPRoute{ParentRefs: []operatorv1.ParentReference{{Name: "public"}}, Hostnames: []string{"Shop_Example"}}
		}, "spec.httpRoute.hostnames[0]"},
		{"httpRoute parent's namespace not a DNS label", func(w *operatorv1.MyWeb) {
			w.Spec.HTTPRoute = &operatorv1.HTTPRoute{ParentRefs: []operatorv1.ParentReference{{Name: "public", Namespace: "In.fra"}}}
		}, "spec.httpRoute.parentRefs[0].namespace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWeb(ns, "bad", 30140)
			tc.mutate(w)
			testenv.ExpectInvalid(t, env.Client, w, tc.want)
		})
	}
}

// TestMyWebServiceType: the Service has a node port only where the MyWeb asks for one, follows every change of
// type, and the URL says where the page is served; a converged MyWeb whose node port the cluster chose costs
// no write.
func TestMyWebServiceType(t *testing.T) {
	cfg, counter := testenv.Counting(env.Config)
	mgr, rec := web().Start(t, cfg)
	ns := env.NewNamespace(t, "web")
	w := newWeb(ns, "types", 0)
	key := testenv.Create(t, env.Client, w)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w := expectConverged(g, key)
		g.Expect(getChildren(g, key).svc.Spec.Type).To(gomega.Equal(corev1.ServiceTypeClusterIP), "no node port unless asked")
		g.Expect(w.Status.URL).To(gomega.Equal("http://types." + ns + ".svc/"))
	})

	patchWeb(t, key, func(w *operatorv1.MyWeb) { w.Spec.ServiceType = operatorv1.ServiceTypeNodePort })
	var chosen int32
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w := expectConverged(g, key)
		svc := getChildren(g, key).svc
		g.Expect(svc.Spec.Type).To(gomega.Equal(corev1.ServiceTypeNodePort))
		chosen = svc.Spec.Ports[0].NodePort
		g.Expect(w.Status.URL).To(gomega.Equal(fmt.Sprintf("http://NODE:%d/", chosen)))
	})
	waitQuiet(t, rec, key, counter)
	web().ExpectNoWritesAtRest(t, mgr, rec, cfg, counter, key, timeout)

	patchWeb(t, key, func(w *operatorv1.MyWeb) {
		w.Spec.ServiceType = operatorv1.ServiceTypeLoadBalancer
		w.Spec.NodePortNumber = 30151
	})
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w := expectConverged(g, key)
		g.Expect(getChildren(g, key).svc.Spec.Type).To(gomega.Equal(corev1.ServiceTypeLoadBalancer))
		g.Expect(w.Status.URL).To(gomega.Equal("http://NODE:30151/"), "no load balancer address yet")
	})

	patchWeb(t, key, func(w *operatorv1.MyWeb) { w.Spec.ServiceType = ""; w.Spec.NodePortNumber = 0 })
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w := expectConverged(g, key)
		svc := getChildren(g, key).svc
		g.Expect(svc.Spec.Type).To(gomega.Equal(corev1.ServiceTypeClusterIP))
		g.Expect(svc.Spec.Ports[0].NodePort).To(gomega.BeZero(), "the node port is given back")
		g.Expect(w.Status.URL).To(gomega.Equal("http://types." + ns + ".svc/"))
	})
}

// TestMyWebScaleSubresource: the scale subresource reads and writes spec.replicas, reports the Deployment's
// replicas and the pods' selector, as `kubectl scale web NAME --replicas=N` and an autoscaler need.
func TestMyWebScaleSubresource(t *testing.T) {
	web().Start(t, nil)
	ns := env.NewNamespace(t, "web")
	w := newWeb(ns, "scaled", 0)
	key := testenv.Create(t, env.Client, w)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { expectConverged(g, key) })

	scale := &autoscalingv1.Scale{}
	if err := env.Client.SubResource("scale").Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`)),
		client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("patching /scale: %v", err)
	}
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w := expectConverged(g, key)
		g.Expect(w.Spec.Replicas).To(gomega.HaveValue(gomega.Equal(int32(3))))
	})
	testenv.MarkDeploymentAvailable(t, env.Client, key)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		s := &autoscalingv1.Scale{}
		g.Expect(env.Client.SubResource("scale").Get(ctx, getWeb(g, key), s)).To(gomega.Succeed())
		g.Expect(s.Spec.Replicas).To(gomega.Equal(int32(3)))
		g.Expect(s.Status.Replicas).To(gomega.Equal(int32(3)))
		g.Expect(s.Status.Selector).To(gomega.Equal(labels.SelectorFromSet(myweb.PodLabels("scaled")).String()))
		pods, err := labels.Parse(s.Status.Selector)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(pods.Matches(labels.Set(getChildren(g, key).dep.Spec.Template.Labels))).To(gomega.BeTrue())
	})
}

// TestMyWebHealthAndRollout: the pods get the default probes, the MyWeb's own probes, resources and rollout
// strategy replace them in place, and a change back to RollingUpdate works too.
func TestMyWebHealthAndRollout(t *testing.T) {
	web().Start(t, nil)
	ns := env.NewNamespace(t, "web")
	key := testenv.Create(t, env.Client, newWeb(ns, "healthy", 0))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectConverged(g, key)
		c := getChildren(g, key).dep.Spec.Template.Spec.Containers[0]
		g.Expect(c.ReadinessProbe).NotTo(gomega.BeNil())
		g.Expect(c.ReadinessProbe.HTTPGet).NotTo(gomega.BeNil())
		g.Expect(c.LivenessProbe).NotTo(gomega.BeNil())
	})

	own := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}, PeriodSeconds: 2}
	patchWeb(t, key, func(w *operatorv1.MyWeb) {
		w.Spec.ReadinessProbe = own
		w.Spec.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}
		w.Spec.Strategy = &appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	})
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectConverged(g, key)
		dep := getChildren(g, key).dep
		c := dep.Spec.Template.Spec.Containers[0]
		g.Expect(c.ReadinessProbe.HTTPGet).To(gomega.BeNil(), "the MyWeb's probe replaces the default")
		g.Expect(c.ReadinessProbe.TCPSocket).NotTo(gomega.BeNil())
		g.Expect(c.ReadinessProbe.PeriodSeconds).To(gomega.Equal(int32(2)))
		g.Expect(c.Resources.Requests.Cpu().String()).To(gomega.Equal("10m"))
		g.Expect(dep.Spec.Strategy.Type).To(gomega.Equal(appsv1.RecreateDeploymentStrategyType))
		g.Expect(meta.IsStatusConditionFalse(getWeb(g, key).Status.Conditions, conditions.Degraded)).To(gomega.BeTrue())
	})

	patchWeb(t, key, func(w *operatorv1.MyWeb) {
		maxSurge := intstr.FromInt32(1)
		w.Spec.Strategy = &appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &maxSurge}}
	})
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectConverged(g, key)
		dep := getChildren(g, key).dep
		g.Expect(dep.Spec.Strategy.Type).To(gomega.Equal(appsv1.RollingUpdateDeploymentStrategyType))
		g.Expect(dep.Spec.Strategy.RollingUpdate.MaxSurge).To(gomega.HaveValue(gomega.Equal(intstr.FromInt32(1))))
		g.Expect(meta.IsStatusConditionFalse(getWeb(g, key).Status.Conditions, conditions.Degraded)).To(gomega.BeTrue())
	})
}

// TestMyWebSample: the sample applies unchanged (in a namespace, as `kubectl apply -n` does) and converges, on
// the node port the cluster chose, which its URL names.
func TestMyWebSample(t *testing.T) {
	web().Start(t, nil)
	key := web().CreateSample(t, "operator_v1_myweb.yaml", "sample")
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		url := expectConverged(g, key).Status.URL
		svc := getChildren(g, key).svc
		g.Expect(svc.Spec.Type).To(gomega.Equal(corev1.ServiceTypeNodePort))
		g.Expect(svc.Spec.Ports[0].NodePort).NotTo(gomega.BeZero())
		g.Expect(url).To(gomega.Equal(fmt.Sprintf("http://NODE:%d/", svc.Spec.Ports[0].NodePort)))
	})
}

// TestMyWebAvailableFollowsDeployment: the conditions, completed and the Events follow the Deployment's status
// (written here: envtest runs no Deployment controller).
func TestMyWebAvailableFollowsDeployment(t *testing.T) {
	web().Start(t, nil)
	ns := env.NewNamespace(t, "web")
	w := newWeb(ns, "avail", 30150)
	w.Spec.Replicas = ptr.To[int32](2)
	key := testenv.Create(t, env.Client, w)
	var dep appsv1.Deployment
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { g.Expect(env.Client.Get(ctx, key, &dep)).To(gomega.Succeed()) })

	testenv.MarkDeploymentAvailable(t, env.Client, key) // the Deployment's 2 replicas
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w := getWeb(g, key)
		g.Expect(meta.IsStatusConditionTrue(w.Status.Conditions, conditions.Available)).To(gomega.BeTrue())
		g.Expect(meta.IsStatusConditionFalse(w.Status.Conditions, conditions.Progressing)).To(gomega.BeTrue())
		g.Expect(w.Status.Completed).To(gomega.BeTrue())
		g.Expect(w.Status.Ready).To(gomega.Equal("2/2"))
		g.Expect(w.Status.ReadyReplicas).To(gomega.Equal(int32(2)))
		g.Expect(events(g, ns, "avail")).To(gomega.ContainElement("Normal MinimumReplicasAvailable"))
	})

	// An image that never pulls: the Deployment's rollout hits its deadline.
	testenv.SetDeploymentStatus(t, env.Client, key, func(s *appsv1.DeploymentStatus, _ *appsv1.Deployment) {
		s.AvailableReplicas, s.ReadyReplicas = 0, 0
		s.Conditions = []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
				Message: `ReplicaSet "avail-1" has timed out progressing.`},
		}
	})
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w := getWeb(g, key)
		g.Expect(w.Status.Completed).To(gomega.BeFalse())
		testenv.ExpectCondition(g, w.Status.Conditions, conditions.Degraded, metav1.ConditionTrue,
			"ProgressDeadlineExceeded", "timed out progressing")
		g.Expect(events(g, ns, "avail")).To(gomega.ContainElements("Warning ProgressDeadlineExceeded", "Warning MinimumReplicasUnavailable"))
	})
}

// events lists "type reason" of the Events about a MyWeb.
func events(g gomega.Gomega, ns, name string) []string {
	return web().Events(g, ns, name)
}

// TestMyWebNodePortTaken: a node port another Service holds makes the MyWeb Degraded, with the API server's
// message and a Warning Event; the controller retries with backoff (no hot loop) and recovers once the port
// is free.
func TestMyWebNodePortTaken(t *testing.T) {
	web().ExpectNodePortTaken(t, "web", func(ns string) *operatorv1.MyWeb { return newWeb(ns, "late", 30160) }, 30160,
		func(g gomega.Gomega, key types.NamespacedName) { expectFollows(g, getWeb(g, key), getChildren(g, key)) }, timeout)
}

// TestMyWebNodePortOutOfRange: the schema accepts any port, because only the API server knows the cluster's
// node-port range. A port outside it makes the MyWeb Degraded with the API server's message (which names the
// range) and one Warning Event, with backoff; moving the port into the range heals it.
func TestMyWebNodePortOutOfRange(t *testing.T) {
	web().Start(t, env.Config)
	ns := env.NewNamespace(t, "web")
	key := testenv.Create(t, env.Client, newWeb(ns, "outside", 80))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w := getWeb(g, key)
		testenv.ExpectCondition(g, w.Status.Conditions, conditions.Degraded, metav1.ConditionTrue,
			"NodePortOutOfRange", "The range of valid ports is 30000-32767")
		g.Expect(meta.IsStatusConditionFalse(w.Status.Conditions, conditions.Available)).To(gomega.BeTrue())
		g.Expect(events(g, ns, "outside")).To(gomega.ContainElement("Warning NodePortOutOfRange"))
	})
	patchWeb(t, key, func(w *operatorv1.MyWeb) { w.Spec.NodePortNumber = 30166 })
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w := getWeb(g, key)
		g.Expect(meta.IsStatusConditionFalse(w.Status.Conditions, conditions.Degraded)).To(gomega.BeTrue())
		c := getChildren(g, key)
		g.Expect(c.svc.Spec.Ports[0].NodePort).To(gomega.Equal(int32(30166)))
	})
	if n := len(testenv.EventsOfReason(t, env.Client, ns, "outside", "NodePortOutOfRange")); n != 1 {
		t.Errorf("%d NodePortOutOfRange Events, want 1 (Events on transitions only)", n)
	}
}

// TestMyWebNeverAdoptsAnObjectItDidNotCreate: a tenant's own ConfigMap, Deployment or Service (no operator101
// label, so not in the operator's cache) that has the MyWeb's name is never written: the MyWeb is Degraded,
// ChildNotOwned, naming it, with one Warning Event; the object gets no owner reference, so it survives the
// MyWeb's deletion; and the MyWeb heals by itself once the object is deleted (testenv.TakenName).
func TestMyWebNeverAdoptsAnObjectItDidNotCreate(t *testing.T) {
	cfg, counter := testenv.Counting(env.Config)
	_, rec := web().StartWith(t, cfg, reconciler.Options{NotOwnedRetry: 200 * time.Millisecond})
	port := int32(30170)
	check := testenv.TakenName{
		Client: env.Client, Counter: counter, Reconciles: rec,
		NewOwner: func(ns, name string) client.Object {
			port++
			return newWeb(ns, name, port)
		},
		Conditions: func(g gomega.Gomega, key types.NamespacedName) []metav1.Condition {
			return getWeb(g, key).Status.Conditions
		},
		Children: []func() client.ObjectList{
			func() client.ObjectList { return &corev1.ConfigMapList{} },
			func() client.ObjectList { return &appsv1.DeploymentList{} },
			func() client.ObjectList { return &corev1.ServiceList{} },
		},
	}
	tenant := map[string]func(ns, name string) client.Object{
		"ConfigMap":  func(ns, name string) client.Object { return testenv.TenantConfigMap(ns, name) },
		"Deployment": func(ns, name string) client.Object { return testenv.TenantDeployment(ns, name) },
		"Service":    func(ns, name string) client.Object { return testenv.TenantService(ns, name) },
	}
	for _, kind := range []string{"ConfigMap", "Deployment", "Service"} {
		t.Run(kind, func(t *testing.T) {
			check.Run(t, tenant[kind](env.NewNamespace(t, "web"), "shop"), timeout)
		})
	}
	// The budget exists only for more than one pod.
	t.Run("PodDisruptionBudget", func(t *testing.T) {
		budgeted := check
		budgeted.NewOwner = func(ns, name string) client.Object {
			w := check.NewOwner(ns, name).(*operatorv1.MyWeb)
			w.Spec.Replicas = ptr.To[int32](2)
			return w
		}
		budgeted.Children = append(check.Children, func() client.ObjectList { return &policyv1.PodDisruptionBudgetList{} })
		budgeted.Run(t, testenv.TenantDisruptionBudget(env.NewNamespace(t, "web"), "shop"), timeout)
	})
	// The Ingress exists only when asked for.
	t.Run("Ingress", func(t *testing.T) {
		routed := check
		routed.NewOwner = func(ns, name string) client.Object {
			w := check.NewOwner(ns, name).(*operatorv1.MyWeb)
			w.Spec.Ingress = &operatorv1.Ingress{Host: "shop.example"}
			return w
		}
		routed.Children = append(check.Children, func() client.ObjectList { return &networkingv1.IngressList{} })
		routed.Run(t, testenv.TenantIngress(env.NewNamespace(t, "web"), "shop"), timeout)
	})
}

// TestMyWebDisruptionBudget: more than one pod, a PodDisruptionBudget; one, none.
func TestMyWebDisruptionBudget(t *testing.T) {
	web().ExpectDisruptionBudget(t, "web", func(ns string) *operatorv1.MyWeb {
		w := newWeb(ns, "budget", 0)
		w.Spec.Replicas = ptr.To[int32](2)
		return w
	}, func(t *testing.T, key types.NamespacedName, n int32) {
		patchWeb(t, key, func(w *operatorv1.MyWeb) { w.Spec.Replicas = ptr.To(n) })
	}, timeout)
}

// TestMyWebIngress: spec.ingress gets an Ingress to the Service's port 80 over TLS, whose admission by an
// ingress controller the MyWeb reports; removed from the spec, the Ingress goes. It runs before the tests that
// leave a Degraded MyWeb behind (TestMyWebStatusOnlyFromItsOwnDeployment): its restarted operator reconciles
// every MyWeb of the API server, and one whose child's name is taken is read whole, which the check of lookups
// at rest would count.
func TestMyWebIngress(t *testing.T) {
	web().ExpectIngress(t, "web", func(ns string) *operatorv1.MyWeb {
		w := newWeb(ns, "routed", 0)
		w.Spec.Ingress = &operatorv1.Ingress{Host: "shop.example", ClassName: "web", TLSSecretName: "shop-tls"}
		return w
	}, 80, func(t *testing.T, key types.NamespacedName) {
		patchWeb(t, key, func(w *operatorv1.MyWeb) { w.Spec.Ingress = nil })
	}, timeout)
}

// TestMyWebHTTPRouteNotServed: on an API server without the Gateway API, discovery finds no HTTPRoute; a
// MyWeb that asks for one gets everything else, becomes Available and says HTTPRouteNotServed, at no write at
// rest. (test/gatewayapi runs the HTTPRoute where it is served.)
func TestMyWebHTTPRouteNotServed(t *testing.T) {
	web().ExpectHTTPRouteNotServed(t, "web", func(ns string) *operatorv1.MyWeb {
		w := newWeb(ns, "unrouted", 0)
		w.Spec.HTTPRoute = &operatorv1.HTTPRoute{ParentRefs: []operatorv1.ParentReference{{Name: "public"}}}
		return w
	}, timeout)
}

// TestMyWebStatusOnlyFromItsOwnDeployment: a tenant's available Deployment with the MyWeb's name and
// operator101's label (so the cache holds it) does not make the MyWeb Available: the MyWeb is Degraded
// (ChildNotOwned) and counts no pods.
func TestMyWebStatusOnlyFromItsOwnDeployment(t *testing.T) {
	web().Start(t, nil)
	ns := env.NewNamespace(t, "web")
	dep := testenv.TenantDeployment(ns, "shop")
	dep.Labels["app.kubernetes.io/managed-by"] = "operator101"
	key := testenv.Create(t, env.Client, dep)
	testenv.MarkDeploymentAvailable(t, env.Client, key)
	testenv.Create(t, env.Client, newWeb(ns, "shop", 30179))
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		w := getWeb(g, key)
		g.Expect(w.Status.ObservedGeneration).To(gomega.Equal(w.Generation))
		degraded := meta.FindStatusCondition(w.Status.Conditions, conditions.Degraded)
		g.Expect(degraded).NotTo(gomega.BeNil())
		g.Expect(degraded.Reason).To(gomega.Equal(conditions.ReasonNotOwned))
		g.Expect(meta.IsStatusConditionFalse(w.Status.Conditions, conditions.Available)).To(gomega.BeTrue(), "%+v", w.Status.Conditions)
		g.Expect(w.Status.ReadyReplicas).To(gomega.BeZero())
	})
}

// TestMyWebCacheHoldsNoPage: the manager's cache holds a MyWeb without its page and without the labels and
// annotations a tenant gave it, so its memory does not grow with the size of what tenants write; a new page
// still reaches the ConfigMap and the pods' template, and a converged MyWeb costs no write and no read past the
// cache.
func TestMyWebCacheHoldsNoPage(t *testing.T) {
	cfg, counter := testenv.Counting(env.Config)
	mgr, rec := web().Start(t, cfg)
	ns := env.NewNamespace(t, "web")
	w := newWeb(ns, "large", 30135)
	w.Spec.PageContentHtml = strings.Repeat("a", 524288) // the schema's maxLength
	w.Annotations = map[string]string{"tenant.example/blob": strings.Repeat("b", 200<<10)}
	w.Labels = map[string]string{"tenant": "x"}
	key := testenv.Create(t, env.Client, w)
	testenv.Eventually(t, timeout, func(g gomega.Gomega) { expectConverged(g, key) })
	waitQuiet(t, rec, key, counter)

	cached, size := web().Cached(t, mgr, key)
	t.Logf("the cache's copy of a MyWeb with a page of 512 KiB and 200 KiB of annotations: %d bytes", size)
	if cached.Spec.PageContentHtml != "" || size > 4096 {
		t.Errorf("the cache holds %d bytes of the MyWeb (page of %d bytes), want no page and at most 4 KiB",
			size, len(cached.Spec.PageContentHtml))
	}
	if cached.Spec.NodePortNumber != w.Spec.NodePortNumber || cached.Generation == 0 {
		t.Errorf("the cache's copy lost what the status is derived from: %+v", cached.Spec)
	}

	// A new page: the MyWeb is read whole past the cache, once, and the ConfigMap and the template follow.
	counter.Reset()
	patchWeb(t, key, func(w *operatorv1.MyWeb) { w.Spec.PageContentHtml = strings.Repeat("c", 524288) })
	testenv.Eventually(t, timeout, func(g gomega.Gomega) {
		expectConverged(g, key)
		g.Expect(getChildren(g, key).cm.Data["index.html"]).To(gomega.HavePrefix("ccc"))
	})
	if counter.Gets()["GET mywebs"] == 0 {
		t.Errorf("the new page reached the ConfigMap without a read of the whole MyWeb: %v", counter.Gets())
	}

	// Converged: whatever triggers a reconcile, no write and no read past the cache.
	web().ExpectConvergedCostsNothing(t, rec, key, counter, timeout, "a converged MyWeb with a large page")
}

// TestMyWebPodsRefusedByPodSecurity: in a namespace enforcing the restricted Pod Security Standard, the pods of
// a MyWeb whose image runs as root (nginx's official one: no runAsNonRoot) are refused; the Deployment says so
// (ReplicaFailure, with PodSecurity's message, fed here from a real refusal by the API server), and the MyWeb
// reports it as Degraded=True, ReplicaFailure, with that message, and one Warning Event, however often it is
// reconciled (testenv.ExpectPodsRefusedByPodSecurity).
func TestMyWebPodsRefusedByPodSecurity(t *testing.T) {
	_, rec := web().Start(t, nil)
	testenv.ExpectPodsRefusedByPodSecurity(t, env, rec, timeout, "web-restricted", newWeb("", "root", 30177), getChildren, conditionsOf)
}

// TestMyWebProbeFailing: a pod that runs but never passes its readiness probe keeps the MyWeb from Available,
// with a reason of its own that names the pod.
func TestMyWebProbeFailing(t *testing.T) {
	web().ExpectProbeFailureReported(t, "web", func(ns string) *operatorv1.MyWeb { return newWeb(ns, "unready", 0) }, timeout)
}
