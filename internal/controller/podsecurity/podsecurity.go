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

// Package podsecurity holds the securityContext of the pods that run a tenant's image.
package podsecurity

import (
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// Contexts are the securityContexts of the pods a MyWeb or an AppService runs its user's image in: as much of
// the restricted Pod Security Standard as an image that runs as root (nginx's official image, the lab's
// stand-in for it) allows, and all of it when the user says the image runs as a non-root user (nonRoot).
//
//   - always: the RuntimeDefault seccomp profile (pod) and allowPrivilegeEscalation false (container). Neither
//     stops a root process from binding port 80 or switching its workers to another user, which is all nginx
//     does with its privileges.
//   - nonRoot: runAsNonRoot (the kubelet refuses to start an image whose USER is 0 or a name) and every
//     capability dropped. An image running as root needs capabilities (nginx: NET_BIND_SERVICE for port 80,
//     SETUID and SETGID for its workers, CHOWN for its cache), so this is the user's to ask for.
//
// No runAsUser is set: the image's USER runs, or the UID OpenShift's SCC gives from the namespace's range.
func Contexts(nonRoot bool) (*corev1ac.PodSecurityContextApplyConfiguration, *corev1ac.SecurityContextApplyConfiguration) {
	pod := corev1ac.PodSecurityContext().
		WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))
	container := corev1ac.SecurityContext().WithAllowPrivilegeEscalation(false)
	if nonRoot {
		pod.WithRunAsNonRoot(true)
		container.WithCapabilities(corev1ac.Capabilities().WithDrop("ALL"))
	}
	return pod, container
}
