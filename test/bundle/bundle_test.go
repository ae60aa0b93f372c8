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

// Package bundle validates the committed OLM bundle and file-based catalog: operator-framework/api's
// validators in-process, and the operator-sdk and opm command-line validators the release pipeline runs.
package bundle

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	apimanifests "github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/operator101/operator101/test/scorecard/almready"
	"github.com/operator101/operator101/test/scorecard/descriptors"
	"github.com/operator101/operator101/test/testenv"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// tool returns the path of a tool that make builds into bin/.
func tool(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s not found in bin/: run the tests through 'make test', which builds it (%v)", name, err)
	}
	return p
}

func loadBundle(t *testing.T) *apimanifests.Bundle {
	t.Helper()
	// The bundle root (not bundle/manifests): the annotations fill in the package and channels.
	b, err := apimanifests.GetBundleFromDir(filepath.Join(repoRoot(t), "bundle"))
	if err != nil {
		t.Fatalf("loading the bundle: %v", err)
	}
	return b
}

// TestBundleValidators runs operator-framework/api's validators over the bundle: the bundle, CSV and CRD
// validators, OperatorHub's, good practices, standard categories and capabilities, objects, and the removed-APIs
// check for the Kubernetes version the project is tested on. Nothing may be reported, not even a warning.
func TestBundleValidators(t *testing.T) {
	b := loadBundle(t)
	validators := interfaces.Validators{
		validation.BundleValidator,
		validation.ClusterServiceVersionValidator,
		validation.CustomResourceDefinitionValidator,
		validation.OperatorHubV2Validator,
		validation.StandardCategoriesValidator,
		validation.StandardCapabilitiesValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
		validation.ObjectValidator,
	}
	opts := map[string]string{"k8s-version": "1.36"}
	results := validators.Validate(b, opts)
	var problems []string
	for _, r := range results {
		for _, e := range r.Errors {
			problems = append(problems, "error: "+describe(e))
		}
		for _, w := range r.Warnings {
			problems = append(problems, "warning: "+describe(w))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("the bundle validators report %d problems:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

func describe(e apierrors.Error) string { return e.Error() }

// TestBundleContents checks what the validators do not: the bundle describes every CRD it ships, each owned
// kind has an example and descriptors for every spec field the example sets, and the images are set.
func TestBundleContents(t *testing.T) {
	b := loadBundle(t)
	csv := b.CSV
	if got, want := csv.GetName(), "operator101.v"+csv.Spec.Version.String(); got != want {
		t.Errorf("CSV name %q, want %q", got, want)
	}
	owned := map[string]bool{}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		owned[d.Name] = true
		if len(d.SpecDescriptors) == 0 || len(d.StatusDescriptors) == 0 {
			t.Errorf("%s: no spec or status descriptors", d.Name)
		}
		// What scorecard's olm-crds-have-resources asks of every owned CRD.
		if len(d.Resources) == 0 {
			t.Errorf("%s: no resources (the kinds its controller creates or reads)", d.Name)
		}
		for _, sd := range append(append([]string{}, pathsOfSpec(d.SpecDescriptors)...), pathsOfStatus(d.StatusDescriptors)...) {
			if sd == "" {
				t.Errorf("%s: a descriptor without a path", d.Name)
			}
		}
	}
	if len(b.V1CRDs) == 0 {
		t.Fatal("the bundle has no CRDs")
	}
	for _, crd := range b.V1CRDs {
		if !owned[crd.Name] {
			t.Errorf("CRD %s is in the bundle but not owned by the CSV", crd.Name)
		}
	}

	// Every spec field an example sets has a spec descriptor in its own group's CRD: the scorecard test
	// spec-descriptors, run here on every change.
	if r := descriptors.Check(csv); len(r.Errors) != 0 {
		t.Errorf("spec descriptors: %s", strings.Join(r.Errors, "; "))
	}
	examples, err := almready.ExamplesOf(csv)
	if err != nil {
		t.Fatal(err)
	}
	// A kind may be served by two groups (AppService): each needs an example of its own group, which the CRD's
	// name ends with (plural.group).
	groupOf := func(d v1alpha1.CRDDescription) string { _, g, _ := strings.Cut(d.Name, "."); return g }
	kinds := map[string]bool{}
	for _, ex := range examples {
		gvk := ex.GroupVersionKind()
		kinds[gvk.Group+"/"+gvk.Kind] = true
		// The console and the scorecard create an example in the namespace they work in.
		if ns := ex.GetNamespace(); ns != "" {
			t.Errorf("the %s example names namespace %s", gvk.Kind, ns)
		}
		// Seed 003's image, in Docker's old manifest format, which current runtimes refuse to pull.
		if image, _, _ := unstructured.NestedString(ex.Object, "spec", "image"); image == "nginx:1.7.9" {
			t.Errorf("the %s %s example names nginx:1.7.9, which current container runtimes cannot pull", gvk.Group, gvk.Kind)
		}
	}
	for _, d := range csv.Spec.CustomResourceDefinitions.Owned {
		if !kinds[groupOf(d)+"/"+d.Kind] {
			t.Errorf("no alm-examples object of kind %s in group %s", d.Kind, groupOf(d))
		}
	}

	img := csv.Annotations["containerImage"]
	if img == "" || img == "controller:latest" {
		t.Errorf("containerImage annotation %q is not the operator image", img)
	}
	dep := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(dep) != 1 || dep[0].Spec.Template.Spec.Containers[0].Image != img {
		t.Errorf("the operator Deployment does not run containerImage %q", img)
	}
	related := map[string]string{}
	for _, r := range csv.Spec.RelatedImages {
		related[r.Name] = r.Image
	}
	if related["operator101"] != img || related["busybox"] == "" {
		t.Errorf("relatedImages %v: want operator101 (= containerImage) and busybox", related)
	}
	// Each image an example names is related, fully qualified, so a mirror holds what the examples run.
	for _, ex := range examples {
		image, _, _ := unstructured.NestedString(ex.Object, "spec", "image")
		if image == "" {
			continue
		}
		found := false
		for _, r := range csv.Spec.RelatedImages {
			found = found || strings.HasSuffix(r.Image, "/"+image) || strings.HasSuffix(r.Image, "/"+image+":latest")
		}
		if !found {
			t.Errorf("the %s example's image %q is not among the related images %v", ex.GetKind(), image, related)
		}
	}
	// Every image the manager runs by default comes from a RELATED_IMAGE_<NAME> variable and is the related image
	// <name>, so a mirror of the related images holds it.
	n := 0
	for _, e := range dep[0].Spec.Template.Spec.Containers[0].Env {
		if name, ok := strings.CutPrefix(e.Name, "RELATED_IMAGE_"); ok {
			n++
			if related[strings.ToLower(name)] != e.Value || e.Value == "" {
				t.Errorf("%s=%q, but relatedImages has %s=%q", e.Name, e.Value, strings.ToLower(name), related[strings.ToLower(name)])
			}
		}
	}
	if n == 0 {
		t.Error("the manager has no RELATED_IMAGE_ variable: where does the At's default image come from?")
	}
	if csv.Annotations["operatorframework.io/suggested-namespace"] == "" {
		t.Error("no operatorframework.io/suggested-namespace annotation")
	}
	// The install modes: test/rbac (TestDeclaredInstallModes) keeps them to the ones the tests prove.
}

// TestBundleDockerfileLabels checks that bundle.Dockerfile labels the image exactly as
// bundle/metadata/annotations.yaml annotates the bundle.
func TestBundleDockerfileLabels(t *testing.T) {
	root := repoRoot(t)
	ann := readAnnotations(t, filepath.Join(root, "bundle", "metadata", "annotations.yaml"))
	labels := dockerfileLabels(t, filepath.Join(root, "bundle.Dockerfile"))
	if len(ann) == 0 {
		t.Fatal("no annotations in bundle/metadata/annotations.yaml")
	}
	for k, v := range ann {
		if labels[k] != v {
			t.Errorf("bundle.Dockerfile label %s=%q, annotations.yaml has %q", k, labels[k], v)
		}
	}
	for k := range labels {
		if _, ok := ann[k]; !ok {
			t.Errorf("bundle.Dockerfile label %s is not in annotations.yaml", k)
		}
	}
}

func readAnnotations(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f.Annotations
}

func dockerfileLabels(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "LABEL ")
		if !ok {
			continue
		}
		k, v, _ := strings.Cut(rest, "=")
		labels[k] = strings.Trim(v, `"`)
	}
	return labels
}

// TestOperatorSDKBundleValidate runs what the release pipeline runs: operator-sdk's validators with the
// operatorframework optional suite. It must pass without a single warning.
func TestOperatorSDKBundleValidate(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command(tool(t, "operator-sdk"), "bundle", "validate", "./bundle",
		"--select-optional", "suite=operatorframework", "--optional-values=k8s-version=1.36")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("operator-sdk bundle validate: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "level=warning") || strings.Contains(line, "level=error") {
			t.Errorf("operator-sdk bundle validate reported: %s", line)
		}
	}
	if !strings.Contains(string(out), "All validation tests have completed successfully") {
		t.Errorf("operator-sdk bundle validate did not report success:\n%s", out)
	}
}

