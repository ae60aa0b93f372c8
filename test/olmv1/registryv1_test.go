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

package olmv1

import (
	"fmt"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The registry+v1 limits operator-controller enforces when it renders a bundle. Upstream paths are relative
// to operator-framework/operator-controller; "validators.go" is
// internal/operator-controller/rukpak/render/registryv1/validators/validator.go, whose list of checks
// (render/registryv1/registryv1.go, BundleValidator) is the same in v1.10.0, v1.11.0 and main.

// checkLayout reports what kept the bundle from being read as operator-controller reads it: a
// subdirectory of manifests/, not exactly one CSV, an object that does not parse.
// Mirrors internal/operator-controller/rukpak/bundle/source/source.go (fsBundleSource.GetBundle).
func checkLayout(r *repo) []error {
	errs := append([]error(nil), r.bundle.layout...)
	if mt := r.bundle.annotations["operators.operatorframework.io.bundle.mediatype.v1"]; mt != "registry+v1" {
		errs = append(errs, fmt.Errorf("bundle media type %q, operator-controller installs registry+v1 bundles only", mt))
	}
	return errs
}

// checkPackageName: the bundle names its package. Mirrors validators.go, CheckPackageNameNotEmpty.
func checkPackageName(r *repo) []error {
	if r.bundle.packageName == "" {
		return []error{fmt.Errorf("metadata/annotations.yaml names no package (operators.operatorframework.io.bundle.package.v1)")}
	}
	return nil
}

// checkDeployments: the CSV's deployment names are unique and valid object names. Mirrors validators.go,
// CheckDeploymentSpecUniqueness and CheckDeploymentNameIsDNS1123SubDomain.
func checkDeployments(r *repo) []error {
	var errs []error
	seen := map[string]bool{}
	for _, d := range r.bundle.csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if seen[d.Name] {
			errs = append(errs, fmt.Errorf("the CSV has two deployments named %q", d.Name))
		}
		seen[d.Name] = true
		if msgs := validation.IsDNS1123Subdomain(d.Name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("CSV deployment name %q: %s", d.Name, strings.Join(msgs, ", ")))
		}
	}
	if len(seen) == 0 {
		errs = append(errs, fmt.Errorf("the CSV's install strategy has no deployment"))
	}
	return errs
}

// checkCRDs: each CRD is in the bundle once, and every CRD the CSV owns is in the bundle. Mirrors
// validators.go, CheckCRDResourceUniqueness and CheckOwnedCRDExistence.
func checkCRDs(r *repo) []error {
	var errs []error
	have := map[string]bool{}
	for _, crd := range r.bundle.crds {
		if have[crd.Name] {
			errs = append(errs, fmt.Errorf("the bundle holds CRD %s twice", crd.Name))
		}
		have[crd.Name] = true
	}
	for _, owned := range r.bundle.csv.Spec.CustomResourceDefinitions.Owned {
		if !have[owned.Name] {
			errs = append(errs, fmt.Errorf("the CSV owns CRD %s, which is not in the bundle", owned.Name))
		}
	}
	return errs
}

// supportedKinds are the kinds a registry+v1 bundle may ship besides the CSV and CRDs; any other is refused.
// Mirrors validators.go, CheckObjectSupport, which asks operator-registry's pkg/lib/bundle/
// supported_resources.go (IsSupported); this list is operator-registry v1.72.0's (operator-controller
// v1.10.0 pins it), unchanged from v1.64.0, the opm this project builds.
var supportedKinds = map[string]bool{
	"ClusterServiceVersion": true, "CustomResourceDefinition": true, "Secret": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "ConfigMap": true, "ServiceAccount": true, "Service": true, "Role": true,
	"RoleBinding": true, "PrometheusRule": true, "ServiceMonitor": true, "PodDisruptionBudget": true,
	"PriorityClass": true, "VerticalPodAutoscaler": true, "ConsoleYAMLSample": true, "ConsoleQuickStart": true,
	"ConsoleCLIDownload": true, "ConsoleLink": true, "ConsolePlugin": true, "NetworkPolicy": true,
	"PodMonitor": true,
}

