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

// The catalog template (config/catalog/operator101.yaml) is opm's olm.template.basic: the package, its
// channels and one olm.bundle entry per release, each an image by digest. opm renders it (make catalog); opm has
// no command that adds a release to it, so bundletool does: add-release appends the bundle and its channel entry.

import (
	"fmt"
	"os"
	"strings"

	"github.com/blang/semver/v4"
	"sigs.k8s.io/yaml"
)

const basicTemplateSchema = "olm.template.basic"

// Template is an olm.template.basic document, with the comment lines that head its file.
type Template struct {
	Header  string
	Entries []map[string]any
}

// LoadTemplate reads an olm.template.basic file.
func LoadTemplate(path string) (*Template, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var header strings.Builder
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		header.WriteString(line)
	}
	var doc struct {
		Schema  string           `json:"schema"`
		Entries []map[string]any `json:"entries"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Schema != basicTemplateSchema {
		return nil, fmt.Errorf("%s: schema %q, want %s", path, doc.Schema, basicTemplateSchema)
	}
	return &Template{Header: header.String(), Entries: doc.Entries}, nil
}

// Save writes the template back, header first.
func (t *Template) Save(path string) error {
	body, err := yaml.Marshal(map[string]any{"schema": basicTemplateSchema, "entries": t.Entries})
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(t.Header), body...), 0o644)
}

// defaultChannel returns the entries of the package's default channel.
func (t *Template) defaultChannel() (map[string]any, error) {
	var def string
	for _, e := range t.Entries {
		if e["schema"] == "olm.package" {
			def, _ = e["defaultChannel"].(string)
		}
	}
	for _, e := range t.Entries {
		if e["schema"] == "olm.channel" && e["name"] == def {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no olm.channel named after the package's defaultChannel %q", def)
}

// channelEntry is one entry of an olm.channel.
type channelEntry struct {
	Name string `json:"name"`
	Edge `json:",inline"`
}

func entriesOf(channel map[string]any) ([]channelEntry, error) {
	raw, err := yaml.Marshal(channel["entries"])
	if err != nil {
		return nil, err
	}
	var out []channelEntry
	return out, yaml.Unmarshal(raw, &out)
}

// UpgradeEdge is where version sits in the upgrade graph. A released version has its entry in the channels
// (which must agree). A version not released yet comes next: it replaces the newest release of the default
// channel and skips every release from the oldest on, so any installed release upgrades to it in one step.
func (t *Template) UpgradeEdge(pkg, version string) (Edge, error) {
	name := pkg + ".v" + version
	var found *Edge
	for _, e := range t.Entries {
		if e["schema"] != "olm.channel" {
			continue
		}
		entries, err := entriesOf(e)
		if err != nil {
			return Edge{}, err
		}
		for _, ce := range entries {
			if ce.Name != name {
				continue
			}
			if found != nil && *found != ce.Edge {
				return Edge{}, fmt.Errorf("channels disagree on the upgrade edge of %s", name)
			}
			edge := ce.Edge
			found = &edge
		}
	}
	if found != nil {
		return *found, nil
	}
	v, err := semver.Parse(version)
	if err != nil {
		return Edge{}, fmt.Errorf("version %q: %w", version, err)
	}
	def, err := t.defaultChannel()
	if err != nil {
		return Edge{}, err
	}
	entries, err := entriesOf(def)
	if err != nil {
		return Edge{}, err
	}
	var oldest, newest *semver.Version
	for _, ce := range entries {
		ev, err := semver.Parse(strings.TrimPrefix(ce.Name, pkg+".v"))
		if err != nil {
			return Edge{}, fmt.Errorf("channel entry %q: %w", ce.Name, err)
		}
		if !ev.LT(v) {
			return Edge{}, fmt.Errorf("version %s is not newer than the release %s", version, ev)
		}
		if oldest == nil || ev.LT(*oldest) {
			oldest = &ev
		}
		if newest == nil || ev.GT(*newest) {
			newest = &ev
		}
	}
	if newest == nil {
		return Edge{}, nil // the first release
	}
	return Edge{Replaces: fmt.Sprintf("%s.v%s", pkg, newest), SkipRange: fmt.Sprintf(">=%s <%s", oldest, v)}, nil
}

// AddRelease records a released bundle: its olm.bundle entry (the image, by digest) and its entry in the
// default channel with the edge its CSV carries. A version is released once.
func (t *Template) AddRelease(name, image string, edge Edge) error {
	if !strings.Contains(image, "@sha256:") {
		return fmt.Errorf("release image %s: want IMAGE@sha256:DIGEST (a tag can move)", image)
	}
	def, err := t.defaultChannel()
	if err != nil {
		return err
	}
	entries, err := entriesOf(def)
	if err != nil {
		return err
	}
	for _, ce := range entries {
		if ce.Name == name {
			return fmt.Errorf("%s is released already", name)
		}
	}
	for _, e := range t.Entries {
		if e["schema"] == "olm.bundle" && e["image"] == image {
			return fmt.Errorf("%s is in the template already", image)
		}
	}
	appendEntry(def, name, edge)
	t.Entries = append(t.Entries, map[string]any{"schema": "olm.bundle", "image": image})
	return nil
}

// runAddRelease: bundletool add-release -template F -bundle DIR -image IMG@sha256:D
func runAddRelease(args []string) error {
	fs := newFlagSet("add-release")
	path := fs.String("template", "config/catalog/operator101.yaml", "the catalog template")
	dir := fs.String("bundle", "bundle", "the released bundle's directory (its CSV gives name and upgrade edge)")
	image := fs.String("image", "", "the released bundle image, by digest")
	_ = fs.Parse(args)
	csv, err := readYAML(csvPath(*dir))
	if err != nil {
		return err
	}
	name, _ := mapAt(csv, "metadata")["name"].(string)
	replaces, _ := mapAt(csv, "spec")["replaces"].(string)
	skip, _ := mapAt(mapAt(csv, "metadata"), "annotations")["olm.skipRange"].(string)
	t, err := LoadTemplate(*path)
	if err != nil {
		return err
	}
	if err := t.AddRelease(name, *image, Edge{Replaces: replaces, SkipRange: skip}); err != nil {
		return fmt.Errorf("%s: %w", *path, err)
	}
	return t.Save(*path)
}

// Split parts the template for rendering bundle by bundle: its entries other than olm.bundle, as a YAML stream
// of file-based catalog documents, and the bundle images in order. opm's render-template pulls every bundle of
// a template with one TLS rule (--use-http, --skip-tls-verify apply to all registries of a run); rendering
// each image with its own registry's rule and then `opm render DIR` gives the same catalog.
func (t *Template) Split() (entries []byte, images []string, err error) {
	var b strings.Builder
	for _, e := range t.Entries {
		if e["schema"] == "olm.bundle" {
			img, _ := e["image"].(string)
			if img == "" || len(e) != 2 {
				return nil, nil, fmt.Errorf("an olm.bundle entry must have an image and nothing else: %v", e)
			}
			images = append(images, img)
			continue
		}
		doc, err := yaml.Marshal(e)
		if err != nil {
			return nil, nil, err
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return []byte(b.String()), images, nil
}

// runSplitTemplate: bundletool split-template -template F -entries OUT: writes the non-bundle entries to OUT and
// prints the bundle images, one per line.
func runSplitTemplate(args []string) error {
	fs := newFlagSet("split-template")
	path := fs.String("template", "config/catalog/operator101.yaml", "the catalog template")
	out := fs.String("entries", "", "where to write the entries other than olm.bundle (a YAML stream)")
	_ = fs.Parse(args)
	if *out == "" {
		return fmt.Errorf("split-template: -entries is required")
	}
	t, err := LoadTemplate(*path)
	if err != nil {
		return err
	}
	entries, images, err := t.Split()
	if err != nil {
		return fmt.Errorf("%s: %w", *path, err)
	}
	if err := os.WriteFile(*out, entries, 0o644); err != nil {
		return err
	}
	for _, img := range images {
		fmt.Println(img)
	}
	return nil
}

// AddBundle adds a bundle that opm rendered (`opm render IMAGE`, one olm.bundle document) to a rendered
// file-based catalog (its documents, in order), as the next version of the default channel, with the edge
// UpgradeEdge gives a version not released yet. It reports false, changing nothing, when the catalog holds a
// bundle of that name already (a release: the catalog serves the released one). opm has no command that adds a
// channel entry to a catalog; `opm render` of the result puts it in opm's normal form.
func AddBundle(docs []map[string]any, bundle map[string]any) ([]map[string]any, bool, error) {
	if bundle["schema"] != "olm.bundle" {
		return nil, false, fmt.Errorf("schema %v, want one olm.bundle document (opm render IMAGE)", bundle["schema"])
	}
	name, _ := bundle["name"].(string)
	pkg, _ := bundle["package"].(string)
	var version string
	props, _ := bundle["properties"].([]any)
	for _, p := range props {
		if m, ok := p.(map[string]any); ok && m["type"] == "olm.package" {
			version, _ = mapAt(m, "value")["version"].(string)
		}
	}
	if name == "" || pkg == "" || version == "" {
		return nil, false, fmt.Errorf("bundle %q: no name, package or olm.package version", bundle["image"])
	}
	for _, d := range docs {
		if d["schema"] == "olm.bundle" && d["name"] == name {
			return docs, false, nil
		}
	}
	t := &Template{Entries: docs}
	edge, err := t.UpgradeEdge(pkg, version)
	if err != nil {
		return nil, false, fmt.Errorf("bundle %s: %w", name, err)
	}
	def, err := t.defaultChannel()
	if err != nil {
		return nil, false, err
	}
	if def["package"] != pkg {
		return nil, false, fmt.Errorf("bundle %s is of package %q, the catalog's channel of %v", name, pkg, def["package"])
	}
	appendEntry(def, name, edge)
	return append(t.Entries, bundle), true, nil
}

// readStream reads a YAML stream of documents (a rendered file-based catalog).
func readStream(path string) ([]map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var docs []map[string]any
	for _, part := range strings.Split("\n"+string(raw), "\n---\n") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		var d map[string]any
		if err := yaml.Unmarshal([]byte(part), &d); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// runAddBundle: bundletool add-bundle -catalog F -bundle RENDERED
func runAddBundle(args []string) error {
	fs := newFlagSet("add-bundle")
	path := fs.String("catalog", "", "a rendered file-based catalog (a YAML stream), rewritten with the bundle")
	rendered := fs.String("bundle", "", "the bundle as `opm render IMAGE -o yaml` gives it")
	_ = fs.Parse(args)
	if *path == "" || *rendered == "" {
		return fmt.Errorf("add-bundle: -catalog and -bundle are required")
	}
	docs, err := readStream(*path)
	if err != nil {
		return err
	}
	bundles, err := readStream(*rendered)
	if err != nil {
		return err
	}
	if len(bundles) != 1 {
		return fmt.Errorf("%s: %d documents, want the one olm.bundle of a bundle image", *rendered, len(bundles))
	}
	docs, added, err := AddBundle(docs, bundles[0])
	if err != nil {
		return fmt.Errorf("%s: %w", *path, err)
	}
	if !added {
		fmt.Fprintf(os.Stderr, "bundletool: %s is in the catalog already (a release): the catalog serves the released bundle, not %v\n",
			bundles[0]["name"], bundles[0]["image"])
		return nil
	}
	var b strings.Builder
	for _, d := range docs {
		doc, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return os.WriteFile(*path, []byte(b.String()), 0o644)
}

// appendEntry adds name to the channel def with the upgrade edge: replaces and skipRange, each only when set.
func appendEntry(def map[string]any, name string, edge Edge) {
	entry := map[string]any{"name": name}
	if edge.Replaces != "" {
		entry["replaces"] = edge.Replaces
	}
	if edge.SkipRange != "" {
		entry["skipRange"] = edge.SkipRange
	}
	list, _ := def["entries"].([]any)
	def["entries"] = append(list, entry)
}
