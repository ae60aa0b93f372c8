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

package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// HoldImageStore gives the calling test podman's image store to itself until the test and its cleanups end.
//
// The builds are reproducible, so two test packages that build the same commit get images with the same IDs;
// one package's `podman rmi` of its image then deletes the image another package built a moment ago and is about
// to push (go test runs packages side by side). Every test that builds or removes images calls this first. A
// file lock rather than separate stores, because separate stores would rebuild every layer from nothing.
func HoldImageStore(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "operator101-podman-images.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("open the image store lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		t.Fatalf("lock the image store: %v", err)
	}
	// Registered first, so it runs after every cleanup the test registers later (they remove its images).
	t.Cleanup(func() { _ = f.Close() })
}
