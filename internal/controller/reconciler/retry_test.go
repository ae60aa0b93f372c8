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

package reconciler

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// An object that keeps failing is retried at most MaxRetryDelay apart (controller-runtime's default grows to
// 1000 s), its first retries are as quick as the default's, and a success starts it again from the shortest delay.
func TestRetryDelayIsCapped(t *testing.T) {
	l := RetryLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}
	var delays []time.Duration
	for range 40 {
		delays = append(delays, l.When(req))
	}
	if delays[0] > 10*time.Millisecond {
		t.Errorf("first retry after %s, want about 5ms", delays[0])
	}
	for i, d := range delays {
		if d > MaxRetryDelay {
			t.Fatalf("retry %d after %s, want at most %s", i+1, d, MaxRetryDelay)
		}
	}
	if last := delays[len(delays)-1]; last != MaxRetryDelay {
		t.Errorf("after %d failures the delay is %s, want the cap %s", len(delays), last, MaxRetryDelay)
	}
	l.Forget(req)
	if d := l.When(req); d > 10*time.Millisecond {
		t.Errorf("after Forget the next retry waits %s, want about 5ms", d)
	}
}
