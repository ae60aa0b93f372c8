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

package reconciler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/apply"
	"github.com/operator101/operator101/internal/proxyenv"
)

// informers records the kinds whose informer got a handler.
type informers struct {
	cache.Informers
	hooked []string
}

func (f *informers) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	return informer{f: f, kind: fmt.Sprintf("%T", obj)}, nil
}

type informer struct {
	cache.Informer
	f    *informers
	kind string
}

func (i informer) AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	i.f.hooked = append(i.f.hooked, i.kind)
	return nil, nil
}

// TestMemoryHooksWhatWasRegistered: the informers a Memory hooks are those of the kinds registered with it,
// the kinds a controller reports the status of and those a cache transform of it remembers digests of, each
// once; no list is kept by hand.
func TestMemoryHooksWhatWasRegistered(t *testing.T) {
	m := NewMemory()
	apply.AppliedChildren(m.Applied)
	apply.OwnerForCache(m.Applied, func(*operatorv1.MyWeb) (map[string]runtime.ApplyConfiguration, error) { return nil, nil }, func(*operatorv1.MyWeb) {})
	m.reports(&operatorv1.MyWeb{})
	m.reports(&cnatv1alpha1.At{})
	c := &informers{}
	if err := m.Hook(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	slices.Sort(c.hooked)
	want := []string{"*v1.ConfigMap", "*v1.Deployment", "*v1.Ingress", "*v1.MyWeb", "*v1.PodDisruptionBudget", "*v1.Service", "*v1alpha1.At"}
	if !slices.Equal(c.hooked, want) {
		t.Errorf("hooked %v, want %v", c.hooked, want)
	}
}

// Every controller's reconciler gets its options through WithDefaults (NewBase): the At's pod, whose builder
// passes ProxyEnv on as it is, never gets the proxy's credentials either, since a proxyenv.Env holds none.
func TestOptionsWithDefaultsDropsProxyCredentials(t *testing.T) {
	o := Options{Reader: struct{ client.Reader }{}, ProxyEnv: proxyenv.New([]corev1.EnvVar{
		{Name: "HTTPS_PROXY", Value: "http://operator:s3cret@proxy.example:3128"}, {Name: "NO_PROXY", Value: ".svc"}})}
	var got []string
	for e := range o.WithDefaults(nil).ProxyEnv.All() {
		got = append(got, e.Name+"="+e.Value)
	}
	if strings.Join(got, " ") != "HTTPS_PROXY=http://proxy.example:3128 NO_PROXY=.svc" {
		t.Errorf("ProxyEnv %v", got)
	}
}
