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

// Package olmv1 checks, without a cluster, that operator101's bundle (bundle/), file-based catalog (catalog/)
// and OLM v1 manifests (config/olmv1/) stay within what OLM v1's operator-controller accepts for a
// registry+v1 bundle. operator-controller cannot be built here (a module it needs is refused by the proxy),
// so each check is written here from operator-controller's documentation and source; its comment names the
// upstream file it mirrors (operator-framework/operator-controller, read at v1.10.0, v1.11.0 and main
// df2c201d). docs/install/olmv1.md, says what each limit means for operator101.
package olmv1

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// property is one olm property: of a catalog's olm.bundle, of a bundle's metadata/properties.yaml, or of a
// CSV's olm.properties annotation.
type property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// registryV1 is a registry+v1 bundle directory as operator-controller reads it: the package name from
// metadata/annotations.yaml, the one CSV, the CRDs and every other object of manifests/.
type registryV1 struct {
	dir         string
	annotations map[string]string
	packageName string
	csv         *v1alpha1.ClusterServiceVersion
	crds        []apiextensionsv1.CustomResourceDefinition
	others      []unstructured.Unstructured
	// properties are metadata/properties.yaml's and the CSV's olm.properties annotation's.
	properties []property
	// dependenciesFile tells whether metadata/dependencies.yaml exists (opm turns it into olm.*.required
	// properties of the catalog's bundle).
	dependenciesFile bool
	// layout holds what kept a file from being read the way operator-controller reads it.
	layout []error
}

// loadBundle reads a registry+v1 bundle directory. Problems operator-controller would refuse the bundle for
// (a subdirectory of manifests/, no or two CSVs, an unreadable object) are collected in layout, so that
// every other check still runs. Mirrors internal/operator-controller/rukpak/bundle/source/source.go
// (fsBundleSource.GetBundle, copyMetadataPropertiesToCSV).
func loadBundle(dir string) (*registryV1, error) {
	b := &registryV1{dir: dir}
	raw, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	var ann struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &ann); err != nil {
		return nil, fmt.Errorf("metadata/annotations.yaml: %w", err)
	}
	b.annotations = ann.Annotations
	b.packageName = ann.Annotations["operators.operatorframework.io.bundle.package.v1"]

	entries, err := os.ReadDir(filepath.Join(dir, "manifests"))
	if err != nil {
		return nil, err
	}
	csvs := 0
	for _, e := range entries {
		path := filepath.Join("manifests", e.Name())
		if e.IsDir() {
			b.layout = append(b.layout, fmt.Errorf("subdirectory %s: manifests/ may hold no subdirectories", path))
			continue
		}
		docs, err := readDocuments(filepath.Join(dir, path))
		if err != nil {
			b.layout = append(b.layout, fmt.Errorf("%s: %w", path, err))
			continue
		}
		for _, doc := range docs {
			u := unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &u.Object); err != nil {
				b.layout = append(b.layout, fmt.Errorf("%s: %w", path, err))
				continue
			}
			switch u.GetKind() {
			case "ClusterServiceVersion":
				csvs++
				csv := &v1alpha1.ClusterServiceVersion{}
				if err := yaml.Unmarshal(doc, csv); err != nil {
					b.layout = append(b.layout, fmt.Errorf("%s: the CSV: %w", path, err))
					continue
				}
				b.csv = csv
			case "CustomResourceDefinition":
				crd := apiextensionsv1.CustomResourceDefinition{}
				if err := yaml.Unmarshal(doc, &crd); err != nil {
					b.layout = append(b.layout, fmt.Errorf("%s: a CRD: %w", path, err))
					continue
				}
				b.crds = append(b.crds, crd)
			default:
				b.others = append(b.others, u)
			}
		}
	}
	if csvs != 1 || b.csv == nil {
		b.layout = append(b.layout, fmt.Errorf("manifests/ holds %d ClusterServiceVersions, want exactly 1", csvs))
	}
	if b.csv == nil {
		b.csv = &v1alpha1.ClusterServiceVersion{}
	}

	if v, ok := b.csv.Annotations["olm.properties"]; ok {
		var ps []property
		if err := json.Unmarshal([]byte(v), &ps); err != nil {
			b.layout = append(b.layout, fmt.Errorf("the CSV's olm.properties annotation: %w", err))
		}
		b.properties = append(b.properties, ps...)
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "metadata", "properties.yaml")); err == nil {
		var f struct {
			Properties []property `json:"properties"`
		}
		if err := yaml.Unmarshal(raw, &f); err != nil {
			b.layout = append(b.layout, fmt.Errorf("metadata/properties.yaml: %w", err))
		}
		b.properties = append(b.properties, f.Properties...)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "metadata", "dependencies.yaml")); err == nil {
		b.dependenciesFile = true
	}
	return b, nil
}

