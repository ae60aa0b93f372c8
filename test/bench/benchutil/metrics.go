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
	"bufio"
	"strconv"
	"strings"
)

// MetricSum reads Prometheus text exposition and sums the samples of metric name by the value of one label
// (e.g. controller_runtime_reconcile_total by "controller"). Samples without the label sum under "".
func MetricSum(text, name, label string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		labels := ""
		switch {
		case strings.HasPrefix(rest, "{"):
			end := strings.LastIndex(rest, "}")
			if end < 0 {
				continue
			}
			labels, rest = rest[1:end], rest[end+1:]
		case strings.HasPrefix(rest, " "):
		default:
			continue // a longer metric name with the same prefix
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		out[labelValue(labels, label)] += v
	}
	return out
}

// labelValue finds key="value" in a label list like a="x",b="y" (values without commas or escaped quotes,
// as controller-runtime's are).
func labelValue(labels, key string) string {
	for _, kv := range strings.Split(labels, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == key {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// MemStats reads the "# Name = value" lines of Go's /debug/pprof/heap?debug=1 page (runtime.MemStats) and
// returns the first number of each, in MiB for the byte counts named in memStatBytes.
func MemStats(text string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "# ")
		if !ok {
			continue
		}
		name, val, ok := strings.Cut(rest, " = ")
		if !ok || !memStatBytes[name] {
			continue
		}
		f := strings.Fields(val)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		out[name] = v / (1 << 20)
	}
	return out
}

var memStatBytes = map[string]bool{"Sys": true, "HeapAlloc": true, "HeapSys": true, "HeapIdle": true,
	"HeapInuse": true, "HeapReleased": true, "Stack": true, "MSpan": true, "GCSys": true, "OtherSys": true,
	"NextGC": true}
