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

package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// HoldImageStore points this test process's podman, buildah and skopeo, and every command it starts (make, the
// hack scripts, podman's Docker API service), at the image tests' own store (hack/image-store.sh), and gives
// the process that store to itself until it exits. Every test that builds, tags, inspects or removes images
// calls this first.
//
// A store of their own, not podman's default one: the e2e and make demo build images of the same IDs there
// (the builds are reproducible), tag, push and remove them, beside make ci's test-go-images; with a store each,
// neither sees the other's images. The store is kept in the tool cache, so that what it holds outlasts the run:
// its images with a name (the offline opm image), while what they are built from is unchanged; those without,
// which builds leave, go when a process first holds it.
//
// A lock on it, because two test packages that build the same commit get images with the same IDs: one
// package's `podman rmi` of its image then deletes the image another package built a moment ago and is about to
// push (go test runs packages side by side). The lock is taken once and held until the process exits (the
// kernel releases it then, after every test's cleanup): a lock per test would make a test that builds twice
// wait on itself.
func HoldImageStore(t testing.TB) {
	t.Helper()
	imageStore.once.Do(func() { imageStore.f, imageStore.err = holdImageStore() })
	if imageStore.err != nil {
		t.Fatalf("the image tests' store: %v", imageStore.err)
	}
}

// holdImageStore sets the environment hack/image-store.sh prints, locks the store's lock file, tidies the store
// and returns the lock file, to be kept open until the process exits.
func holdImageStore() (*os.File, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(filepath.Join(root, "hack", "image-store.sh")).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("hack/image-store.sh: %w\n%s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("hack/image-store.sh: %w", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("hack/image-store.sh printed %q, not KEY=VALUE", line)
		}
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	dir := os.Getenv("OPERATOR101_IMAGE_STORE")
	if dir == "" {
		return nil, fmt.Errorf("hack/image-store.sh named no OPERATOR101_IMAGE_STORE:\n%s", out)
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := tidyImageStore(root, dir); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// tidyImageStore removes from the store dir what the runs before this one left: the images without a name,
// which builds make (one per step) and removing the named image leaves behind. The named ones stay (the offline
// opm image, which catalog builds start from, and the steps it was built in), as long as what they are built
// from is the same: otherwise the store starts empty.
func tidyImageStore(root, dir string) error {
	stamp, err := keptImagesStamp(root)
	if err != nil {
		return err
	}
	stampFile := filepath.Join(dir, "stamp")
	args := []string{"image", "prune", "--force"}
	if old, _ := os.ReadFile(stampFile); string(old) != stamp {
		args = []string{"rmi", "--all", "--force"}
	}
	if out, err := exec.Command("podman", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("podman %s in %s: %w\n%s", strings.Join(args, " "), dir, err, out)
	}
	return os.WriteFile(stampFile, []byte(stamp), 0o644)
}

// keptImagesStamp hashes what the images a store keeps are built from: hack/images.sh's recipe, opm and
// grpc_health_probe as hack/tools builds them, and the machine's busybox (the offline opm image's shell).
func keptImagesStamp(root string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"hack/images.sh", "hack/tools/install.sh", "hack/tools/olm/go.mod",
		"hack/tools/olm/go.sum", "hack/tools/grpc-health-probe/go.mod", "hack/tools/grpc-health-probe/go.sum",
		"/bin/busybox"} {
		path := name
		if !filepath.IsAbs(name) {
			path = filepath.Join(root, name)
		}
		b, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// imageStore is the process's hold on the image store's lock.
var imageStore struct {
	once sync.Once
	f    *os.File // kept open, and referenced, until the process exits
	err  error
}
