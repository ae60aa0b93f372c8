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

// Command bundletool does the few things to operator101's bundle and catalog template that operator-sdk v1.33
// and opm v1.64 cannot. operator-sdk generates the bundle (make bundle: the descriptors from the
// +operator-sdk:csv markers in api/, name, version, deployment, RBAC, alm-examples, the RELATED_IMAGE_*
// variables in relatedImages); kustomize sets the images. What is left, and why:
//
//	bundletool created-at -bundle DIR [-at RFC3339]
//	    removes the CSV's createdAt, or sets it to a given time (a release's commit time): operator-sdk
//	    generate bundle writes the wall-clock time on every run, so its bundle is never reproducible.
//	bundletool related-images -bundle DIR [-extra name=image,...]
//	    adds the operator image and every image an alm-examples object names to relatedImages: operator-sdk
//	    lists only the manager's RELATED_IMAGE_* variables and overwrites any relatedImages of the CSV base.
//	bundletool upgrade-edge -bundle DIR [-catalog F]
//	    writes spec.replaces and olm.skipRange from the releases in the catalog template: generate bundle has
//	    no flag for either, and the edge depends on what is released, which only the template knows.
//	bundletool metadata -bundle DIR [-dockerfile F] -set key=value,...
//	    adds annotations to metadata/annotations.yaml and, as labels, to the bundle's Dockerfile
//	    (metadata.go): generate bundle rewrites both and has no flag for the com.redhat.openshift.versions
//	    annotation OpenShift's catalogs read.
//	bundletool add-release -template F -bundle DIR -image IMG@sha256:D
//	    records a released bundle in the catalog template (catalog.go): opm renders a basic template but has
//	    no command that adds a bundle to one.
//	bundletool add-bundle -catalog F -bundle RENDERED
//	    adds a bundle image that opm rendered to a rendered catalog (catalog.go), as the next version of the
//	    default channel (make catalog-build: the committed catalog and the developer's bundle); opm has no
//	    command that adds a channel entry.
//	bundletool split-template -template F -entries OUT
//	    writes the template's entries other than olm.bundle to OUT and prints its bundle images: opm renders
//	    every image of a template with one TLS rule, so hack/catalog.sh renders each with its registry's own.
//
// Every command is deterministic: the same input gives byte-identical output.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bundletool created-at|related-images|upgrade-edge|metadata|add-release|add-bundle|split-template [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "created-at":
		err = runCreatedAt(os.Args[2:])
	case "related-images":
		err = runRelatedImages(os.Args[2:])
	case "upgrade-edge":
		err = runUpgradeEdge(os.Args[2:])
	case "metadata":
		err = runMetadata(os.Args[2:])
	case "add-release":
		err = runAddRelease(os.Args[2:])
	case "add-bundle":
		err = runAddBundle(os.Args[2:])
	case "split-template":
		err = runSplitTemplate(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (created-at, related-images, upgrade-edge, metadata, add-release, add-bundle, split-template)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bundletool: %v\n", err)
		os.Exit(1)
	}
}

// editCSV reads the bundle's CSV, applies edit and writes it back.
func editCSV(dir string, edit func(csv map[string]any) error) error {
	path := csvPath(dir)
	csv, err := readYAML(path)
	if err != nil {
		return err
	}
	if err := edit(csv); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return writeYAML(path, csv)
}

func runCreatedAt(args []string) error {
	fs := newFlagSet("created-at")
	dir := fs.String("bundle", "bundle", "the bundle directory")
	at := fs.String("at", "", "the creation time, RFC 3339 in UTC (a release gives its commit's time); empty removes createdAt")
	_ = fs.Parse(args)
	return editCSV(*dir, func(csv map[string]any) error { return SetCreatedAt(csv, *at) })
}

// SetCreatedAt sets the CSV's createdAt annotation to at, an RFC 3339 time in UTC, or removes it when at is
// empty: a development bundle has none, so it does not change with every run.
func SetCreatedAt(csv map[string]any, at string) error {
	ann := mapAt(mapAt(csv, "metadata"), "annotations")
	if at == "" {
		delete(ann, "createdAt")
		return nil
	}
	t, err := time.Parse(time.RFC3339, at)
	if err != nil || t.Location() != time.UTC {
		return fmt.Errorf("created-at %q: want an RFC 3339 time in UTC, e.g. 2026-11-24T01:44:47Z", at)
	}
	ann["createdAt"] = t.Format(time.RFC3339)
	return nil
}

func runRelatedImages(args []string) error {
	fs := newFlagSet("related-images")
	dir := fs.String("bundle", "bundle", "the bundle directory")
	extra := fs.String("extra", "", "more related images: name=image,...")
	_ = fs.Parse(args)
	rel, err := parseRelated(*extra)
	if err != nil {
		return err
	}
	return editCSV(*dir, func(csv map[string]any) error { return AddRelatedImages(csv, rel) })
}

func runUpgradeEdge(args []string) error {
	fs := newFlagSet("upgrade-edge")
	dir := fs.String("bundle", "bundle", "the bundle directory")
	catalog := fs.String("catalog", "config/catalog/operator101.yaml",
		"the catalog template: it gives the version's replaces and olm.skipRange (see Template.UpgradeEdge)")
	_ = fs.Parse(args)
	tmpl, err := LoadTemplate(*catalog)
	if err != nil {
		return err
	}
	return editCSV(*dir, func(csv map[string]any) error {
		version, _ := mapAt(csv, "spec")["version"].(string)
		if version == "" {
			return fmt.Errorf("no spec.version")
		}
		edge, err := tmpl.UpgradeEdge("operator101", version)
		if err != nil {
			return fmt.Errorf("%s: %w", *catalog, err)
		}
		SetUpgradeEdge(csv, edge)
		return nil
	})
}

