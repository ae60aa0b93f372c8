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

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// runMetadata adds annotations to the bundle's metadata/annotations.yaml and, as labels, to its Dockerfile.
func runMetadata(args []string) error {
	fs := newFlagSet("metadata")
	dir := fs.String("bundle", "bundle", "bundle directory")
	dockerfile := fs.String("dockerfile", "bundle.Dockerfile", "the bundle image's Dockerfile")
	set := fs.String("set", "", "annotations to add, key=value,...")
	_ = fs.Parse(args)
	kv, err := parseAnnotations(*set)
	if err != nil {
		return err
	}
	path := filepath.Join(*dir, "metadata", "annotations.yaml")
	ann, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	df, err := os.ReadFile(*dockerfile)
	if err != nil {
		return err
	}
	a, d, err := AddMetadata(string(ann), string(df), kv)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(a), 0o644); err != nil {
		return err
	}
	return os.WriteFile(*dockerfile, []byte(d), 0o644)
}

func parseAnnotations(s string) (map[string]string, error) {
	kv := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("annotation %q is not key=value", item)
		}
		kv[k] = v
	}
	return kv, nil
}

// AddMetadata returns annotations (metadata/annotations.yaml, as operator-sdk generate bundle writes it) and
// dockerfile (bundle.Dockerfile) with the annotations of kv added, in key order, under a comment of their own:
// operator-sdk generate bundle rewrites both files on every run and has no flag for other annotations, such as
// com.redhat.openshift.versions, which OpenShift's catalogs read. A key already present is an error, so that a
// second run over the same files does not add it twice.
func AddMetadata(annotations, dockerfile string, kv map[string]string) (string, string, error) {
	keys := make([]string, 0, len(kv))
	for k := range kv {
		if strings.Contains(annotations, "\n  "+k+":") || strings.Contains(dockerfile, "LABEL "+k+"=") {
			return "", "", fmt.Errorf("annotation %s is already in the bundle's metadata", k)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return annotations, dockerfile, nil
	}
	sort.Strings(keys)
	var a, labels strings.Builder
	a.WriteString(strings.TrimRight(annotations, "\n"))
	a.WriteString("\n\n  # Annotations for OpenShift's catalogs (bundletool metadata).\n")
	labels.WriteString("# Labels for OpenShift's catalogs (bundletool metadata).\n")
	for _, k := range keys {
		fmt.Fprintf(&a, "  %s: %q\n", k, kv[k])
		fmt.Fprintf(&labels, "LABEL %s=%s\n", k, kv[k])
	}
	labels.WriteString("\n")
	const copyLine = "# Copy files to locations specified by labels."
	i := strings.Index(dockerfile, copyLine)
	if i < 0 {
		return "", "", fmt.Errorf("the bundle's Dockerfile has no line %q to put the labels before", copyLine)
	}
	return a.String(), dockerfile[:i] + labels.String() + dockerfile[i:], nil
}
