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

package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/operator101/operator101/test/testenv"
)

// ociDescriptor is an entry of an OCI index or manifest.
type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Platform  *struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
	} `json:"platform,omitempty"`
}

type ociIndex struct {
	MediaType string          `json:"mediaType"`
	Manifests []ociDescriptor `json:"manifests"`
}

type ociManifest struct {
	Config ociDescriptor   `json:"config"`
	Layers []ociDescriptor `json:"layers"`
}

// elfMachine is the ELF machine each Go architecture's binaries carry.
var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// TestOperatorImageManifestList builds the operator image for linux/amd64 and linux/arm64 as the Makefile's
// PLATFORMS does (hack/images.sh operator, PLATFORMS set), writes the manifest list as `make docker-push` pushes it
// (podman manifest push --all) into an OCI layout, and checks that it holds exactly one image per platform, each
// configured for its platform, running /manager as a numeric non-root user, and whose /manager is an ELF binary
// for that architecture (its header's e_machine), statically linked, and links Mozilla's roots
// (golang.org/x/crypto/x509roots/fallback): FROM scratch, the image has none of its own.
func TestOperatorImageManifestList(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images with podman, which -short (make test) does not install; make ci runs this test")
	}
	testenv.HoldImageStore(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	list := prefix + "operator101-multiarch:test"
	cmd := exec.Command(filepath.Join(root, "hack", "images.sh"), "operator", list)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PLATFORMS=linux/amd64,linux/arm64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("PLATFORMS=linux/amd64,linux/arm64 hack/images.sh operator: %v\n%s", err, tail(out))
	}
	t.Cleanup(func() {
		if exec.Command("podman", "manifest", "rm", list).Run() != nil {
			_ = exec.Command("podman", "rmi", "--force", list).Run()
		}
	})
	layout := filepath.Join(t.TempDir(), "oci")
	if out, err := exec.Command("podman", "manifest", "push", "--all", "--format", "oci", list, "oci:"+layout).CombinedOutput(); err != nil {
		t.Fatalf("podman manifest push --all %s oci:%s: %v\n%s", list, layout, err, out)
	}

	// index.json names the list; the list names an image per platform.
	var top ociIndex
	readJSON(t, filepath.Join(layout, "index.json"), &top)
	if len(top.Manifests) != 1 {
		t.Fatalf("the OCI layout holds %d manifests, want the one list", len(top.Manifests))
	}
	var idx ociIndex
	readJSON(t, blob(layout, top.Manifests[0].Digest), &idx)
	var platforms []string
	for _, m := range idx.Manifests {
		if m.Platform == nil {
			t.Fatalf("list entry %s has no platform", m.Digest)
		}
		p := m.Platform.OS + "/" + m.Platform.Architecture
		platforms = append(platforms, p)
		t.Run(p, func(t *testing.T) {
			var man ociManifest
			readJSON(t, blob(layout, m.Digest), &man)
			var cfg struct {
				Architecture string      `json:"architecture"`
				OS           string      `json:"os"`
				Config       imageConfig `json:"config"`
			}
			readJSON(t, blob(layout, man.Config.Digest), &cfg)
			if cfg.OS != m.Platform.OS || cfg.Architecture != m.Platform.Architecture {
				t.Errorf("the image's config says %s/%s, the list %s", cfg.OS, cfg.Architecture, p)
			}
			if err := numericNonRoot(cfg.Config.User); err != nil || !slices.Equal(cfg.Config.Entrypoint, []string{"/manager"}) {
				t.Errorf("user %q (%v), entrypoint %q: want a numeric non-root user and /manager", cfg.Config.User, err, cfg.Config.Entrypoint)
			}
			bin, err := fileInLayers(layout, man.Layers, "manager")
			if err != nil {
				t.Fatal(err)
			}
			f, err := elf.NewFile(bytes.NewReader(bin))
			if err != nil {
				t.Fatalf("/manager is not an ELF binary: %v", err)
			}
			defer f.Close()
			want, ok := elfMachine[m.Platform.Architecture]
			if !ok {
				t.Fatalf("no ELF machine known for %s", m.Platform.Architecture)
			}
			if f.Machine != want || f.Class != elf.ELFCLASS64 {
				t.Errorf("/manager is for %s (%s), want %s", f.Machine, f.Class, want)
			}
			for _, prog := range f.Progs {
				if prog.Type == elf.PT_INTERP {
					t.Errorf("/manager asks for a dynamic loader: it is not static, and FROM scratch has none")
				}
			}
			info, err := buildinfo.Read(bytes.NewReader(bin))
			if err != nil {
				t.Fatalf("/manager's build information: %v", err)
			}
			if !slices.ContainsFunc(info.Deps, func(m *debug.Module) bool { return m.Path == "golang.org/x/crypto/x509roots/fallback" }) {
				t.Errorf("/manager does not link golang.org/x/crypto/x509roots/fallback: FROM scratch, tls.mode VerifyFull without ca.crt has no roots")
			}
		})
	}
	slices.Sort(platforms)
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("the list holds %v, want %v", platforms, want)
	}
}

func blob(layout, digest string) string {
	algo, hex, _ := strings.Cut(digest, ":")
	return filepath.Join(layout, "blobs", algo, hex)
}

func readJSON(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// fileInLayers returns the content of name (a path in the image, without the leading /) from the topmost layer
// that holds it.
func fileInLayers(layout string, layers []ociDescriptor, name string) ([]byte, error) {
	for i := len(layers) - 1; i >= 0; i-- {
		f, err := os.Open(blob(layout, layers[i].Digest))
		if err != nil {
			return nil, err
		}
		var r io.Reader = f
		if strings.HasSuffix(layers[i].MediaType, "gzip") {
			gz, err := gzip.NewReader(f)
			if err != nil {
				f.Close()
				return nil, err
			}
			r = gz
		}
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				return nil, err
			}
			if strings.TrimPrefix(h.Name, "./") == name || strings.TrimPrefix(h.Name, "/") == name {
				b, err := io.ReadAll(tr)
				f.Close()
				return b, err
			}
		}
		f.Close()
	}
	return nil, fmt.Errorf("no layer holds /%s", name)
}