// TestOPMValidateCatalog runs opm's validator over the committed file-based catalog.
func TestOPMValidateCatalog(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command(tool(t, "opm"), "validate", "catalog")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("opm validate catalog: %v\n%s", err, out)
	}
}

func pathsOfSpec(ds []v1alpha1.SpecDescriptor) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.Path)
	}
	return out
}

func pathsOfStatus(ds []v1alpha1.StatusDescriptor) []string {
	out := make([]string, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.Path)
	}
	return out
}

// TestCatalogHoldsTheReleases checks the committed catalog against the record of releases
// (config/catalog/releases): one channel, stable, with every release in order; each release's bundle by the
// recorded digest, with its version and its operator image by digest; and bundle/, the next version, replacing
// the newest release and skipping all of them.
func TestCatalogHoldsTheReleases(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "catalog", "operator101", "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Name      string `json:"name"`
		Replaces  string `json:"replaces"`
		SkipRange string `json:"skipRange"`
	}
	type relatedImage struct {
		Image string `json:"image"`
	}
	type blob struct {
		Schema         string  `json:"schema"`
		Name           string  `json:"name"`
		DefaultChannel string  `json:"defaultChannel"`
		Image          string  `json:"image"`
		Entries        []entry `json:"entries"`
		Properties     []struct {
			Type  string         `json:"type"`
			Value map[string]any `json:"value"`
		} `json:"properties"`
		RelatedImages []relatedImage `json:"relatedImages"`
	}
	type deprecations struct {
		Entries []struct {
			Reference struct{ Schema, Name string } `json:"reference"`
			Message   string                        `json:"message"`
		} `json:"entries"`
	}
	channels := map[string][]entry{}
	bundles := map[string]blob{}
	var pkg blob
	var deprecated deprecations
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var b blob
		if err := yaml.Unmarshal([]byte(doc), &b); err != nil {
			t.Fatalf("catalog: %v", err)
		}
		switch b.Schema {
		case "olm.deprecations":
			if err := yaml.Unmarshal([]byte(doc), &deprecated); err != nil {
				t.Fatalf("catalog: %v", err)
			}
		case "olm.package":
			pkg = b
		case "olm.channel":
			channels[b.Name] = b.Entries
		case "olm.bundle":
			bundles[b.Name] = b
		}
	}
	if pkg.Name != "operator101" || pkg.DefaultChannel != "stable" || len(channels) != 1 {
		t.Errorf("package %q default channel %q, channels %v: want operator101, stable only", pkg.Name, pkg.DefaultChannel, channels)
	}

	records, err := os.ReadFile(filepath.Join(root, "config", "catalog", "releases"))
	if err != nil {
		t.Fatal(err)
	}
	var released []string
	for _, line := range strings.Split(string(records), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 5 {
			t.Fatalf("releases: %q: want VERSION COMMIT OPERATOR SCORECARD BUNDLE [VAR=DEFAULT_IMAGE...]", line)
		}
		version, op, bundleImg := f[0], f[2], f[4]
		name := "operator101.v" + version
		released = append(released, name)
		b, ok := bundles[name]
		if !ok {
			t.Errorf("release %s is not in the catalog", version)
			continue
		}
		if b.Image != bundleImg || !strings.Contains(op, "@sha256:") {
			t.Errorf("release %s: catalog image %s, recorded %s (operator %s): want both by digest, equal", version, b.Image, bundleImg, op)
		}
		var hasOp, hasVersion bool
		for _, ri := range b.RelatedImages {
			hasOp = hasOp || ri.Image == op
		}
		for _, p := range b.Properties {
			hasVersion = hasVersion || (p.Type == "olm.package" && p.Value["version"] == version)
		}
		if !hasOp || !hasVersion {
			t.Errorf("release %s: operator image %s among related images %v, version property %v", version, op, hasOp, hasVersion)
		}
		// The default images the release pinned (hack/release.sh new): by digest, and among its related images.
		for _, pin := range f[5:] {
			_, img, _ := strings.Cut(pin, "=")
			if !strings.Contains(img, "@sha256:") || !slices.ContainsFunc(b.RelatedImages, func(ri relatedImage) bool { return ri.Image == img }) {
				t.Errorf("release %s: default image %q: want it by digest among the related images %v", version, pin, b.RelatedImages)
			}
		}
	}
	if len(released) == 0 || len(bundles) != len(released) {
		t.Fatalf("catalog bundles %d, releases %v: the catalog holds exactly the releases", len(bundles), released)
	}
	var names []string
	for _, e := range channels["stable"] {
		names = append(names, e.Name)
	}
	if !reflect.DeepEqual(names, released) {
		t.Errorf("stable channel %v, releases %v", names, released)
	}

	// A deprecation names a released bundle (a channel or the package would deprecate today's too) and says why.
	for _, d := range deprecated.Entries {
		if d.Reference.Schema != "olm.bundle" || !slices.Contains(released, d.Reference.Name) || strings.TrimSpace(d.Message) == "" {
			t.Errorf("deprecation of %s %q (message %q): want a released bundle, with a reason", d.Reference.Schema, d.Reference.Name, d.Message)
		}
	}

	// The head of every channel (the entry no other one replaces) is not deprecated, nor its channel or package:
	// a user who subscribes gets a version the catalog does not warn against.
	for ch, entries := range channels {
		replaced := map[string]bool{}
		for _, e := range entries {
			replaced[e.Replaces] = true
		}
		var heads []string
		for _, e := range entries {
			if !replaced[e.Name] {
				heads = append(heads, e.Name)
			}
		}
		if len(heads) != 1 {
			t.Errorf("channel %s has heads %v, want one", ch, heads)
			continue
		}
		for _, d := range deprecated.Entries {
			if (d.Reference.Schema == "olm.bundle" && d.Reference.Name == heads[0]) || d.Reference.Schema == "olm.package" ||
				(d.Reference.Schema == "olm.channel" && d.Reference.Name == ch) {
				t.Errorf("channel %s: its head %s is deprecated (%s %q): release a version users may stay on", ch, heads[0],
					d.Reference.Schema, d.Reference.Name)
			}
		}
	}

	csv := loadBundle(t).CSV
	for _, r := range released {
		v, err := semver.Parse(strings.TrimPrefix(r, "operator101.v"))
		if err != nil {
			t.Fatalf("release %s: %v", r, err)
		}
		if !csv.Spec.Version.GT(v) {
			t.Errorf("bundle/ is %s, not newer than the release %s: bundle/ is the next version (make bundle VERSION=...)",
				csv.Spec.Version, v)
		}
	}
	next, oldest := "operator101.v"+csv.Spec.Version.String(), strings.TrimPrefix(released[0], "operator101.v")
	skip := fmt.Sprintf(">=%s <%s", oldest, csv.Spec.Version.String())
	if _, ok := bundles[next]; ok {
		t.Errorf("bundle/ is %s, which is released: after a release, make bundle VERSION=<the next one>", next)
	}
	if csv.Spec.Replaces != released[len(released)-1] || csv.Annotations["olm.skipRange"] != skip {
		t.Errorf("bundle/ replaces %q, skipRange %q: want %s and %q", csv.Spec.Replaces, csv.Annotations["olm.skipRange"],
			released[len(released)-1], skip)
	}
}

