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
	"encoding/json"
	"fmt"
	"slices"

	bsemver "github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
)

// dependencyProperties are the properties that declare a dependency; OLM v1 resolves no dependencies and
// refuses a bundle that declares one.
var dependencyProperties = map[string]bool{"olm.package.required": true, "olm.gvk.required": true, "olm.constraint": true}

// checkNoDependencies: no bundle of the catalog, and not the bundle directory (metadata/dependencies.yaml,
// metadata/properties.yaml, the CSV's olm.properties annotation, which opm copies into the catalog), declares
// a dependency. Mirrors internal/operator-controller/resolve/validation.go (NoDependencyValidation) and
// docs/project/olmv1_limitations.md.
func checkNoDependencies(r *repo) []error {
	var errs []error
	for _, b := range r.catalog.bundles {
		for _, p := range b.Properties {
			if dependencyProperties[p.Type] {
				errs = append(errs, fmt.Errorf("catalog bundle %s (%s) declares a dependency with property %s", b.Name, b.file, p.Type))
			}
		}
	}
	for _, p := range r.bundle.properties {
		if dependencyProperties[p.Type] {
			errs = append(errs, fmt.Errorf("the bundle declares a dependency with property %s", p.Type))
		}
	}
	if r.bundle.dependenciesFile {
		errs = append(errs, fmt.Errorf("the bundle has metadata/dependencies.yaml: opm turns it into olm.*.required properties, which OLM v1 refuses"))
	}
	return errs
}

// checkCatalogBundles: the catalog has the bundle's package, every olm.bundle has an olm.package property
// with a semantic version (operator-controller orders and resolves bundles by it), and the bundle under
// bundle/ is in the catalog at its CSV's version. Mirrors internal/operator-controller/bundleutil/bundle.go
// (GetVersionAndRelease) and internal/operator-controller/resolve/catalog.go.
func checkCatalogBundles(r *repo) []error {
	var errs []error
	pkg := r.bundle.packageName
	found := 0
	for _, p := range r.catalog.packages {
		if p.Name == pkg {
			found++
		}
	}
	if found != 1 {
		errs = append(errs, fmt.Errorf("the catalog has %d olm.package %q, want 1", found, pkg))
	}
	csvVersion := r.bundle.csv.Spec.Version.String()
	inCatalog := false
	for _, b := range r.catalog.bundles {
		v := b.bundleVersion()
		if v == "" {
			errs = append(errs, fmt.Errorf("catalog bundle %s has no olm.package property with a version", b.Name))
			continue
		}
		if _, err := bsemver.Parse(v); err != nil {
			errs = append(errs, fmt.Errorf("catalog bundle %s version %q: %w", b.Name, v, err))
		}
		if b.Package == pkg && b.Name == r.bundle.csv.Name && v == csvVersion {
			inCatalog = true
		}
	}
	if !inCatalog {
		errs = append(errs, fmt.Errorf("bundle/ (%s, version %s) is not in the catalog", r.bundle.csv.Name, csvVersion))
	}
	return errs
}

