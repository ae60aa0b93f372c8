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

// imagediff says where a rebuilt image differs from a released one (hack/release.sh ensure): which layers,
// each with the build step that made it, and which fields of the image configuration. It reads the images'
// manifests and configurations (skopeo inspect --raw, --config --raw); the layers themselves need not exist.
//
//	go run ./hack/imagediff RECORDED_MANIFEST RECORDED_CONFIG REBUILT_MANIFEST REBUILT_CONFIG
//
// skopeo and podman compare digests but do not say why two differ, hence this one.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
)

type manifest struct {
	Config struct {
		Digest string `json:"digest"`
	} `json:"config"`
	Layers []struct {
		Digest string `json:"digest"`
		Size   int64  `json:"size"`
	} `json:"layers"`
}

type history struct {
	CreatedBy  string `json:"created_by"`
	EmptyLayer bool   `json:"empty_layer"`
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: imagediff RECORDED_MANIFEST RECORDED_CONFIG REBUILT_MANIFEST REBUILT_CONFIG")
		os.Exit(2)
	}
	n, err := diff(os.Stdout, os.Args[1], os.Args[2], os.Args[3], os.Args[4])
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagediff:", err)
		os.Exit(2)
	}
	if n > 0 {
		os.Exit(1)
	}
}

func read(path string, into any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// steps names the step that made each layer: the history entries that are not empty layers, in order.
func steps(config map[string]any) []string {
	raw, _ := json.Marshal(config["history"])
	var hs []history
	_ = json.Unmarshal(raw, &hs)
	var out []string
	for _, h := range hs {
		if !h.EmptyLayer {
			out = append(out, h.CreatedBy)
		}
	}
	return out
}

// diff writes one line per difference and returns how many it found.
func diff(w io.Writer, recManifest, recConfig, newManifest, newConfig string) (int, error) {
	var rm, nm manifest
	var rc, nc map[string]any
	for _, f := range []struct {
		path string
		into any
	}{{recManifest, &rm}, {recConfig, &rc}, {newManifest, &nm}, {newConfig, &nc}} {
		if err := read(f.path, f.into); err != nil {
			return 0, err
		}
	}
	n := 0
	say := func(format string, args ...any) {
		n++
		fmt.Fprintf(w, format+"\n", args...)
	}
	recSteps, newSteps := steps(rc), steps(nc)
	for i := 0; i < max(len(rm.Layers), len(nm.Layers)); i++ {
		var was, is, step string
		if i < len(rm.Layers) {
			was = rm.Layers[i].Digest
		}
		if i < len(nm.Layers) {
			is = nm.Layers[i].Digest
		}
		if i < len(newSteps) {
			step = newSteps[i]
		} else if i < len(recSteps) {
			step = recSteps[i]
		}
		if was != is {
			say("layer %d (%s): released %s, rebuilt %s", i+1, step, orNone(was), orNone(is))
		}
	}
	// The configuration's fields, but its layer list (said above) and history (the steps).
	var keys []string
	for k := range rc {
		keys = append(keys, k)
	}
	for k := range nc {
		if _, ok := rc[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "rootfs" {
			continue
		}
		if k == "history" {
			if !reflect.DeepEqual(recSteps, newSteps) {
				say("build steps: released %q, rebuilt %q", recSteps, newSteps)
			}
			continue
		}
		if !reflect.DeepEqual(rc[k], nc[k]) {
			a, _ := json.Marshal(rc[k])
			b, _ := json.Marshal(nc[k])
			say("config %s: released %s, rebuilt %s", k, a, b)
		}
	}
	if n == 0 && rm.Config.Digest != nm.Config.Digest {
		say("config digest: released %s, rebuilt %s (the same fields, serialized differently)", rm.Config.Digest, nm.Config.Digest)
	}
	return n, nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
