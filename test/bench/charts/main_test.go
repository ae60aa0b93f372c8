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

package main

import "testing"

// TestRoundLines: a contender with one round is one solid curve under its own name; with more, every round
// with completions is a curve of its own in the same color, named by its round, the later ones dashed.
func TestRoundLines(t *testing.T) {
	one := roundLines("peer", []float64{1, 2}, []round{{Round: 1}}, colorPeer)
	if len(one) != 1 || one[0].name != "peer" || one[0].dashed || len(one[0].xy) != 5 {
		t.Errorf("one round: %+v, want one solid curve named peer with 5 points", one)
	}
	two := roundLines("operator101", []float64{1, 2}, []round{{Round: 1}, {Round: 2, AvailableSeconds: []float64{1.5, 2.5, 3}}}, colorOperator)
	if len(two) != 2 || two[0].name != "operator101, round 1" || two[0].dashed ||
		two[1].name != "operator101, round 2" || !two[1].dashed || len(two[1].xy) != 7 || two[1].color != colorOperator {
		t.Errorf("two rounds: %+v, want round 1 solid and round 2 dashed, in one color", two)
	}
}