func checkObjectKinds(r *repo) []error {
	var errs []error
	for _, o := range r.bundle.others {
		if !supportedKinds[o.GetKind()] {
			errs = append(errs, fmt.Errorf("bundle object %s %q: kind not supported in a registry+v1 bundle", o.GetKind(), o.GetName()))
		}
	}
	return errs
}

// checkNoAPIServices: operator-controller refuses a bundle whose CSV owns APIServices. Mirrors
// internal/operator-controller/applier/provider.go (RegistryV1ManifestProvider.Get).
func checkNoAPIServices(r *repo) []error {
	var errs []error
	for _, a := range r.bundle.csv.Spec.APIServiceDefinitions.Owned {
		errs = append(errs, fmt.Errorf("the CSV owns APIService %s.%s: apiservicedefinitions are not supported", a.Version, a.Group))
	}
	return errs
}

// checkInstallModes: without the SingleOwnNamespaceInstallSupport feature gate (alpha, off by default),
// operator-controller installs only bundles that support AllNamespaces; with it, one of AllNamespaces,
// SingleNamespace or OwnNamespace. operator101 must install with the gate off. Mirrors
// internal/operator-controller/applier/provider.go (RegistryV1ManifestProvider.Get).
func checkInstallModes(r *repo) []error {
	supported := supportedModes(r.bundle.csv)
	if !supported[v1alpha1.InstallModeTypeAllNamespaces] {
		return []error{fmt.Errorf("the CSV does not support AllNamespaces (supports %v): OLM v1 refuses it unless the SingleOwnNamespaceInstallSupport feature gate is on", sortedModes(supported))}
	}
	return nil
}

func supportedModes(csv *v1alpha1.ClusterServiceVersion) map[v1alpha1.InstallModeType]bool {
	out := map[v1alpha1.InstallModeType]bool{}
	for _, m := range csv.Spec.InstallModes {
		if m.Supported {
			out[m.Type] = true
		}
	}
	return out
}

func sortedModes(m map[v1alpha1.InstallModeType]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, string(k))
	}
	sort.Strings(out)
	return out
}

// checkWebhooks: the CSV's webhook definitions. operator101 has none; the rules stay checked so that one
// added later meets them. Mirrors validators.go: CheckConversionWebhookSupport (conversion webhooks only in
// an AllNamespaces-only bundle), CheckWebhookDeploymentReferentialIntegrity, CheckWebhookNameUniqueness,
// CheckWebhookNameIsDNS1123SubDomain, CheckConversionWebhookCRDReferenceUniqueness,
// CheckConversionWebhooksReferenceOwnedCRDs and CheckWebhookRules.
func checkWebhooks(r *repo) []error {
	csv := r.bundle.csv
	var errs []error
	deployments := map[string]bool{}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		deployments[d.Name] = true
	}
	owned := map[string]bool{}
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[o.Name] = true
	}
	modes := supportedModes(csv)
	allOnly := len(modes) == 1 && modes[v1alpha1.InstallModeTypeAllNamespaces]
	names := map[v1alpha1.WebhookAdmissionType]map[string]bool{}
	conversionOf := map[string]string{}
	for _, wh := range csv.Spec.WebhookDefinitions {
		id := fmt.Sprintf("webhook %s %q", wh.Type, wh.GenerateName)
		if !deployments[wh.DeploymentName] {
			errs = append(errs, fmt.Errorf("%s names deployment %q, which the CSV does not have", id, wh.DeploymentName))
		}
		if names[wh.Type] == nil {
			names[wh.Type] = map[string]bool{}
		}
		if names[wh.Type][wh.GenerateName] {
			errs = append(errs, fmt.Errorf("%s is defined twice", id))
		}
		names[wh.Type][wh.GenerateName] = true
		if msgs := validation.IsDNS1123Subdomain(wh.GenerateName); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: invalid name: %s", id, strings.Join(msgs, ", ")))
		}
		if wh.Type == v1alpha1.ConversionWebhook {
			if !allOnly {
				errs = append(errs, fmt.Errorf("%s: conversion webhooks need a bundle that supports AllNamespaces only (supports %v)", id, sortedModes(modes)))
			}
			for _, crd := range wh.ConversionCRDs {
				if !owned[crd] {
					errs = append(errs, fmt.Errorf("%s converts CRD %s, which the CSV does not own", id, crd))
				}
				if prev, ok := conversionOf[crd]; ok {
					errs = append(errs, fmt.Errorf("%s and webhook %q both convert CRD %s", id, prev, crd))
				}
				conversionOf[crd] = wh.GenerateName
			}
			continue
		}
		for _, rule := range wh.Rules {
			for _, g := range rule.APIGroups {
				if g == "*" || g == "olm.operatorframework.io" {
					errs = append(errs, fmt.Errorf("%s: a rule on API group %q is forbidden", id, g))
				}
				if g != "admissionregistration.k8s.io" {
					continue
				}
				for _, res := range rule.Resources {
					switch strings.ToLower(res) {
					case "*", "mutatingwebhookconfiguration", "mutatingwebhookconfigurations",
						"validatingwebhookconfiguration", "validatingwebhookconfigurations":
						errs = append(errs, fmt.Errorf("%s: a rule on admissionregistration.k8s.io %s is forbidden", id, res))
					}
				}
			}
		}
	}
	return errs
}

