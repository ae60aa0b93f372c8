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

// Package crdfiles reads the CRDs controller-gen writes (config/crd/bases), for the API reference's generator
// and the docs' manifest checks.
package crdfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Read returns every CRD of the *.yaml files in dir, by kind and then group; it fails on an unknown field, on
// a file that holds another kind of object, and on a directory without any.
func Read(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no CRD in %s", dir)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s: kind %q, not a CustomResourceDefinition", p, crd.Kind)
		}
		crds = append(crds, crd)
	}
	sort.Slice(crds, func(i, j int) bool {
		a, b := crds[i].Spec, crds[j].Spec
		if a.Names.Kind != b.Names.Kind {
			return a.Names.Kind < b.Names.Kind
		}
		return a.Group < b.Group
	})
	return crds, nil
}
