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

// Package docs reads the project's Markdown: the shell blocks a test runs and the YAML blocks it applies as
// written (Blocks), and what the docs cite, which docs_test.go holds to the tree.
package docs

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Marker is the HTML comment that marks the ```sh block right after it as one a test runs, or the ```yaml block
// as one it applies, by name: <!-- e2e:quickstart --> (README.md), <!-- e2e:upgrade --> (docs/admin/upgrade.md),
// <!-- e2e:uninstall --> (docs/admin/uninstall.md), <!-- e2e:restricted --> (docs/guides/myweb.md and
// appservice.md).
const Marker = "<!-- e2e:%s -->"

// Blocks returns, in order, the body of every ```sh or ```yaml block of the Markdown file path that the line
// right before it marks with Marker for name. It fails when there is none, or when a marker is not followed by
// such a fence.
func Blocks(path, name string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the blocks %q: %w", name, err)
	}
	defer func() { _ = f.Close() }()
	marker := fmt.Sprintf(Marker, name)
	var blocks []string
	var cur *strings.Builder
	marked, line := false, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case cur != nil && strings.TrimSpace(text) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(text + "\n")
		case marked && (text == "```sh" || text == "```yaml"):
			cur = &strings.Builder{}
			marked = false
		case marked:
			return nil, fmt.Errorf("%s:%d: %s is not followed by a ```sh or ```yaml block", path, line-1, marker)
		case strings.TrimSpace(text) == marker:
			marked = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if cur != nil || marked {
		return nil, fmt.Errorf("%s: a block %q does not end", path, name)
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%s: no block marked %s", path, marker)
	}
	return blocks, nil
}