// checkServiceAccounts: operator-controller creates one ServiceAccount per serviceAccountName of the CSV's
// permissions and clusterPermissions (not "default"). Each deployment must run as one of them (or as
// "default"), and the bundle must not ship an object of the same name, which would be rendered twice.
// Mirrors internal/operator-controller/rukpak/render/registryv1/generators/generators.go
// (BundleCSVServiceAccountGenerator).
func checkServiceAccounts(r *repo) []error {
	s := r.bundle.csv.Spec.InstallStrategy.StrategySpec
	created := map[string]bool{}
	for _, p := range append(append([]v1alpha1.StrategyDeploymentPermissions{}, s.Permissions...), s.ClusterPermissions...) {
		if p.ServiceAccountName != "" && p.ServiceAccountName != "default" {
			created[p.ServiceAccountName] = true
		}
	}
	var errs []error
	for _, d := range s.DeploymentSpecs {
		sa := d.Spec.Template.Spec.ServiceAccountName
		if sa != "" && sa != "default" && !created[sa] {
			errs = append(errs, fmt.Errorf("deployment %s runs as ServiceAccount %q, which no permissions entry of the CSV names: OLM v1 does not create it", d.Name, sa))
		}
	}
	for _, o := range r.bundle.others {
		if o.GetKind() == "ServiceAccount" && created[o.GetName()] {
			errs = append(errs, fmt.Errorf("the bundle ships ServiceAccount %s, which OLM v1 also generates from the CSV", o.GetName()))
		}
	}
	return errs
}

// checkNoOperatorConditions: OLM v1 has no OperatorCondition API ("does not support the OperatorConditions
// API introduced in legacy OLM"; an extension that needs it does not install correctly). operator101
// touches its OperatorCondition only when OLM v0 sets OPERATOR_CONDITION_NAME (internal/controller/at/setup.go),
// so the bundle itself must neither set that variable nor ask for operators.coreos.com rights. Mirrors
// docs/project/olmv1_limitations.md.
func checkNoOperatorConditions(r *repo) []error {
	var errs []error
	s := r.bundle.csv.Spec.InstallStrategy.StrategySpec
	for _, d := range s.DeploymentSpecs {
		pod := d.Spec.Template.Spec
		for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
			for _, e := range c.Env {
				if e.Name == "OPERATOR_CONDITION_NAME" {
					errs = append(errs, fmt.Errorf("deployment %s container %s sets OPERATOR_CONDITION_NAME: the operator would need an OperatorCondition, which OLM v1 does not create", d.Name, c.Name))
				}
			}
		}
	}
	for _, p := range append(append([]v1alpha1.StrategyDeploymentPermissions{}, s.Permissions...), s.ClusterPermissions...) {
		for _, rule := range p.Rules {
			for _, g := range rule.APIGroups {
				if g == "operators.coreos.com" {
					errs = append(errs, fmt.Errorf("the CSV asks for %v on operators.coreos.com %v: OLM v1 serves no OLM v0 API", rule.Verbs, rule.Resources))
				}
			}
		}
	}
	return errs
}