// TestDisconnectedClaim: the CSV says features.operators.openshift.io/disconnected "true" only when a mirror of
// its relatedImages by digest is all a disconnected cluster needs: every related image, and every image its
// alm-examples name, by digest (the operator's own image aside, which a release pins: hack/release.sh).
func TestDisconnectedClaim(t *testing.T) {
	csv := loadBundle(t).CSV
	claim := csv.GetAnnotations()["features.operators.openshift.io/disconnected"]
	if claim != "true" && claim != "false" {
		t.Fatalf("features.operators.openshift.io/disconnected is %q, want \"true\" or \"false\"", claim)
	}
	var tags []string
	for _, r := range csv.Spec.RelatedImages {
		if r.Image != csv.GetAnnotations()["containerImage"] && !strings.Contains(r.Image, "@sha256:") {
			tags = append(tags, "relatedImages "+r.Image)
		}
	}
	examples, err := almready.ExamplesOf(csv)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range examples {
		img, _, _ := unstructured.NestedString(ex.Object, "spec", "image")
		if img != "" && !strings.Contains(img, "@sha256:") {
			tags = append(tags, fmt.Sprintf("alm-examples %s %s: %s", ex.GetKind(), ex.GetName(), img))
		}
	}
	if claim == "true" && len(tags) > 0 {
		t.Errorf("the CSV claims disconnected, but these images are tags, which a mirror by digest does not serve:\n  %s",
			strings.Join(tags, "\n  "))
	}
	if claim == "false" && len(tags) == 0 {
		t.Errorf("every image is by digest: the CSV may claim disconnected (docs/contributing/packaging.md says why it does not)")
	}
}
