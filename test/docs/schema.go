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

package docs

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/operator101/operator101/hack/crdfiles"
)

// Schemas checks objects of the kinds whose CRDs are in a directory (config/crd/bases) as the API server would
// on create: no field the schema does not know (kubectl's strict field validation), defaults applied, then the
// OpenAPI validation (types, enums, bounds, patterns, required fields) and the CEL rules.
type Schemas struct {
	byGVK map[string]*crdSchema // "group/version, Kind=Kind"
}

type crdSchema struct {
	structural *structuralschema.Structural
	validator  validation.SchemaValidator
	cel        *cel.Validator
}

// LoadSchemas reads every CRD in dir.
func LoadSchemas(dir string) (*Schemas, error) {
	crds, err := crdfiles.Read(dir)
	if err != nil {
		return nil, err
	}
	s := &Schemas{byGVK: map[string]*crdSchema{}}
	for _, crd := range crds {
		p := crd.Name
		for _, v := range crd.Spec.Versions {
			internal := &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				return nil, fmt.Errorf("%s %s: %w", p, v.Name, err)
			}
			structural, err := structuralschema.NewStructural(internal)
			if err != nil {
				return nil, fmt.Errorf("%s %s: not structural: %w", p, v.Name, err)
			}
			validator, _, err := validation.NewSchemaValidator(internal)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", p, v.Name, err)
			}
			key := gvk(crd.Spec.Group+"/"+v.Name, crd.Spec.Names.Kind)
			s.byGVK[key] = &crdSchema{structural: structural, validator: validator,
				cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}
		}
	}
	return s, nil
}

func gvk(apiVersion, kind string) string { return apiVersion + ", Kind=" + kind }

// Knows tells whether apiVersion and kind are one of the CRDs' kinds.
func (s *Schemas) Knows(apiVersion, kind string) bool {
	_, ok := s.byGVK[gvk(apiVersion, kind)]
	return ok
}

// Groups are the API groups of the CRDs.
func (s *Schemas) Groups() []string {
	seen := map[string]bool{}
	for k := range s.byGVK {
		seen[strings.SplitN(k, "/", 2)[0]] = true
	}
	var out []string
	for g := range seen {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// Validate checks one object (as decoded from YAML) of a kind the CRDs define; it returns what the API server
// would refuse, or nil.
func (s *Schemas) Validate(obj map[string]any) error {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	c, ok := s.byGVK[gvk(apiVersion, kind)]
	if !ok {
		return fmt.Errorf("no CRD serves %s %s", apiVersion, kind)
	}
	meta, _ := obj["metadata"].(map[string]any)
	if name, _ := meta["name"].(string); name == "" {
		return fmt.Errorf("%s without metadata.name", kind)
	}
	// Metadata is the API server's to check; the schema knows only name and generateName of it.
	withoutMeta := map[string]any{}
	for k, v := range obj {
		if k != "metadata" {
			withoutMeta[k] = v
		}
	}
	if unknown := pruning.PruneWithOptions(withoutMeta, c.structural, true,
		structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(unknown) > 0 {
		return fmt.Errorf("%s %s: unknown fields %v", kind, meta["name"], unknown)
	}
	structuraldefaulting.Default(obj, c.structural)
	var errs field.ErrorList
	errs = append(errs, validation.ValidateCustomResource(nil, obj, c.validator)...)
	celErrs, _ := c.cel.Validate(context.Background(), nil, c.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	errs = append(errs, celErrs...)
	if len(errs) > 0 {
		return fmt.Errorf("%s %s: %w", kind, meta["name"], errs.ToAggregate())
	}
	return nil
}
