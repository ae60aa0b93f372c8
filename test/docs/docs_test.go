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

package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// root is the repository's root, two levels above this package.
var root = func() string {
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return r
}()

// doc is one Markdown file of the project: README.md or a file under docs/.
type doc struct{ path, text string }

// docPaths is README.md and every Markdown file under docs/, in sections or not.
func docPaths(t *testing.T) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil || len(paths) == 0 {
		t.Fatalf("docs/**/*.md: %v (%d files)", err, len(paths))
	}
	return append(paths, filepath.Join(root, "README.md"))
}

func readDocs(t *testing.T) []doc {
	t.Helper()
	paths := docPaths(t)
	var docs []doc
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		docs = append(docs, doc{rel, string(b)})
	}
	return docs
}

// inline is every `code span` of text outside fenced blocks; fenced is every line inside them.
func spans(text string) (inline []string, fenced []string) {
	span := regexp.MustCompile("`([^`\n]+)`")
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			fenced = append(fenced, line)
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			inline = append(inline, m[1])
		}
	}
	return inline, fenced
}

// prose is text without its fenced blocks and code spans, where a link is a link (a CEL rule in a code span of
// the generated reference holds "](").
func prose(text string) string {
	var b strings.Builder
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			b.WriteString(codeSpan.ReplaceAllString(line, "``") + "\n")
		}
	}
	return b.String()
}

var codeSpan = regexp.MustCompile("`[^`\n]+`")

