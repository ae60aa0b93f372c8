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
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
)

// HoldImageStore gives this test process podman's image store to itself until it exits.
//
// The builds are reproducible, so two test packages that build the same commit get images with the same IDs;
// one package's `podman rmi` of its image then deletes the image another package built a moment ago and is about
// to push (go test runs packages side by side). Every test that builds or removes images calls this first. A
// file lock rather than separate stores, because separate stores would rebuild every layer from nothing. The lock
// is taken once and held until the process exits (the kernel releases it then, after every test's cleanup):
// a lock per test would make a test that builds twice wait on itself.
func HoldImageStore(t testing.TB) {
	t.Helper()
	imageStore.once.Do(func() {
		f, err := os.OpenFile(filepath.Join(os.TempDir(), "operator101-podman-images.lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			imageStore.err = err
			return
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			_ = f.Close()
			imageStore.err = err
			return
		}
		imageStore.f = f // kept open, and referenced, until the process exits
	})
	if imageStore.err != nil {
		t.Fatalf("lock podman's image store: %v", imageStore.err)
	}
}

// imageStore is the process's hold on the image store lock.
var imageStore struct {
	once sync.Once
	f    *os.File
	err  error
}
