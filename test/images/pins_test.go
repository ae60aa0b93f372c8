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
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/operator101/operator101/test/testenv"
)

// pinned is an image named by its tag and, what is pulled, the digest of that tag's manifest list: a tag can
// be moved to other content, a digest cannot.
var pinned = regexp.MustCompile(`^[^@\s]+:[^@/\s]+@sha256:[0-9a-f]{64}$`)

// TestUpstreamImagesPinnedByDigest: every image a build of the project pulls is named by digest (tag kept for
// the reader): each FROM, and COPY --from, of the Dockerfiles and Containerfiles of the tree and of hack/'s
// scripts that is neither scratch nor an earlier stage, an ARG's default when FROM names an ARG
// (catalog.Dockerfile's OPM_IMAGE), and the Makefile's OPM_IMG for OFFLINE=0. The default OFFLINE=1 build pulls
// none of them: the operator image is the Dockerfile's first stage, FROM scratch, and OPM_IMG a local image.
func TestUpstreamImagesPinnedByDigest(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "bin" || n == "testdata" || n == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		n := d.Name()
		rel, _ := filepath.Rel(root, p)
		if n == "Dockerfile" || n == "Containerfile" || strings.HasSuffix(n, ".Dockerfile") ||
			strings.HasSuffix(n, ".Containerfile") || (strings.HasPrefix(rel, "hack"+string(filepath.Separator)) && strings.HasSuffix(n, ".sh")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	froms := 0
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		refs, err := pulledImages(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range refs {
			froms++
			if !pinned.MatchString(r.image) {
				t.Errorf("%s:%d: %s is not named by digest (NAME:TAG@sha256:DIGEST of the tag's manifest list)", rel, r.line, r.image)
			}
		}
	}
	// Dockerfile's golang and distroless, catalog.Dockerfile's opm: the parser must keep finding them.
	if froms < 3 {
		t.Errorf("%d images pulled found in %d files: the parser no longer finds the Dockerfiles' FROMs", froms, len(files))
	}

	// The Makefile's OPM_IMG, as make evaluates it.
	opmImg := func(offline string) string {
		args := []string{"-s", "--no-print-directory", "--eval=print-opm-img: ; @echo $(OPM_IMG)", "print-opm-img"}
		if offline != "" {
			args = append(args, "OFFLINE="+offline)
		}
		cmd := exec.Command("make", args...)
		cmd.Dir = root
		// The Makefile's defaults, not this shell's: make takes the environment's variables, empty ones too.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "OPM_IMG=") && !strings.HasPrefix(kv, "OFFLINE=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("make OFFLINE=%s: OPM_IMG: %v", offline, err)
		}
		return strings.TrimSpace(string(out))
	}
	if img := opmImg("0"); !pinned.MatchString(img) {
		t.Errorf("Makefile: OPM_IMG for OFFLINE=0 is %q: want it named by digest", img)
	}
	if img := opmImg(""); !strings.HasPrefix(img, "localhost/") {
		t.Errorf("Makefile: OPM_IMG by default (OFFLINE=1) is %q: want the local opm image (localhost/), which is built, not pulled", img)
	}

	// The offline build (--target offline) stops at the first stage: it must be FROM scratch.
	first, err := firstFrom(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if first != "FROM scratch AS offline" {
		t.Errorf("Dockerfile's first stage is %q, want FROM scratch AS offline: offline builds pull nothing", first)
	}
}

// imageRef is an image a Dockerfile pulls, and the line that names it.
type imageRef struct {
	image string
	line  int
}

// pulledImages reads the images a Dockerfile (or a script that writes one) pulls: every FROM and COPY --from
// that names neither scratch nor an earlier stage, with FROM ${ARG} replaced by the ARG's default.
func pulledImages(path string) ([]imageRef, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	args := map[string]string{}
	stages := map[string]bool{}
	var refs []imageRef
	argRef := regexp.MustCompile(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$`)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		var image, stage string
		switch strings.ToUpper(fields[0]) {
		case "ARG":
			if name, def, ok := strings.Cut(fields[1], "="); ok {
				args[name] = def
			}
			continue
		case "FROM":
			rest := fields[1:]
			for len(rest) > 0 && strings.HasPrefix(rest[0], "--") {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				continue
			}
			image = rest[0]
			if len(rest) == 3 && strings.EqualFold(rest[1], "AS") {
				stage = strings.ToLower(rest[2])
			}
		case "COPY", "ADD":
			for _, a := range fields[1:] {
				if v, ok := strings.CutPrefix(a, "--from="); ok {
					image = v
				}
			}
			if image == "" {
				continue
			}
		default:
			continue
		}
		if m := argRef.FindStringSubmatch(image); m != nil {
			if def := args[m[1]]; def != "" {
				image = def
			} else {
				image += " (an ARG without a default)"
			}
		}
		if image != "scratch" && !stages[strings.ToLower(image)] {
			refs = append(refs, imageRef{image, n})
		}
		if stage != "" {
			stages[stage] = true
		}
	}
	return refs, sc.Err()
}

// firstFrom returns the first FROM line of a Dockerfile, its fields joined by one space.
func firstFrom(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 0 && strings.EqualFold(fields[0], "FROM") {
			return strings.Join(fields, " "), nil
		}
	}
	return "", sc.Err()
}
