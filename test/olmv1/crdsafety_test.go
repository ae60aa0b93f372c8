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
	"bytes"
	"fmt"
	"slices"

	bsemver "github.com/blang/semver/v4"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// checkCRDUpgradeSafety: before an upgrade, OLM v1 compares each CRD of the new bundle with the one on the
// cluster and refuses the upgrade on a change that could break stored objects or their clients. This check
// compares bundle/'s CRDs with those of every catalog bundle it upgrades from (an olm.channel edge to
// it), with the rules operator-controller documents: the scope changes; a version is removed; a field is
// removed or changes type; a field becomes required; a default is added, changed or removed; an enum is
// added or loses a value; a minimum/minLength/minItems/minProperties is added or raised, a maximum/... is
// added or lowered. It does not reproduce upstream's refusal of changes its validators cannot classify.
// Mirrors internal/operator-controller/rukpak/preflights/crdupgradesafety/crdupgradesafety.go (which runs
// sigs.k8s.io/crdify's validations) and docs/concepts/crd-upgrade-safety.md.
func checkCRDUpgradeSafety(r *repo) []error {
	var errs []error
	current := r.bundle.csv.Name
	curVersion, err := bsemver.Parse(r.bundle.csv.Spec.Version.String())
	if err != nil {
		return []error{fmt.Errorf("the CSV's version: %w", err)}
	}
	newCRDs := map[string]apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range r.bundle.crds {
		newCRDs[crd.Name] = crd
	}
	for _, b := range r.catalog.bundles {
		if b.Package != r.bundle.packageName || b.Name == current {
			continue
		}
		v, err := bsemver.Parse(b.bundleVersion())
		if err != nil || !v.LT(curVersion) || !upgradesFrom(r.catalog, current, b.Name, v) {
			continue
		}
		objs, err := b.bundleObjects()
		if err != nil {
			errs = append(errs, fmt.Errorf("catalog bundle %s: %w", b.Name, err))
			continue
		}
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			old := apiextensionsv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &old); err != nil {
				errs = append(errs, fmt.Errorf("catalog bundle %s CRD %s: %w", b.Name, o.GetName(), err))
				continue
			}
			nu, ok := newCRDs[old.Name]
			if !ok {
				// The CRD leaves the bundle: OLM v1 deletes it, and every object of it, on upgrade.
				errs = append(errs, fmt.Errorf("%s -> %s: CRD %s is no longer in the bundle", b.Name, current, old.Name))
				continue
			}
			for _, e := range compareCRDs(&old, &nu) {
				errs = append(errs, fmt.Errorf("%s -> %s: CRD %s: %s", b.Name, current, old.Name, e))
			}
		}
	}
	return errs
}

// upgradesFrom tells whether some channel has an edge from the bundle from (of version v) to the bundle to.
func upgradesFrom(c *catalog, to, from string, v bsemver.Version) bool {
	for _, ch := range c.channels {
		for _, e := range ch.Entries {
			if e.Name != to {
				continue
			}
			if e.Replaces == from || slices.Contains(e.Skips, from) {
				return true
			}
			if rng, err := bsemver.ParseRange(e.SkipRange); e.SkipRange != "" && err == nil && rng(v) {
				return true
			}
		}
	}
	return false
}

// compareCRDs lists the changes from old to nu that OLM v1's CRD upgrade safety check refuses.
func compareCRDs(old, nu *apiextensionsv1.CustomResourceDefinition) []string {
	var out []string
	if old.Spec.Scope != nu.Spec.Scope {
		out = append(out, fmt.Sprintf("scope changed from %s to %s", old.Spec.Scope, nu.Spec.Scope))
	}
	for _, ov := range old.Spec.Versions {
		i := slices.IndexFunc(nu.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == ov.Name })
		if i < 0 {
			out = append(out, fmt.Sprintf("version %s removed", ov.Name))
			continue
		}
		nv := nu.Spec.Versions[i]
		if ov.Schema == nil || ov.Schema.OpenAPIV3Schema == nil || nv.Schema == nil || nv.Schema.OpenAPIV3Schema == nil {
			if (ov.Schema == nil) != (nv.Schema == nil) {
				out = append(out, fmt.Sprintf("version %s: schema added or removed", ov.Name))
			}
			continue
		}
		for _, e := range compareSchemas(ov.Schema.OpenAPIV3Schema, nv.Schema.OpenAPIV3Schema, "") {
			out = append(out, fmt.Sprintf("version %s: %s", ov.Name, e))
		}
	}
	return out
}

// compareSchemas walks the fields old and nu share.
func compareSchemas(old, nu *apiextensionsv1.JSONSchemaProps, path string) []string {
	var out []string
	at := func(format string, args ...any) {
		p := path
		if p == "" {
			p = "(root)"
		}
		out = append(out, p+": "+fmt.Sprintf(format, args...))
	}
	if old.Type != nu.Type {
		at("type changed from %q to %q", old.Type, nu.Type)
	}
	for _, req := range nu.Required {
		if !slices.Contains(old.Required, req) {
			at("new required field %q", req)
		}
	}
	switch {
	case old.Default == nil && nu.Default != nil:
		at("default added")
	case old.Default != nil && nu.Default == nil:
		at("default removed")
	case old.Default != nil && !bytes.Equal(old.Default.Raw, nu.Default.Raw):
		at("default changed from %s to %s", old.Default.Raw, nu.Default.Raw)
	}
	if len(old.Enum) == 0 && len(nu.Enum) > 0 {
		at("enum added")
	}
	if len(nu.Enum) > 0 {
		for _, ov := range old.Enum {
			if !slices.ContainsFunc(nu.Enum, func(nv apiextensionsv1.JSON) bool { return bytes.Equal(nv.Raw, ov.Raw) }) {
				at("enum value %s removed", ov.Raw)
			}
		}
	}
	lower := func(name string, o, n *float64) {
		if n != nil && (o == nil || *n > *o) {
			at("%s added or raised", name)
		}
	}
	upper := func(name string, o, n *float64) {
		if n != nil && (o == nil || *n < *o) {
			at("%s added or lowered", name)
		}
	}
	lower("minimum", old.Minimum, nu.Minimum)
	upper("maximum", old.Maximum, nu.Maximum)
	lower("minLength", f(old.MinLength), f(nu.MinLength))
	upper("maxLength", f(old.MaxLength), f(nu.MaxLength))
	lower("minItems", f(old.MinItems), f(nu.MinItems))
	upper("maxItems", f(old.MaxItems), f(nu.MaxItems))
	lower("minProperties", f(old.MinProperties), f(nu.MinProperties))
	upper("maxProperties", f(old.MaxProperties), f(nu.MaxProperties))

	for _, name := range sortedKeys(old.Properties) {
		op := old.Properties[name]
		np, ok := nu.Properties[name]
		if !ok {
			at("field %q removed", name)
			continue
		}
		out = append(out, compareSchemas(&op, &np, path+"."+name)...)
	}
	if old.Items != nil && old.Items.Schema != nil && nu.Items != nil && nu.Items.Schema != nil {
		out = append(out, compareSchemas(old.Items.Schema, nu.Items.Schema, path+"[*]")...)
	}
	if old.AdditionalProperties != nil && old.AdditionalProperties.Schema != nil &&
		nu.AdditionalProperties != nil && nu.AdditionalProperties.Schema != nil {
		out = append(out, compareSchemas(old.AdditionalProperties.Schema, nu.AdditionalProperties.Schema, path+"{*}")...)
	}
	return out
}

func f(i *int64) *float64 {
	if i == nil {
		return nil
	}
	v := float64(*i)
	return &v
}
