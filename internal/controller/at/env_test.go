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

package at

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cnatv1alpha1 "github.com/operator101/operator101/api/cnat/v1alpha1"
	"github.com/operator101/operator101/internal/proxyenv"
)

// The At's env follows the proxy settings (so the At's wins a name both have), each source as a pod's
// (a literal, a Secret's key, a ConfigMap's key, nothing else); its resources are the container's; nothing
// else of the pod changes: no volume, no ServiceAccount, the same security context.
func TestPodEnvAndResources(t *testing.T) {
	at := newAt("env", "echo $TOKEN", "")
	at.Spec.Env = []cnatv1alpha1.AtEnvVar{
		{Name: "GREETING", Value: "hello"},
		{Name: "TOKEN", ValueFrom: &cnatv1alpha1.AtEnvVarSource{SecretKeyRef: &cnatv1alpha1.AtKeySelector{Name: "creds", Key: "token"}}},
		{Name: "MODE", ValueFrom: &cnatv1alpha1.AtEnvVarSource{ConfigMapKeyRef: &cnatv1alpha1.AtKeySelector{Name: "cfg", Key: "mode", Optional: ptr.To(true)}}},
		{Name: "HTTP_PROXY", Value: "http://mine:8080"},
	}
	at.Spec.Resources = &cnatv1alpha1.AtResources{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi"), corev1.ResourceCPU: resource.MustParse("500m")},
	}
	proxy := proxyenv.New([]corev1.EnvVar{{Name: "HTTP_PROXY", Value: "http://proxy:3128"}})
	pod := Pod(at, PodDefaults{ProxyEnv: proxy})
	c := pod.Spec.Containers[0]
	want := []corev1.EnvVar{
		{Name: "HTTP_PROXY", Value: "http://proxy:3128"},
		{Name: "GREETING", Value: "hello"},
		{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "token"}}},
		{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "mode", Optional: ptr.To(true)}}},
		{Name: "HTTP_PROXY", Value: "http://mine:8080"},
	}
	if !equality.Semantic.DeepEqual(c.Env, want) {
		t.Errorf("env %+v, want %+v", c.Env, want)
	}
	if !equality.Semantic.DeepEqual(c.Resources, corev1.ResourceRequirements{Requests: at.Spec.Resources.Requests, Limits: at.Spec.Resources.Limits}) {
		t.Errorf("resources %+v", c.Resources)
	}
	plain := Pod(newAt("env", "echo $TOKEN", ""), PodDefaults{ProxyEnv: proxy})
	// Only env and resources differ from the pod of an At without them.
	c.Env, c.Resources = plain.Spec.Containers[0].Env, plain.Spec.Containers[0].Resources
	pod.Spec.Containers[0] = c
	if !equality.Semantic.DeepEqual(pod, plain) {
		t.Errorf("env and resources changed more than the container's env and resources")
	}
	if len(pod.Spec.Volumes) != 0 || pod.Spec.ServiceAccountName != "" || pod.Spec.HostNetwork || pod.Spec.HostPID {
		t.Errorf("pod spec %+v", pod.Spec)
	}
}

// The command's termination message reaches status.message, on success and on failure, at most
// MaxTerminationMessage bytes of it (its end), cut at a character's boundary.
func TestTerminationMessageInStatus(t *testing.T) {
	pod := func(phase corev1.PodPhase, code int32, msg string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Phase: phase,
			ContainerStatuses: []corev1.ContainerStatus{{Name: containerName, State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error", Message: msg}}}}}}
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st := fromPod(cnatv1alpha1.AtStatus{}, pod(corev1.PodSucceeded, 0, "42 rows\n"), now)
	if st.Message != "the command exited 0: 42 rows\n" {
		t.Errorf("success: %q", st.Message)
	}
	long := strings.Repeat("é", 2000) + "the end"
	st = fromPod(cnatv1alpha1.AtStatus{}, pod(corev1.PodFailed, 3, long), now)
	if !strings.HasPrefix(st.Message, "the command exited 3 (Error): ...") || !strings.HasSuffix(st.Message, "the end") {
		t.Errorf("failure: %q", st.Message[:80])
	}
	tail := strings.TrimPrefix(st.Message, "the command exited 3 (Error): ")
	if len(tail) > MaxTerminationMessage || !utf8.ValidString(tail) {
		t.Errorf("termination message of %d bytes, valid UTF-8 %t", len(tail), utf8.ValidString(tail))
	}
}

// The cache holds an At without its env: a pod is built from the At read past the cache.
func TestCacheDropsTheEnv(t *testing.T) {
	at := newAt("env", "true", "")
	at.Spec.Env = []cnatv1alpha1.AtEnvVar{{Name: "BIG", Value: strings.Repeat("x", 4096)}}
	obj, err := ForCache().Transform(at)
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*cnatv1alpha1.At); got.Spec.Env != nil || got.Spec.Command != "true" {
		t.Errorf("cached spec %+v", got.Spec)
	}
}
