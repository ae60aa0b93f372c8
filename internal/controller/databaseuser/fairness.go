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
	"maps"
	"math/rand/v2"
	"sync"
	"time"
)

// Fair shares. One manager's few workers serve every tenant's DatabaseUsers, and a check may wait on a
// database server (up to the reconcile's deadline). So that one slow server, or one namespace with many
// DatabaseUsers changing at once, cannot hold every worker, a target and a namespace may each have at most
// half the workers (at least one) checking at once; a DatabaseUser over its share is put back in the queue for
// a moment, which costs no read and no write, and a worker goes on to the next. Written here because
// controller-runtime's queues order keys but know nothing of what a key waits on.

// busyRetry is how soon a DatabaseUser put back for its target's or namespace's share is looked at again
// (with up to as much again of jitter, so that many put back at once do not come back at once).
const busyRetry = 500 * time.Millisecond

// shares counts the checks in flight per target and per namespace, and who was put back for each lately. A
// DatabaseUser whose check just ended does not take its share again while others wait for it: a failed check
// is retried at once, and would otherwise take the share again and again. Those waiting get no order among
// them (each comes back at random within busyRetry), so no two lines can ever wait for each other.
type shares struct {
	limit   int
	mu      sync.Mutex
	busy    map[string]int                  // "target/NAME" and "namespace/NAME"
	waiting map[string]map[string]time.Time // by the same keys: who was put back, and when last
	ran     map[string]time.Time            // who ended a check, and when
	now     func() time.Time                // the clock, for tests
	pruned  time.Time                       // when the records of those gone were last dropped
}

// recent is how long a record of waiting or of a check that ended counts: as long as one put back may take
// to come back.
const recent = 2 * busyRetry

func newShares(workers int) *shares {
	return &shares{limit: max(1, workers/2), busy: map[string]int{}, waiting: map[string]map[string]time.Time{},
		ran: map[string]time.Time{}, now: time.Now}
}

// take counts a check of who (a DatabaseUser's namespace/name) against target's and namespace's shares when
// both have room, unless who just ended a check and another waits for either share. release gives it back. ok
// is false, and who is recorded as waiting, when it may not go.
func (s *shares) take(who, target, namespace string) (release func(), ok bool) {
	keys := [2]string{"target/" + target, "namespace/" + namespace}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.prune(now)
	justRan := now.Sub(s.ran[who]) < recent
	for _, k := range keys {
		othersWait := len(s.waiting[k]) > 1 || len(s.waiting[k]) == 1 && s.waiting[k][who].IsZero()
		if s.busy[k] >= s.limit || justRan && othersWait {
			for _, k := range keys {
				if s.waiting[k] == nil {
					s.waiting[k] = map[string]time.Time{}
				}
				s.waiting[k][who] = now
			}
			return nil, false
		}
	}
	delete(s.ran, who)
	for _, k := range keys {
		s.busy[k]++
		if delete(s.waiting[k], who); len(s.waiting[k]) == 0 {
			delete(s.waiting, k)
		}
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ran[who] = s.now()
		for _, k := range keys {
			if s.busy[k]--; s.busy[k] == 0 {
				delete(s.busy, k)
			}
		}
	}, true
}

// prune drops, at most once a second, the records older than recent.
func (s *shares) prune(now time.Time) {
	if now.Sub(s.pruned) < time.Second {
		return
	}
	s.pruned = now
	for k, line := range s.waiting {
		maps.DeleteFunc(line, func(_ string, at time.Time) bool { return now.Sub(at) >= recent })
		if len(line) == 0 {
			delete(s.waiting, k)
		}
	}
	maps.DeleteFunc(s.ran, func(_ string, at time.Time) bool { return now.Sub(at) >= recent })
}

// retryAfter is when a DatabaseUser put back is looked at again.
func retryAfter() time.Duration {
	return busyRetry + rand.N(busyRetry)
}