// checkUpgradeGraph: in every channel, every bundle but the newest has a successor, as OLM v1 finds one:
// a channel entry that replaces it, skips it, or whose skipRange (blang/semver, as OLM v0 parses it)
// covers its version; an unparsable skipRange is no edge. Among successors OLM v1 takes the highest
// version, not the one nearest the channel head as OLM v0 does. Mirrors
// internal/operator-controller/catalogmetadata/filter/successors.go (legacySuccessor) and
// docs/concepts/upgrade-support.md.
func checkUpgradeGraph(r *repo) []error {
	var errs []error
	versions := map[string]bsemver.Version{}
	for _, b := range r.catalog.bundles {
		if v, err := bsemver.Parse(b.bundleVersion()); err == nil {
			versions[b.Name] = v
		}
	}
	for _, ch := range r.catalog.channels {
		if len(ch.Entries) == 0 {
			errs = append(errs, fmt.Errorf("channel %s is empty", ch.Name))
			continue
		}
		for _, e := range ch.Entries {
			if e.SkipRange == "" {
				continue
			}
			if _, err := bsemver.ParseRange(e.SkipRange); err != nil {
				errs = append(errs, fmt.Errorf("channel %s entry %s: skipRange %q does not parse, so OLM v1 sees no edge from it: %w", ch.Name, e.Name, e.SkipRange, err))
			}
		}
		head := ch.Entries[0].Name
		for _, e := range ch.Entries {
			if _, ok := versions[e.Name]; !ok {
				errs = append(errs, fmt.Errorf("channel %s entry %s is no bundle of the catalog with a version", ch.Name, e.Name))
				continue
			}
			if versions[e.Name].GT(versions[head]) {
				head = e.Name
			}
		}
		for _, e := range ch.Entries {
			v, ok := versions[e.Name]
			if !ok || e.Name == head {
				continue
			}
			if !hasSuccessor(ch.Entries, e.Name, v, versions) {
				errs = append(errs, fmt.Errorf("channel %s: %s has no successor (no entry replaces, skips or skipRanges it): OLM v1 cannot upgrade it to %s", ch.Name, e.Name, head))
			}
		}
	}
	return errs
}

// hasSuccessor tells whether an entry of the channel, of a higher version, is a successor of name.
func hasSuccessor(entries []fbcEntry, name string, v bsemver.Version, versions map[string]bsemver.Version) bool {
	for _, c := range entries {
		cv, ok := versions[c.Name]
		if !ok || !cv.GT(v) {
			continue
		}
		if c.Replaces == name || slices.Contains(c.Skips, name) {
			return true
		}
		if c.SkipRange != "" {
			if rng, err := bsemver.ParseRange(c.SkipRange); err == nil && rng(v) {
				return true
			}
		}
	}
	return false
}

