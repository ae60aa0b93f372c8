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

package databaseuser

import (
	"testing"
	"time"
)

// TestShares: a target and a namespace each get at most half the workers (at least one); what one holds does
// not count against another; a release gives the share back, but not to the one whose check just ended while
// another waits for it; records of those gone do not stay.
func TestShares(t *testing.T) {
	now := time.Unix(0, 0)
	s := newShares(4)
	s.now = func() time.Time { return now }
	take := func(who, target, ns string) func() {
		t.Helper()
		r, ok := s.take(who, target, ns)
		if !ok {
			t.Fatalf("%s (%s, %s) refused", who, target, ns)
		}
		return r
	}
	refused := func(who, target, ns string) {
		t.Helper()
		if _, ok := s.take(who, target, ns); ok {
			t.Fatalf("%s (%s, %s) let in", who, target, ns)
		}
	}
	r1 := take("a/1", "slow", "a")
	r2 := take("b/1", "slow", "b")
	refused("c/1", "slow", "c") // the target's share is 2 of 4
	r3 := take("a/2", "fast", "a")
	refused("a/3", "fast", "a") // the namespace's too
	r4 := take("d/1", "fast", "d")

	// slow frees one: a/1, whose check just ended, may not take it again while c/1 waits; c/1 may.
	r1()
	refused("a/1", "slow", "a")
	r5 := take("c/1", "slow", "c")
	// Later, a/1 comes back to a full share and waits; c/1 ends, and may not go again before a/1.
	now = now.Add(recent)
	refused("a/1", "slow", "a")
	r5()
	refused("c/1", "slow", "c")
	r6 := take("a/1", "slow", "a")
	r6()
	// With no one waiting any more (records last only a while), one that just ran goes again.
	now = now.Add(2 * recent)
	r7 := take("a/1", "slow", "a")
	for _, r := range []func(){r2, r3, r4, r7} {
		r()
	}
	now = now.Add(2 * recent)
	if _, ok := s.take("e/1", "other", "e"); !ok {
		t.Fatal("e/1 refused with nothing in flight")
	}
	if len(s.waiting) != 0 || len(s.ran) != 0 {
		t.Errorf("left behind: waiting %v, ran %v", s.waiting, s.ran)
	}
	if one := newShares(1); one.limit != 1 {
		t.Errorf("1 worker: a share of %d, want 1", one.limit)
	}
}
