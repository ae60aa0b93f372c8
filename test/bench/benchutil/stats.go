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

package benchutil

import (
	"math"
	"sort"
	"time"
)

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of xs; 0 for no values. xs is not changed.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

// Max is the largest of xs; 0 for no values.
func Max(xs []float64) float64 {
	m := 0.0
	for i, x := range xs {
		if i == 0 || x > m {
			m = x
		}
	}
	return m
}

// SteadyRate is objects per second between the 10% and the 90% marks of completion times (offsets from the
// start): the rate once the pipeline is full, without the ramp-up and the tail. 0 for fewer than 10 values.
func SteadyRate(done []time.Duration) float64 {
	if len(done) < 10 {
		return 0
	}
	s := append([]time.Duration(nil), done...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	lo, hi := len(s)/10, len(s)*9/10-1
	dt := (s[hi] - s[lo]).Seconds()
	if dt <= 0 {
		return 0
	}
	return float64(hi-lo) / dt
}