// checkGraphMatchesCSV: OLM v1 reads upgrade edges only from the catalog's olm.channel entries, never from
// the CSV (spec.replaces, spec.skips, the olm.skipRange annotation); OLM v0 with a bundle-built index reads
// the CSV. The CSV under bundle/ must say what its entry in every channel says, so that both see one graph.
// Mirrors internal/operator-controller/catalogmetadata/filter/successors.go (which reads declcfg.ChannelEntry
// only).
func checkGraphMatchesCSV(r *repo) []error {
	// Every CSV the catalog will serve: the releases' (their olm.bundle.object) and bundle/'s.
	csvs := []*v1alpha1.ClusterServiceVersion{r.bundle.csv}
	var errs []error
	for _, b := range r.catalog.bundles {
		objs, err := b.bundleObjects()
		if err != nil {
			errs = append(errs, fmt.Errorf("catalog bundle %s: %w", b.Name, err))
			continue
		}
		for _, o := range objs {
			if o.GetKind() != "ClusterServiceVersion" || o.GetName() == r.bundle.csv.Name {
				continue
			}
			csv := &v1alpha1.ClusterServiceVersion{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, csv); err != nil {
				errs = append(errs, fmt.Errorf("catalog bundle %s: %w", b.Name, err))
				continue
			}
			csvs = append(csvs, csv)
		}
	}
	for _, csv := range csvs {
		seen := false
		for _, ch := range r.catalog.channels {
			for _, e := range ch.Entries {
				if e.Name != csv.Name {
					continue
				}
				seen = true
				if e.Replaces != csv.Spec.Replaces {
					errs = append(errs, fmt.Errorf("channel %s: %s replaces %q, the CSV's spec.replaces is %q", ch.Name, e.Name, e.Replaces, csv.Spec.Replaces))
				}
				if sr := csv.Annotations["olm.skipRange"]; e.SkipRange != sr {
					errs = append(errs, fmt.Errorf("channel %s: %s skipRange %q, the CSV's olm.skipRange annotation is %q", ch.Name, e.Name, e.SkipRange, sr))
				}
				if !slices.Equal(sortedCopy(e.Skips), sortedCopy(csv.Spec.Skips)) {
					errs = append(errs, fmt.Errorf("channel %s: %s skips %v, the CSV's spec.skips is %v", ch.Name, e.Name, e.Skips, csv.Spec.Skips))
				}
			}
		}
		if !seen {
			errs = append(errs, fmt.Errorf("no channel holds %s", csv.Name))
		}
	}
	return errs
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// checkClusterExtension: both ClusterExtensions (config/olmv1/ for operator-controller v1.11+, and
// config/olmv1/pre-v1.11/ for v1.0 to v1.10) name what the catalog holds: the package, channels that exist,
// an install namespace their directory creates, a watchNamespace (if any) that the bundle's install modes
// allow (the install namespace needs OwnNamespace, another one SingleNamespace); and config/olmv1/ has the
// ClusterCatalog, with an image. Mirrors internal/operator-controller/rukpak/bundle/registryv1.go
// (GetConfigSchema: watchNamespace by install mode) and internal/operator-controller/resolve/catalog.go
// (package and channel selection).
func checkClusterExtension(r *repo) []error {
	var errs []error
	if r.olmv1.catalogRef == "" {
		errs = append(errs, fmt.Errorf("%s has no ClusterCatalog with an image reference", r.olmv1.dir))
	}
	for _, c := range []*olmv1Config{r.olmv1, r.olmv1Pre111} {
		for _, err := range checkOneClusterExtension(r, c) {
			errs = append(errs, fmt.Errorf("%s: %w", c.extensionFile, err))
		}
	}
	return errs
}

func checkOneClusterExtension(r *repo, c *olmv1Config) []error {
	var errs []error
	ext := c.extension
	cat := ext.Spec.Source.Catalog
	if ext.APIVersion != "olm.operatorframework.io/v1" || ext.Spec.Source.SourceType != "Catalog" {
		errs = append(errs, fmt.Errorf("ClusterExtension: apiVersion %q, sourceType %q; want olm.operatorframework.io/v1, Catalog", ext.APIVersion, ext.Spec.Source.SourceType))
	}
	if cat.PackageName != r.bundle.packageName {
		errs = append(errs, fmt.Errorf("ClusterExtension package %q, the bundle's is %q", cat.PackageName, r.bundle.packageName))
	}
	channels := map[string]bool{}
	for _, ch := range r.catalog.channels {
		channels[ch.Name] = true
	}
	for _, ch := range cat.Channels {
		if !channels[ch] {
			errs = append(errs, fmt.Errorf("ClusterExtension channel %q is not in the catalog", ch))
		}
	}
	if !slices.Contains(c.namespaces, ext.Spec.Namespace) {
		errs = append(errs, fmt.Errorf("%s does not create the install namespace %q (it must exist)", c.dir, ext.Spec.Namespace))
	}
	if ext.Spec.Config != nil {
		var inline struct {
			WatchNamespace string `json:"watchNamespace"`
		}
		if err := json.Unmarshal(ext.Spec.Config.Inline, &inline); err != nil {
			errs = append(errs, fmt.Errorf("ClusterExtension spec.config.inline: %w", err))
		}
		modes := supportedModes(r.bundle.csv)
		switch w := inline.WatchNamespace; {
		case w == "":
		case w == ext.Spec.Namespace && !modes["OwnNamespace"]:
			errs = append(errs, fmt.Errorf("watchNamespace %q is the install namespace, but the bundle does not support OwnNamespace", w))
		case w != ext.Spec.Namespace && !modes["SingleNamespace"]:
			errs = append(errs, fmt.Errorf("watchNamespace %q is another namespace, but the bundle does not support SingleNamespace", w))
		}
	}
	return errs
}