// readDocuments splits a YAML (or JSON) file into its documents, skipping empty ones.
func readDocuments(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 || isOnlyComments(doc) {
			continue
		}
		docs = append(docs, doc)
	}
}

func isOnlyComments(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && line != "---" {
			return false
		}
	}
	return true
}

// fbcEntry is one entry of an olm.channel.
type fbcEntry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces"`
	Skips     []string `json:"skips"`
	SkipRange string   `json:"skipRange"`
}

// fbcBlob is one document of a file-based catalog (olm.package, olm.channel, olm.bundle, ...).
type fbcBlob struct {
	Schema         string     `json:"schema"`
	Name           string     `json:"name"`
	Package        string     `json:"package"`
	DefaultChannel string     `json:"defaultChannel"`
	Image          string     `json:"image"`
	Entries        []fbcEntry `json:"entries"`
	Properties     []property `json:"properties"`
	file           string
}

// catalog is the file-based catalog of catalog/: every document of every file under it.
type catalog struct {
	packages []fbcBlob
	channels []fbcBlob
	bundles  []fbcBlob
	others   []fbcBlob
}

func loadCatalog(dir string) (*catalog, error) {
	c := &catalog{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := filepath.Ext(path)
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		docs, err := readDocuments(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, _ := filepath.Rel(dir, path)
		for _, doc := range docs {
			var b fbcBlob
			if err := yaml.Unmarshal(doc, &b); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			b.file = rel
			switch b.Schema {
			case "olm.package":
				c.packages = append(c.packages, b)
			case "olm.channel":
				c.channels = append(c.channels, b)
			case "olm.bundle":
				c.bundles = append(c.bundles, b)
			default:
				c.others = append(c.others, b)
			}
		}
		return nil
	})
	return c, err
}

// bundleVersion is the version of a catalog bundle's olm.package property ("" when it has none).
func (b fbcBlob) bundleVersion() string {
	for _, p := range b.Properties {
		if p.Type != "olm.package" {
			continue
		}
		var v struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(p.Value, &v) == nil {
			return v.Version
		}
	}
	return ""
}

// addNext adds bundle/ to the catalog of releases as its next version, the way hack/catalog.sh does for the
// e2e and hack/release.sh does when it is released: an olm.bundle with its package and version, and an entry in
// each channel the bundle names, with the edge its CSV carries. The checks then see what OLM v1 will install.
// A bundle/ that is in the catalog already (released) is left as it is.
func (c *catalog) addNext(b *registryV1) error {
	for _, cb := range c.bundles {
		if cb.Name == b.csv.Name {
			return nil
		}
	}
	pkg, err := json.Marshal(map[string]string{"packageName": b.packageName, "version": b.csv.Spec.Version.String()})
	if err != nil {
		return err
	}
	c.bundles = append(c.bundles, fbcBlob{Schema: "olm.bundle", Name: b.csv.Name, Package: b.packageName,
		Properties: []property{{Type: "olm.package", Value: pkg}}, file: "bundle/ (next)"})
	entry := fbcEntry{Name: b.csv.Name, Replaces: b.csv.Spec.Replaces, Skips: b.csv.Spec.Skips,
		SkipRange: b.csv.Annotations["olm.skipRange"]}
	for _, name := range strings.Split(b.annotations["operators.operatorframework.io.bundle.channels.v1"], ",") {
		found := false
		for i := range c.channels {
			if c.channels[i].Name == name && c.channels[i].Package == b.packageName {
				c.channels[i].Entries = append(c.channels[i].Entries, entry)
				found = true
			}
		}
		if !found {
			c.channels = append(c.channels, fbcBlob{Schema: "olm.channel", Name: name, Package: b.packageName,
				Entries: []fbcEntry{entry}, file: "bundle/ (next)"})
		}
	}
	return nil
}

