/*
Copyright 2026 The operator101 Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command csvgen fills in the parts of operator101's ClusterServiceVersion that operator-sdk cannot derive
// without operator-sdk markers in the API types:
//
//	csvgen descriptors -csv BASE -crds DIR
//	    rewrites spec.customresourcedefinitions.owned of the CSV base from the CRDs in DIR: one entry per kind
//	    with display name, description, the child resources it manages, and a spec or status descriptor for
//	    every field of the schema (x-descriptors chosen from the field's name and type). Run it after the
//	    CRDs change (make bundle does), so the descriptors follow the API types.
//	csvgen finalize -csv BUNDLE_CSV -version V -image IMG -related name=image,...
//	    sets the bundle CSV's name and version, the operator image (deployment and containerImage),
//	    relatedImages, and the upgrade edge the catalog template gives the version.
//	csvgen stamp -bundle DIR -created-at RFC3339
//	    sets the CSV's createdAt: a release stamps its commit's time, so the bundle stays reproducible and a
//	    development bundle (no createdAt) does not change with every commit.
//	csvgen add-release -template F -bundle DIR -image IMG@sha256:D
//	    records a released bundle in the catalog template (see catalog.go).
//
// Every command is deterministic: the same input gives byte-identical output.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: csvgen descriptors|finalize|stamp|add-release [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "descriptors":
		err = runDescriptors(os.Args[2:])
	case "finalize":
		err = runFinalize(os.Args[2:])
	case "stamp":
		err = runStamp(os.Args[2:])
	case "add-release":
		err = runAddRelease(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (descriptors, finalize, stamp, add-release)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "csvgen: %v\n", err)
		os.Exit(1)
	}
}

func runDescriptors(args []string) error {
	fs := newFlagSet("descriptors")
	csvPath := fs.String("csv", "config/manifests/bases/operator101.clusterserviceversion.yaml", "the CSV base to rewrite")
	crdDir := fs.String("crds", "config/crd/bases", "directory of the CRDs")
	_ = fs.Parse(args)

	crds, err := LoadCRDs(*crdDir)
	if err != nil {
		return err
	}
	csv, err := readYAML(*csvPath)
	if err != nil {
		return err
	}
	owned := make([]any, 0, len(crds))
	for _, crd := range crds {
		d, err := OwnedDescription(crd)
		if err != nil {
			return err
		}
		owned = append(owned, d)
	}
	spec := mapAt(csv, "spec")
	if len(owned) == 0 {
		spec["customresourcedefinitions"] = map[string]any{}
	} else {
		spec["customresourcedefinitions"] = map[string]any{"owned": owned}
	}
	return writeYAML(*csvPath, csv)
}

func runFinalize(args []string) error {
	fs := newFlagSet("finalize")
	dir := fs.String("bundle", "bundle", "the bundle directory to finalize")
	version := fs.String("version", "", "the bundle version, e.g. 0.2.0")
	image := fs.String("image", "", "the operator image")
	related := fs.String("related", "", "more related images besides the operator, its RELATED_IMAGE_ variables and the examples' images: name=image,...")
	scImage := fs.String("scorecard-image", "", "the image of the operator101 scorecard suite's tests")
	catalog := fs.String("catalog", "config/catalog/operator101.yaml",
		"the catalog template: it gives the version's replaces and olm.skipRange (see Template.UpgradeEdge)")
	_ = fs.Parse(args)
	if *version == "" || *image == "" {
		return fmt.Errorf("finalize needs -version and -image")
	}
	csv, err := readYAML(csvPath(*dir))
	if err != nil {
		return err
	}
	rel, err := parseRelated(*related)
	if err != nil {
		return err
	}
	if err := Finalize(csv, *version, *image, rel); err != nil {
		return err
	}
	tmpl, err := LoadTemplate(*catalog)
	if err != nil {
		return err
	}
	edge, err := tmpl.UpgradeEdge("operator101", *version)
	if err != nil {
		return fmt.Errorf("%s: %w", *catalog, err)
	}
	SetUpgradeEdge(csv, edge)
	if err := writeYAML(csvPath(*dir), csv); err != nil {
		return err
	}
	if *scImage == "" {
		return nil
	}
	scPath := filepath.Join(*dir, "tests", "scorecard", "config.yaml")
	sc, err := readYAML(scPath)
	if err != nil {
		return err
	}
	if err := SetScorecardImage(sc, "operator101", *scImage); err != nil {
		return err
	}
	return writeYAML(scPath, sc)
}

func runStamp(args []string) error {
	fs := newFlagSet("stamp")
	dir := fs.String("bundle", "bundle", "the bundle directory")
	at := fs.String("created-at", "", "the creation time, RFC 3339 (a release gives its commit's time)")
	_ = fs.Parse(args)
	csv, err := readYAML(csvPath(*dir))
	if err != nil {
		return err
	}
	if err := Stamp(csv, *at); err != nil {
		return err
	}
	return writeYAML(csvPath(*dir), csv)
}

// Stamp sets the CSV's createdAt annotation to at, which must be an RFC 3339 time in UTC.
func Stamp(csv map[string]any, at string) error {
	t, err := time.Parse(time.RFC3339, at)
	if err != nil || t.Location() != time.UTC {
		return fmt.Errorf("created-at %q: want an RFC 3339 time in UTC, e.g. 2026-11-24T01:44:47Z", at)
	}
	mapAt(mapAt(csv, "metadata"), "annotations")["createdAt"] = t.Format(time.RFC3339)
	return nil
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

// SetScorecardImage sets the image of every scorecard test labelled suite=SUITE.
func SetScorecardImage(cfg map[string]any, suite, image string) error {
	n := 0
	stages, _ := cfg["stages"].([]any)
	for _, st := range stages {
		tests, _ := st.(map[string]any)["tests"].([]any)
		for _, t := range tests {
			tm := t.(map[string]any)
			if labels, _ := tm["labels"].(map[string]any); labels["suite"] == suite {
				tm["image"] = image
				n++
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("no scorecard test with label suite=%s", suite)
	}
	return nil
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

// Finalize sets the CSV's name, version, operator image and related images.
func Finalize(csv map[string]any, version, image string, related []RelatedImage) error {
	meta := mapAt(csv, "metadata")
	meta["name"] = "operator101.v" + version
	ann := mapAt(meta, "annotations")
	ann["containerImage"] = image
	// A creation time would make every regeneration differ: only a release stamps one (its commit's time).
	delete(ann, "createdAt")
	spec := mapAt(csv, "spec")
	spec["version"] = version

	found := false
	install := mapAt(spec, "install")
	deps, _ := mapAt(install, "spec")["deployments"].([]any)
	for _, d := range deps {
		podSpec := mapAt(mapAt(mapAt(d.(map[string]any), "spec"), "template"), "spec")
		containers, _ := podSpec["containers"].([]any)
		for _, c := range containers {
			cm := c.(map[string]any)
			if cm["name"] == "manager" {
				cm["image"] = image
				found = true
			}
		}
	}
	if !found {
		return fmt.Errorf("no container named manager in the CSV's deployments")
	}
	rel, err := relatedImages(csv, image, related)
	if err != nil {
		return err
	}
	images := make([]any, 0, len(rel))
	for _, r := range rel {
		images = append(images, map[string]any{"name": r.Name, "image": r.Image})
	}
	spec["relatedImages"] = images
	return nil
}

// relatedImages is every image the bundle may run, for a mirror to copy: the operator; the related images the CSV
// has (operator-sdk generate bundle lists each RELATED_IMAGE_<NAME> variable of the manager, an image a controller
// runs by default, as <name>); each image an example of alm-examples names, fully qualified, as <kind>-<group's
// first label>; then extra. An image is listed once.
func relatedImages(csv map[string]any, operator string, extra []RelatedImage) ([]RelatedImage, error) {
	out := []RelatedImage{{Name: "operator101", Image: operator}}
	seen := map[string]bool{operator: true}
	add := func(name, img string) {
		if !seen[img] {
			seen[img] = true
			out = append(out, RelatedImage{Name: name, Image: img})
		}
	}
	old, _ := mapAt(csv, "spec")["relatedImages"].([]any)
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
			return nil, fmt.Errorf("alm-examples: %w", err)
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
	return out, nil
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
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// LoadCRDs reads every CRD in dir, sorted by name.
func LoadCRDs(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", f, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		out = append(out, crd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// kindInfo is what the CRDs cannot tell: a display name and the kinds of the objects a controller creates or
// reads for each CR. Every controller records Events about its objects (events.k8s.io/v1).
var kindInfo = map[string]struct {
	display   string
	resources []resourceRef
}{
	"MyWeb": {"My Web", []resourceRef{
		{"ConfigMap", "v1", "configmaps"}, {"Deployment", "v1", "deployments"}, {"Service", "v1", "services"}, event,
	}},
	"AppService": {"App Service", []resourceRef{{"Deployment", "v1", "deployments"}, {"Service", "v1", "services"}, event}},
	"At":         {"At (scheduled command)", []resourceRef{{"Pod", "v1", "pods"}, event}},
	"DatabaseUser": {"Database User", []resourceRef{
		{"Secret", "v1", "secrets"}, event,
	}},
	// A target's admin Secret; no Events (those of a cluster-scoped object would go to "default").
	"DatabaseTarget": {"Database Target", []resourceRef{{"Secret", "v1", "secrets"}}},
}

// displayByCRD names the CRDs whose kind another group serves too.
var displayByCRD = map[string]string{
	"appservices.batch.schwarzeni.github.com": "App Service (batch.schwarzeni.github.com)",
}

type resourceRef struct{ kind, version, name string }

var event = resourceRef{"Event", "v1", "events"}

// OwnedDescription builds the CSV's description of one owned CRD from its storage version's schema.
func OwnedDescription(crd *apiextensionsv1.CustomResourceDefinition) (map[string]any, error) {
	var ver *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Storage {
			ver = &crd.Spec.Versions[i]
		}
	}
	if ver == nil || ver.Schema == nil || ver.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CRD %s has no storage version with a schema", crd.Name)
	}
	kind := crd.Spec.Names.Kind
	root := ver.Schema.OpenAPIV3Schema
	info, ok := kindInfo[kind]
	display := info.display
	if !ok {
		display = humanize(kind)
	}
	if d, ok := displayByCRD[crd.Name]; ok {
		display = d // a kind served by two groups
	}
	d := map[string]any{
		"name":        crd.Name,
		"version":     ver.Name,
		"kind":        kind,
		"displayName": display,
		"description": firstParagraph(root.Description),
	}
	if d["description"] == "" {
		d["description"] = display
	}
	if len(info.resources) > 0 {
		var rs []any
		for _, r := range info.resources {
			rs = append(rs, map[string]any{"kind": r.kind, "version": r.version, "name": r.name})
		}
		d["resources"] = rs
	}
	if s, ok := root.Properties["spec"]; ok {
		d["specDescriptors"] = toAny(Descriptors(&s, specField))
	}
	if s, ok := root.Properties["status"]; ok {
		d["statusDescriptors"] = toAny(Descriptors(&s, statusField))
	}
	return d, nil
}

// Descriptor is one spec or status descriptor.
type Descriptor struct {
	Path, DisplayName, Description string
	XDescriptors                   []string
}

func toAny(ds []Descriptor) []any {
	out := make([]any, 0, len(ds))
	for _, d := range ds {
		m := map[string]any{"path": d.Path, "displayName": d.DisplayName}
		if d.Description != "" {
			m["description"] = d.Description
		}
		xs := make([]any, 0, len(d.XDescriptors))
		for _, x := range d.XDescriptors {
			xs = append(xs, x)
		}
		m["x-descriptors"] = xs
		out = append(out, m)
	}
	return out
}

type side int

const (
	specField side = iota
	statusField
)

const (
	ui      = "urn:alm:descriptor:com.tectonic.ui:"
	maxDeep = 3
)

// Descriptors walks a spec or status schema and returns a descriptor for every field: each property, the
// properties of nested objects (dotted paths), and the fields of array items (path[0].field), in schema order
// (sorted by name).
func Descriptors(s *apiextensionsv1.JSONSchemaProps, sd side) []Descriptor {
	var out []Descriptor
	walk(s, "", nil, sd, 1, &out)
	return out
}

func walk(s *apiextensionsv1.JSONSchemaProps, prefix string, groups []string, sd side, depth int,
	out *[]Descriptor) {
	for _, name := range sortedKeys(s.Properties) {
		p := s.Properties[name]
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		xs := append(append([]string{}, groups...), xDescriptors(name, &p, sd)...)
		if sd == specField && name == "name" && isSecretKeySelector(s) {
			// The Secret's name in a Secret key selector: the console offers the namespace's Secrets.
			xs = append(append([]string{}, groups...), "urn:alm:descriptor:io.kubernetes:Secret")
		}
		*out = append(*out, Descriptor{
			Path:         path,
			DisplayName:  displayName(name),
			Description:  firstParagraph(p.Description),
			XDescriptors: xs,
		})
		if depth >= maxDeep || stopsWalk(name, &p) {
			continue
		}
		switch {
		case p.Type == "object" && len(p.Properties) > 0:
			var g []string
			if sd == specField {
				g = []string{ui + "fieldGroup:" + name}
			}
			walk(&p, path, g, sd, depth+1, out)
		case p.Type == "array" && p.Items != nil && p.Items.Schema != nil && len(p.Items.Schema.Properties) > 0:
			var g []string
			if sd == specField {
				g = []string{ui + "arrayFieldGroup:" + name}
			}
			// Fields of the items, one level only: deeper structures are described by their parent.
			walk(p.Items.Schema, path+"[0]", g, sd, maxDeep, out)
		}
	}
}

// stopsWalk tells whether a field is described as a whole (a widget that edits all of it).
func stopsWalk(name string, p *apiextensionsv1.JSONSchemaProps) bool {
	switch name {
	case "conditions", "resources":
		return true
	}
	return false
}

func isSecretKeySelector(p *apiextensionsv1.JSONSchemaProps) bool {
	if p.Type != "object" {
		return false
	}
	_, hasName := p.Properties["name"]
	_, hasKey := p.Properties["key"]
	return hasName && hasKey && len(p.Properties) <= 3
}

// xDescriptors picks the UI widgets of a field from its name and type.
func xDescriptors(name string, p *apiextensionsv1.JSONSchemaProps, sd side) []string {
	lname := strings.ToLower(name)
	if sd == statusField {
		switch {
		case lname == "conditions":
			return []string{"urn:alm:descriptor:io.kubernetes.conditions"}
		case lname == "phase":
			return []string{"urn:alm:descriptor:io.kubernetes.phase"}
		case lname == "url" || strings.HasSuffix(lname, "url"):
			return []string{"urn:alm:descriptor:org.w3:link"}
		case strings.Contains(lname, "replicas"):
			return []string{"urn:alm:descriptor:com.tectonic.ui:podCount"}
		case p.Format == "date-time":
			return []string{"urn:alm:descriptor:timestamp"}
		}
		return []string{"urn:alm:descriptor:text"}
	}
	switch {
	case lname == "replicas" || lname == "size":
		return []string{ui + "podCount"}
	case lname == "resources" && p.Type == "object":
		return []string{ui + "resourceRequirements"}
	case lname == "image" || strings.HasSuffix(lname, "image"):
		return []string{ui + "text"}
	}
	switch p.Type {
	case "boolean":
		return []string{ui + "booleanSwitch"}
	case "integer", "number":
		return []string{ui + "number"}
	case "string":
		if len(p.Enum) > 0 {
			var xs []string
			for _, e := range p.Enum {
				v := strings.Trim(string(e.Raw), `"`)
				xs = append(xs, ui+"select:"+v)
			}
			return xs
		}
		if p.Format == "password" {
			return []string{ui + "password"}
		}
		return []string{ui + "text"}
	case "object":
		if len(p.Properties) > 0 {
			return []string{ui + "fieldGroup:" + name}
		}
		return []string{ui + "text"}
	case "array":
		if p.Items != nil && p.Items.Schema != nil && len(p.Items.Schema.Properties) > 0 {
			return []string{ui + "arrayFieldGroup:" + name}
		}
		return []string{ui + "text"}
	}
	// int-or-string and untyped fields
	return []string{ui + "text"}
}

// displayNames overrides the humanized field name where it reads badly.
var displayNames = map[string]string{
	"pageContentHtml":         "Page Content (HTML)",
	"nodePortNumber":          "Node Port",
	"nodePort":                "Node Port",
	"targetPort":              "Target Port",
	"url":                     "URL",
	"ttlSecondsAfterFinished": "TTL Seconds After Finished",
	"observedGeneration":      "Observed Generation",
	"maxUserConnections":      "Max User Connections",
	"envs":                    "Environment Variables",
	"env":                     "Environment Variables",
}

func displayName(field string) string {
	if d, ok := displayNames[field]; ok {
		return d
	}
	return humanize(field)
}

// humanize turns camelCase into Title Case words: "readyReplicas" -> "Ready Replicas".
func humanize(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if i == 0 {
			b.WriteRune(unicode.ToUpper(r))
			continue
		}
		prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
		nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if unicode.IsUpper(r) && (prevLower || (unicode.IsUpper(rs[i-1]) && nextLower)) {
			b.WriteRune(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// firstParagraph returns the first paragraph of a schema description with its whitespace collapsed.
func firstParagraph(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n\n"); i >= 0 {
		s = s[:i]
	}
	return strings.Join(strings.Fields(s), " ")
}

func sortedKeys(m map[string]apiextensionsv1.JSONSchemaProps) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
