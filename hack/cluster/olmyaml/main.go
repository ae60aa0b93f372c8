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

// Command olmyaml turns OLM's released quickstart manifest (deploy/upstream/quickstart/olm.yaml of the pinned
// operator-lifecycle-manager module) into what the local cluster runs: every image is the locally built OLM
// image, the catalog operator gets its flags with two dashes plus the local opm image for bundle unpacking, and
// the two objects that need the internet or API aggregation are left out (the packageserver CSV and the
// operatorhub.io CatalogSource).
//
//	go run ./hack/cluster/olmyaml -in olm.yaml -olm-image IMG -opm-image IMG > out.yaml
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

func main() {
	in := flag.String("in", "", "OLM's quickstart olm.yaml")
	olmImage := flag.String("olm-image", "", "image with /bin/olm, /bin/catalog, /bin/cpb, /bin/copy-content")
	opmImage := flag.String("opm-image", "", "image with /bin/opm, for bundle-unpack Jobs")
	flag.Parse()
	if *in == "" || *olmImage == "" || *opmImage == "" {
		fmt.Fprintln(os.Stderr, "olmyaml: -in, -olm-image and -opm-image are required")
		os.Exit(2)
	}
	raw, err := os.ReadFile(*in)
	if err == nil {
		var out []byte
		out, err = render(raw, *olmImage, *opmImage)
		if err == nil {
			_, err = os.Stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "olmyaml:", err)
		os.Exit(1)
	}
}

// render does the work of main on the manifest's bytes.
func render(raw []byte, olmImage, opmImage string) ([]byte, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var out bytes.Buffer
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("decoding olm.yaml: %w", err)
		}
		if obj == nil {
			continue
		}
		u := unstructured.Unstructured{Object: obj}
		switch u.GetKind() {
		case "ClusterServiceVersion", "CatalogSource":
			continue // packageserver (needs API aggregation) and operatorhub.io (needs the internet)
		case "Deployment":
			if err := localize(&u, olmImage, opmImage); err != nil {
				return nil, err
			}
		}
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, fmt.Errorf("encoding %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out.Bytes(), nil
}

// localize points a Deployment's containers at the local OLM image; the catalog operator's arguments are
// rewritten whole.
func localize(u *unstructured.Unstructured, olmImage, opmImage string) error {
	containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return fmt.Errorf("deployment %s: %w", u.GetName(), err)
	}
	for i := range containers {
		c, ok := containers[i].(map[string]any)
		if !ok {
			return fmt.Errorf("deployment %s: container %d is not an object", u.GetName(), i)
		}
		c["image"] = olmImage
		c["imagePullPolicy"] = "IfNotPresent"
		if cmd, _ := c["command"].([]any); len(cmd) == 1 && cmd[0] == "/bin/catalog" {
			// The released manifest writes these with one dash, which this build refuses ("unknown shorthand flag").
			c["args"] = []any{
				"--namespace", u.GetNamespace(),
				"--configmapServerImage=" + opmImage,
				"--opmImage=" + opmImage,
				"--util-image=" + olmImage,
			}
		}
		for _, a := range c["args"].([]any) {
			if s, _ := a.(string); strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") {
				return fmt.Errorf("deployment %s: single-dash flag %q left", u.GetName(), s)
			}
		}
		containers[i] = c
	}
	return unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
}