// goFiles is every .go file of the tree (build tags included), by package directory.
func goFiles(t *testing.T) map[string][]string {
	t.Helper()
	files := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[filepath.Dir(p)] = append(files[filepath.Dir(p)], string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var citedTest = regexp.MustCompile(`^((?:Test|Fuzz|Benchmark)[A-Z0-9_][A-Za-z0-9_]*)((?:/[A-Za-z0-9_]+)*)$`)

// TestCitedTestsExist: every test, fuzz test or benchmark a doc names in backticks (`TestX`, or `TestX/Step`
// for a subtest) is a function of the tree, and each step of a subtest a string in that function's package (or
// the end of an exported identifier there, a constant that holds it).
func TestCitedTestsExist(t *testing.T) {
	files := goFiles(t)
	funcs := map[string][]string{} // name → package directories
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)\w+)\(`)
	for dir, srcs := range files {
		for _, src := range srcs {
			for _, m := range decl.FindAllStringSubmatch(src, -1) {
				funcs[m[1]] = append(funcs[m[1]], dir)
			}
		}
	}
	cited := 0
	for _, d := range readDocs(t) {
		inline, _ := spans(d.text)
		for _, s := range inline {
			m := citedTest.FindStringSubmatch(s)
			if m == nil {
				continue
			}
			cited++
			dirs, ok := funcs[m[1]]
			if !ok {
				t.Errorf("%s cites `%s`: no function %s in the tree", d.path, s, m[1])
				continue
			}
			for _, step := range strings.Split(strings.TrimPrefix(m[2], "/"), "/") {
				if step == "" {
					continue
				}
				// The step's name as a string, or a constant whose value it is (InstallModeTypeOwnNamespace).
				named := regexp.MustCompile(`"` + regexp.QuoteMeta(step) + `"|\b[A-Z]\w*` + regexp.QuoteMeta(step) + `\b`)
				found := false
				for _, dir := range dirs {
					for _, src := range files[dir] {
						found = found || named.MatchString(src)
					}
				}
				if !found {
					t.Errorf("%s cites `%s`: no subtest %q in %s's package", d.path, s, step, m[1])
				}
			}
		}
	}
	if cited < 50 {
		t.Errorf("only %d test names cited in the docs: the pattern no longer finds them", cited)
	}
}

// makeTargets is every target of the Makefile and hack/lab.mk, which it includes.
func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	targets := map[string]bool{}
	rule := regexp.MustCompile(`(?m)^([A-Za-z0-9_.%-]+(?:[ \t]+[A-Za-z0-9_.%-]+)*)[ \t]*:([^=]|$)`)
	for _, f := range []string{"Makefile", "hack/lab.mk"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range rule.FindAllStringSubmatch(string(b), -1) {
			for _, name := range strings.Fields(m[1]) {
				targets[name] = true
			}
		}
	}
	if !targets["ci"] || !targets["test-e2e"] || !targets["demo"] {
		t.Fatalf("the Makefile's targets were not read: %v", targets)
	}
	return targets
}

// makeInvocation finds `make target... VAR=value...` in a line of shell or a code span.
var makeInvocation = regexp.MustCompile(`(?:^|[\s;&|(])make\s+([^#]*)`)

// quoted is a shell string in quotes, which may hold spaces (BENCH_ARGS="-n 3000").
var quoted = regexp.MustCompile(`"[^"]*"|'[^']*'`)

// TestCitedMakeTargetsExist: every `make <target>` a doc names (in a code span or a shell block) is a target of
// the Makefile or hack/lab.mk.
func TestCitedMakeTargetsExist(t *testing.T) {
	targets := makeTargets(t)
	cited := 0
	for _, d := range readDocs(t) {
		inline, fenced := spans(d.text)
		for _, s := range append(inline, fenced...) {
			if i := strings.Index(s, "#"); i >= 0 && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
				s = s[:i] // a shell comment
			}
			s = quoted.ReplaceAllString(s, "''")
			for _, m := range makeInvocation.FindAllStringSubmatch(s, -1) {
				for _, w := range strings.Fields(m[1]) {
					if strings.ContainsAny(w, "=<>$&|;()'\"") || strings.HasPrefix(w, "-") {
						if strings.ContainsAny(w, "&|;") {
							break
						}
						continue
					}
					w = strings.TrimRight(w, ".,:")
					cited++
					if !targets[w] {
						t.Errorf("%s cites `make %s`: no such target in the Makefile or hack/lab.mk (in %q)", d.path, w, s)
					}
				}
			}
		}
	}
	if cited < 30 {
		t.Errorf("only %d make targets cited in the docs: the pattern no longer finds them", cited)
	}
}

// upstream are path prefixes that docs cite from other projects' trees (operator-controller, in olmv1.md),
// not this one's.
var upstream = []string{"internal/operator-controller/", "api/v1/", "helm/", "docs/project/", "docs/howto/",
	"docs/concepts/", "docs/tutorials/", "docs/draft/", "pkg/"}

// placeholder is a path with a part to fill in (hack/cluster/images/NAME/, api/G/V/); goIdent a Go identifier
// qualified by its package's path (internal/controller.LeaderElectionID).
var (
	placeholder = regexp.MustCompile(`(^|/)([A-Z]+|[A-Za-z])(/|$|_)`)
	goIdent     = regexp.MustCompile(`\.[A-Z][A-Za-z0-9]*$`)
)

var repoPath = regexp.MustCompile(`^(api|cmd|config|docs|hack|internal|test|bundle|catalog)/[A-Za-z0-9_./-]*$`)

// TestCitedPathsExist: every repository path a doc names in a code span (`config/samples/`, `hack/demo.sh`), and
// every relative link ([x](olm.md#upgrade)), exists in the tree.
func TestCitedPathsExist(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#\s]+)(?:#[^)]*)?\)`)
	cited := 0
	for _, d := range readDocs(t) {
		inline, _ := spans(d.text)
		for _, s := range inline {
			if !repoPath.MatchString(s) || strings.Contains(s, "...") || placeholder.MatchString(s) || goIdent.MatchString(s) {
				continue
			}
			skip := false
			for _, u := range upstream {
				skip = skip || strings.HasPrefix(s, u)
			}
			if skip {
				continue
			}
			cited++
			if _, err := os.Stat(filepath.Join(root, s)); err != nil {
				t.Errorf("%s cites `%s`: %v", d.path, s, err)
			}
		}
		for _, m := range link.FindAllStringSubmatch(prose(d.text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			cited++
			if _, err := os.Stat(filepath.Join(root, filepath.Dir(d.path), target)); err != nil {
				t.Errorf("%s links to %s: %v", d.path, target, err)
			}
		}
	}
	if cited < 50 {
		t.Errorf("only %d paths cited in the docs: the pattern no longer finds them", cited)
	}
}

// TestRunBlocks: the blocks the e2e runs as written (README.md's quick start and release, docs/admin/upgrade.md's upgrade and
// docs/admin/uninstall.md's uninstall) are found and are valid bash; the quick start's catalog is the newest release's
// (config/catalog/releases), and the uninstall removes every kind, both AppService groups included. The YAML it
// applies as written in a restricted namespace (docs/guides/myweb.md's and appservice.md's) is found, one block
// each (TestDocManifestsValidate holds it to the CRDs).
func TestRunBlocks(t *testing.T) {
	for _, file := range []string{"docs/guides/myweb.md", "docs/guides/appservice.md"} {
		blocks, err := Blocks(filepath.Join(root, file), "restricted")
		if err != nil {
			t.Fatal(err)
		}
		if len(blocks) != 1 {
			t.Errorf("%s has %d blocks marked restricted, want 1", file, len(blocks))
		}
	}
	all := map[string]string{}
	for _, b := range []struct{ file, name string }{
		{"README.md", "quickstart"}, {"docs/admin/upgrade.md", "upgrade"}, {"docs/admin/uninstall.md", "uninstall"}, {"README.md", "release"},
	} {
		blocks, err := Blocks(filepath.Join(root, b.file), b.name)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range blocks {
			cmd := exec.Command("bash", "-n")
			cmd.Stdin = strings.NewReader(block)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s, block %s #%d is not valid bash: %v\n%s", b.file, b.name, i+1, err, out)
			}
		}
		all[b.name] = strings.Join(blocks, "\n")
	}
	releases, err := os.ReadFile(filepath.Join(root, "config", "catalog", "releases"))
	if err != nil {
		t.Fatal(err)
	}
	var newest string
	for _, line := range strings.Split(string(releases), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			newest = f[0]
		}
	}
	if want := "${CATALOG_IMG:-quay.io/operator101/operator101-catalog:v" + newest + "}"; !strings.Contains(all["quickstart"], want) {
		t.Errorf("the quick start's CatalogSource does not name the newest release's catalog by default (%s)", want)
	}
	var kinds []string
	for _, k := range []string{"databaseusers", "databases.mygroup.handsomeguy.cn", "mywebs", "appservices.app.example.com",
		"appservices.batch.schwarzeni.github.com", "ats", "databasetargets"} {
		if !regexp.MustCompile(`kubectl delete [^\n]*\b` + regexp.QuoteMeta(k) + `\b`).MatchString(all["uninstall"]) {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	if len(kinds) > 0 {
		t.Errorf("the uninstall deletes no %v", kinds)
	}
}

// anchors are the GitHub anchors of a Markdown text's headings: lower case, punctuation but '-' and '_' dropped,
// spaces as '-', a repeated one suffixed -1, -2, ...
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	punct := regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := strings.ReplaceAll(punct.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
		name := a
		for i := 1; out[name]; i++ {
			name = a + "-" + strconv.Itoa(i)
		}
		out[name] = true
	}
	return out
}

// TestLinkedAnchorsExist: every link to a heading ([x](#tls), [x](upgrade.md#the-upgrade-gate)) of a Markdown
// file of the tree names a heading that file has.
func TestLinkedAnchorsExist(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#\s]*)#([^)\s]+)\)`)
	cited := 0
	for _, d := range readDocs(t) {
		for _, m := range link.FindAllStringSubmatch(prose(d.text), -1) {
			target, anchor := m[1], m[2]
			if strings.Contains(target, "://") || (target != "" && !strings.HasSuffix(target, ".md")) {
				continue
			}
			text := d.text
			if target != "" {
				b, err := os.ReadFile(filepath.Join(root, filepath.Dir(d.path), target))
				if err != nil {
					continue // TestCitedPathsExist reports it
				}
				text = string(b)
			}
			cited++
			if !anchors(text)[anchor] {
				t.Errorf("%s links to %s#%s: no such heading there", d.path, target, anchor)
			}
		}
	}
	if cited < 50 {
		t.Errorf("only %d links to headings in the docs: the pattern no longer finds them", cited)
	}
}