// Edge is where a version sits in the upgrade graph: the CSV it replaces and the range it skips.
type Edge struct {
	Replaces  string `json:"replaces,omitempty"`
	SkipRange string `json:"skipRange,omitempty"`
}

// SetUpgradeEdge writes spec.replaces and the olm.skipRange annotation, removing them when the edge has none.
func SetUpgradeEdge(csv map[string]any, e Edge) {
	spec := mapAt(csv, "spec")
	ann := mapAt(mapAt(csv, "metadata"), "annotations")
	delete(spec, "replaces")
	delete(ann, "olm.skipRange")
	if e.Replaces != "" {
		spec["replaces"] = e.Replaces
	}
	if e.SkipRange != "" {
		ann["olm.skipRange"] = e.SkipRange
	}
}

// RelatedImage is one entry of spec.relatedImages.
type RelatedImage struct{ Name, Image string }

func parseRelated(s string) ([]RelatedImage, error) {
	var out []RelatedImage
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, img, ok := strings.Cut(part, "=")
		if !ok || name == "" || img == "" {
			return nil, fmt.Errorf("related image %q: want name=image", part)
		}
		out = append(out, RelatedImage{Name: name, Image: img})
	}
	return out, nil
}

// AddRelatedImages makes relatedImages every image the bundle may run, for a mirror to copy: the operator (the
// image of the CSV's manager container) as operator101; the related images operator-sdk listed (each
// RELATED_IMAGE_<NAME> variable of the manager, an image a controller runs by default, as <name>); each image
// an example of alm-examples names, fully qualified, as <kind>-<group's first label>; then extra. An image is
// listed once.
func AddRelatedImages(csv map[string]any, extra []RelatedImage) error {
	operator, err := managerImage(csv)
	if err != nil {
		return err
	}
	out := []RelatedImage{{Name: "operator101", Image: operator}}
	seen := map[string]bool{operator: true}
	add := func(name, img string) {
		if !seen[img] {
			seen[img] = true
			out = append(out, RelatedImage{Name: name, Image: img})
		}
	}
	spec := mapAt(csv, "spec")
	old, _ := spec["relatedImages"].([]any)
	for _, r := range old {
		rm, _ := r.(map[string]any)
		name, _ := rm["name"].(string)
		img, _ := rm["image"].(string)
		if name != "operator101" && img != "" {
			add(name, img)
		}
	}
	raw, _ := mapAt(mapAt(csv, "metadata"), "annotations")["alm-examples"].(string)
	var examples []struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       struct {
			Image string `json:"image"`
		} `json:"spec"`
	}
	if raw != "" {
		if err := yaml.Unmarshal([]byte(raw), &examples); err != nil {
			return fmt.Errorf("alm-examples: %w", err)
		}
	}
	for _, ex := range examples {
		if ex.Spec.Image == "" {
			continue
		}
		group, _, _ := strings.Cut(ex.APIVersion, "/")
		label, _, _ := strings.Cut(group, ".")
		add(strings.ToLower(ex.Kind)+"-"+label, qualifiedImage(ex.Spec.Image))
	}
	for _, r := range extra {
		add(r.Name, r.Image)
	}
	images := make([]any, 0, len(out))
	for _, r := range out {
		images = append(images, map[string]any{"name": r.Name, "image": r.Image})
	}
	spec["relatedImages"] = images
	return nil
}

// managerImage is the image of the container named manager in the CSV's deployments.
func managerImage(csv map[string]any) (string, error) {
	deps, _ := mapAt(mapAt(mapAt(csv, "spec"), "install"), "spec")["deployments"].([]any)
	for _, d := range deps {
		dm, _ := d.(map[string]any)
		podSpec := mapAt(mapAt(mapAt(dm, "spec"), "template"), "spec")
		containers, _ := podSpec["containers"].([]any)
		for _, c := range containers {
			cm, _ := c.(map[string]any)
			if img, _ := cm["image"].(string); cm["name"] == "manager" && img != "" {
				return img, nil
			}
		}
	}
	return "", fmt.Errorf("no container named manager, with an image, in the CSV's deployments")
}

// qualifiedImage is the full name a container runtime pulls for img: docker.io/library/ for a bare name,
// docker.io/ for a name without a registry, :latest without a tag or digest. (The few lines of
// distribution/reference's normalisation the examples need, rather than a new module.)
func qualifiedImage(img string) string {
	first, rest, hasSlash := strings.Cut(img, "/")
	switch {
	case !hasSlash:
		img = "docker.io/library/" + img
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		img = "docker.io/" + first + "/" + rest
	}
	last := img[strings.LastIndex(img, "/")+1:]
	if !strings.Contains(last, ":") && !strings.Contains(last, "@") {
		img += ":latest"
	}
	return img
}

// mapAt returns m[key] as a map, creating it when absent.
func mapAt(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	v := map[string]any{}
	m[key] = v
	return v
}

func newFlagSet(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ExitOnError) }

// csvPath is the CSV of the bundle in dir.
func csvPath(dir string) string {
	return filepath.Join(dir, "manifests", "operator101.clusterserviceversion.yaml")
}

func readYAML(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return m, nil
}

func writeYAML(path string, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return os.WriteFile(path, b, 0o644)
}