// bundleObjects decodes a catalog bundle's olm.bundle.object properties (the bundle's manifests, as opm
// rendered them).
func (b fbcBlob) bundleObjects() ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, p := range b.Properties {
		if p.Type != "olm.bundle.object" {
			continue
		}
		var v struct {
			Data string `json:"data"`
		}
		if err := json.Unmarshal(p.Value, &v); err != nil {
			return nil, err
		}
		raw, err := base64.StdEncoding.DecodeString(v.Data)
		if err != nil {
			return nil, err
		}
		u := unstructured.Unstructured{}
		if err := json.Unmarshal(raw, &u.Object); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// olmv1Config is one directory of OLM v1 manifests: config/olmv1/ (operator-controller v1.11 and later: the
// ClusterCatalog and the ClusterExtension) or config/olmv1/pre-v1.11/ (v1.0 to v1.10: the ClusterExtension
// with its serviceAccount, and the installer's RBAC).
type olmv1Config struct {
	dir           string // relative to the repository, for messages
	extensionFile string // the file of the ClusterExtension, relative to the repository
	catalogRef    string
	extension     clusterExtension
	installerSA   []unstructured.Unstructured
	clusterRoles  map[string][]rbacv1.PolicyRule
	roles         map[string][]rbacv1.PolicyRule // namespace/name
	crbs          []rbacv1.ClusterRoleBinding
	rbs           []rbacv1.RoleBinding
	namespaces    []string
}

// clusterExtension is the part of a ClusterExtension (olm.operatorframework.io/v1) the checks read.
type clusterExtension struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Namespace string `json:"namespace"`
		// ServiceAccount is nil when the field is absent: required by operator-controller v1.0 to v1.10,
		// deprecated and ignored from v1.11 (where an empty object is refused too: minProperties 1).
		ServiceAccount *struct {
			Name string `json:"name"`
		} `json:"serviceAccount"`
		Source struct {
			SourceType string `json:"sourceType"`
			Catalog    struct {
				PackageName             string   `json:"packageName"`
				Channels                []string `json:"channels"`
				Version                 string   `json:"version"`
				UpgradeConstraintPolicy string   `json:"upgradeConstraintPolicy"`
			} `json:"catalog"`
		} `json:"source"`
		Config *struct {
			ConfigType string          `json:"configType"`
			Inline     json.RawMessage `json:"inline"`
		} `json:"config"`
	} `json:"spec"`
}

// loadOLMv1Config reads the YAML files of root/rel, not its subdirectories.
func loadOLMv1Config(root, rel string) (*olmv1Config, error) {
	c := &olmv1Config{dir: rel, clusterRoles: map[string][]rbacv1.PolicyRule{}, roles: map[string][]rbacv1.PolicyRule{}}
	dir := filepath.Join(root, rel)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	extensions := 0
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".yaml" {
			continue
		}
		path := filepath.Join(dir, e.Name())
		docs, err := readDocuments(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, doc := range docs {
			u := unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &u.Object); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			var err error
			switch u.GetKind() {
			case "ClusterCatalog":
				c.catalogRef, _, _ = unstructured.NestedString(u.Object, "spec", "source", "image", "ref")
			case "ClusterExtension":
				extensions++
				c.extensionFile = filepath.ToSlash(filepath.Join(rel, e.Name()))
				err = yaml.UnmarshalStrict(doc, &c.extension)
			case "Namespace":
				c.namespaces = append(c.namespaces, u.GetName())
			case "ServiceAccount":
				c.installerSA = append(c.installerSA, u)
			case "ClusterRole":
				var r rbacv1.ClusterRole
				err = yaml.UnmarshalStrict(doc, &r)
				c.clusterRoles[r.Name] = r.Rules
			case "Role":
				var r rbacv1.Role
				err = yaml.UnmarshalStrict(doc, &r)
				c.roles[r.Namespace+"/"+r.Name] = r.Rules
			case "ClusterRoleBinding":
				var r rbacv1.ClusterRoleBinding
				err = yaml.UnmarshalStrict(doc, &r)
				c.crbs = append(c.crbs, r)
			case "RoleBinding":
				var r rbacv1.RoleBinding
				err = yaml.UnmarshalStrict(doc, &r)
				c.rbs = append(c.rbs, r)
			default:
				err = fmt.Errorf("unexpected kind %q", u.GetKind())
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %s %s: %w", path, u.GetKind(), u.GetName(), err)
			}
		}
	}
	if extensions != 1 {
		return nil, fmt.Errorf("%d ClusterExtensions, want 1", extensions)
	}
	return c, nil
}

// repo is everything the checks read from one copy of the repository.
type repo struct {
	bundle  *registryV1
	catalog *catalog
	// olmv1 is config/olmv1/, for operator-controller v1.11 and later; olmv1Pre111 is
	// config/olmv1/pre-v1.11/, for v1.0 to v1.10.
	olmv1, olmv1Pre111 *olmv1Config
}

const (
	olmv1Dir       = "config/olmv1"
	olmv1Pre111Dir = "config/olmv1/pre-v1.11"
)

func loadRepo(root string) (*repo, error) {
	b, err := loadBundle(filepath.Join(root, "bundle"))
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	c, err := loadCatalog(filepath.Join(root, "catalog"))
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if err := c.addNext(b); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	o, err := loadOLMv1Config(root, olmv1Dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", olmv1Dir, err)
	}
	pre, err := loadOLMv1Config(root, olmv1Pre111Dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", olmv1Pre111Dir, err)
	}
	return &repo{bundle: b, catalog: c, olmv1: o, olmv1Pre111: pre}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
