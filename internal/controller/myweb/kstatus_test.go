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

package myweb

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1 "github.com/operator101/operator101/api/operator/v1"
	"github.com/operator101/operator101/internal/controller/route"
	"github.com/operator101/operator101/test/kstatustest"
)

// kstatus, as Flux and kpt read it, tells each state of a MyWeb: a Degraded or stuck one is not Current.
func TestKstatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range kstatustest.RolloutCases(2) {
		t.Run(tc.Name, func(t *testing.T) {
			w := newWeb("w", ptr.To[int32](2), "<p>hi</p>", 30080)
			w.Generation = 1
			if tc.Deleting {
				w.DeletionTimestamp = &now
			}
			w.Status = Status(w, tc.Deployment, nil, nil, route.HTTPRouteState{}, "", tc.ApplyErr, now)
			if got := kstatustest.Compute(t, w, operatorv1.GroupVersion.WithKind("MyWeb")); got.Status != tc.Want {
				t.Errorf("kstatus says %s (%s), want %s; conditions %+v", got.Status, got.Message, tc.Want, w.Status.Conditions)
			}
		})
	}
}
