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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const committedTemplate = "../../config/catalog/operator101.yaml"

// The committed template is exactly what add-release writes, so a release changes only its own lines.
func TestTemplateIsCanonical(t *testing.T) {
	raw, err := os.ReadFile(committedTemplate)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := LoadTemplate(committedTemplate)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "t.yaml")
	if err := tmpl.Save(out); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if string(got) != string(raw) {
		t.Errorf("%s is not in bundletool's form; load and save gives:\n%s", committedTemplate, got)
	}
	if !strings.HasPrefix(string(got), "# The catalog template") {
		t.Error("the header comment was lost")
	}
}

func template(t *testing.T, channel string) *Template {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.yaml")
	doc := "# head\nschema: olm.template.basic\nentries:\n- schema: olm.package\n  name: p\n  defaultChannel: stable\n" + channel
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	tmpl, err := LoadTemplate(path)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func TestUpgradeEdge(t *testing.T) {
	released := "- schema: olm.channel\n  package: p\n  name: stable\n  entries:\n  - name: p.v0.1.0\n" +
		"  - name: p.v0.2.0\n    replaces: p.v0.1.0\n    skipRange: '>=0.1.0 <0.2.0'\n"
	for _, tc := range []struct {
		name, channel, version string
		want                   Edge
		wantErr                bool
	}{
		{"first release", "- schema: olm.channel\n  package: p\n  name: stable\n  entries: []\n", "0.1.0", Edge{}, false},
		{"released, first", released, "0.1.0", Edge{}, false},
		{"released, with its edge", released, "0.2.0", Edge{Replaces: "p.v0.1.0", SkipRange: ">=0.1.0 <0.2.0"}, false},
		{"next: replaces the newest, skips all", released, "0.3.0", Edge{Replaces: "p.v0.2.0", SkipRange: ">=0.1.0 <0.3.0"}, false},
		{"older than a release", released, "0.1.5", Edge{}, true},
		{"not semver", released, "next", Edge{}, true},
		{"no default channel", "- schema: olm.channel\n  package: p\n  name: alpha\n  entries: []\n", "0.1.0", Edge{}, true},
		{"channels disagree", released + "- schema: olm.channel\n  package: p\n  name: fast\n  entries:\n  - name: p.v0.2.0\n", "0.2.0", Edge{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := template(t, tc.channel).UpgradeEdge("p", tc.version)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("edge %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestAddRelease(t *testing.T) {
	tmpl := template(t, "- schema: olm.channel\n  package: p\n  name: stable\n  entries: []\n")
	const img1 = "r/p-bundle@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	const img2 = "r/p-bundle@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	if err := tmpl.AddRelease("p.v0.1.0", "r/p-bundle:v0.1.0", Edge{}); err == nil {
		t.Error("a release by tag was accepted")
	}
	if err := tmpl.AddRelease("p.v0.1.0", img1, Edge{}); err != nil {
		t.Fatal(err)
	}
	if err := tmpl.AddRelease("p.v0.1.0", img2, Edge{}); err == nil {
		t.Error("a version released twice was accepted")
	}
	if err := tmpl.AddRelease("p.v0.2.0", img1, Edge{}); err == nil {
		t.Error("one image released as two versions was accepted")
	}
	edge, err := tmpl.UpgradeEdge("p", "0.2.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := tmpl.AddRelease("p.v0.2.0", img2, edge); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.yaml")
	if err := tmpl.Save(path); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `# head
entries:
- defaultChannel: stable
  name: p
  schema: olm.package
- entries:
  - name: p.v0.1.0
  - name: p.v0.2.0
    replaces: p.v0.1.0
    skipRange: '>=0.1.0 <0.2.0'
  name: stable
  package: p
  schema: olm.channel
- image: ` + img1 + `
  schema: olm.bundle
- image: ` + img2 + `
  schema: olm.bundle
schema: olm.template.basic
`
	if string(got) != want {
		t.Errorf("saved:\n%s\nwant:\n%s", got, want)
	}
}

// TestSplit: the template parts into its other entries and its bundle images, in order; a bundle entry with more
// than an image (which the basic template would not take either) is refused.
func TestSplit(t *testing.T) {
	tmpl := template(t, "- schema: olm.channel\n  package: p\n  name: stable\n  entries:\n  - name: p.v0.1.0\n")
	tmpl.Entries = append(tmpl.Entries,
		map[string]any{"schema": "olm.bundle", "image": "r/b@sha256:1"},
		map[string]any{"schema": "olm.bundle", "image": "q/b@sha256:2"})
	entries, images, err := tmpl.Split()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(images, []string{"r/b@sha256:1", "q/b@sha256:2"}) {
		t.Errorf("images %v", images)
	}
	if strings.Contains(string(entries), "olm.bundle") || !strings.Contains(string(entries), "schema: olm.channel") ||
		!strings.HasPrefix(string(entries), "---\n") {
		t.Errorf("entries:\n%s", entries)
	}
	tmpl.Entries = append(tmpl.Entries, map[string]any{"schema": "olm.bundle", "image": "x@sha256:3", "name": "x"})
	if _, _, err := tmpl.Split(); err == nil {
		t.Error("a bundle entry with a name was taken")
	}
}

// TestAddBundle: a developer's bundle, as opm renders it, joins a rendered catalog as the next version of the
// default channel (replacing the newest release, skipping all); a version the catalog holds is left as released;
// an older version or another package is refused.
func TestAddBundle(t *testing.T) {
	catalog := func() []map[string]any {
		return template(t, "- schema: olm.channel\n  package: p\n  name: stable\n  entries:\n  - name: p.v0.1.0\n"+
			"  - name: p.v0.2.0\n    replaces: p.v0.1.0\n- schema: olm.bundle\n  name: p.v0.2.0\n  package: p\n  image: r/b@sha256:2\n").Entries
	}
	bundle := func(pkg, version string) map[string]any {
		return map[string]any{"schema": "olm.bundle", "name": pkg + ".v" + version, "package": pkg, "image": "dev/b:v" + version,
			"properties": []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": pkg, "version": version}}}}
	}
	docs, added, err := AddBundle(catalog(), bundle("p", "0.3.0"))
	if err != nil || !added {
		t.Fatalf("added %v, err %v", added, err)
	}
	if last := docs[len(docs)-1]; last["image"] != "dev/b:v0.3.0" {
		t.Errorf("the last document is %v, want the developer's bundle", last)
	}
	entries, err := entriesOf(docs[1])
	if err != nil {
		t.Fatal(err)
	}
	want := channelEntry{Name: "p.v0.3.0", Edge: Edge{Replaces: "p.v0.2.0", SkipRange: ">=0.1.0 <0.3.0"}}
	if len(entries) != 3 || entries[2] != want {
		t.Errorf("channel entries %+v, want the released two and %+v", entries, want)
	}

	before := catalog()
	docs, added, err = AddBundle(before, bundle("p", "0.2.0"))
	if err != nil || added || len(docs) != len(before) {
		t.Errorf("a released version: added %v, %d documents (want %d), err %v", added, len(docs), len(before), err)
	}
	for name, b := range map[string]map[string]any{
		"older than a release": bundle("p", "0.1.5"),
		"another package":      bundle("q", "0.3.0"),
		"no version":           {"schema": "olm.bundle", "name": "p.v0.3.0", "package": "p"},
		"not a bundle":         {"schema": "olm.package", "name": "p"},
	} {
		if _, _, err := AddBundle(catalog(), b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
