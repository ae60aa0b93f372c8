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

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// constGroup is one const block of an API package that declares condition types or reasons.
type constGroup struct {
	doc    string // the block's comment (or the single constant's)
	notes  []string
	consts []constant
}

type constant struct{ name, value, doc string }

// apiPackage is an API package with condition types or reasons.
type apiPackage struct {
	dir    string // relative to the api directory's parent: api/cnat/v1alpha1
	kinds  []string
	doc    string
	groups []constGroup
}

// isConditionName tells the constants the reference lists: condition types (Condition*) and reasons (Reason*),
// and every string constant of a package named conditions.
func isConditionName(pkg, name string) bool {
	return pkg == "conditions" || strings.HasPrefix(name, "Reason") || strings.HasPrefix(name, "Condition")
}

// readConditions parses every package under apiDir and returns those that declare condition types or reasons,
// in path order.
func readConditions(apiDir string) ([]apiPackage, error) {
	var dirs []string
	err := filepath.WalkDir(apiDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(dirs)
	var out []apiPackage
	for _, dir := range dirs {
		pkg, err := readPackage(apiDir, dir)
		if err != nil {
			return nil, err
		}
		if len(pkg.groups) > 0 {
			out = append(out, pkg)
		}
	}
	return out, nil
}

func readPackage(apiDir, dir string) (apiPackage, error) {
	rel, err := filepath.Rel(filepath.Dir(filepath.Clean(apiDir)), dir)
	if err != nil {
		return apiPackage{}, err
	}
	pkg := apiPackage{dir: filepath.ToSlash(rel)}
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return pkg, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") || strings.HasPrefix(filepath.Base(p), "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return pkg, err
		}
		if f.Doc != nil && pkg.doc == "" && !strings.Contains(f.Doc.Text(), "contains API Schema definitions") {
			pkg.doc = firstSentence(f.Doc.Text())
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			switch gd.Tok {
			case token.TYPE:
				for _, spec := range gd.Specs {
					ts := spec.(*ast.TypeSpec)
					if isRootType(gd, ts) {
						pkg.kinds = append(pkg.kinds, ts.Name.Name)
					}
				}
			case token.CONST:
				if g, ok := readConstGroup(f, gd, f.Name.Name); ok {
					pkg.groups = append(pkg.groups, g)
				}
			}
		}
	}
	return pkg, nil
}

// isRootType tells a kind: a type marked +kubebuilder:object:root=true that is not a List.
func isRootType(gd *ast.GenDecl, ts *ast.TypeSpec) bool {
	doc := ts.Doc
	if doc == nil {
		doc = gd.Doc
	}
	return doc != nil && strings.Contains(doc.Text()+rawComments(doc), "+kubebuilder:object:root=true") &&
		!strings.HasSuffix(ts.Name.Name, "List")
}

func rawComments(g *ast.CommentGroup) string {
	var b strings.Builder
	for _, c := range g.List {
		b.WriteString(c.Text + "\n")
	}
	return b.String()
}

// readConstGroup reads a const declaration whose constants are condition types or reasons: each untyped string
// constant with its comment, and the comments of the block that belong to no constant.
func readConstGroup(f *ast.File, gd *ast.GenDecl, pkgName string) (constGroup, bool) {
	var g constGroup
	if gd.Doc != nil {
		g.doc = cleanDoc(gd.Doc.Text())
	}
	attached := map[*ast.CommentGroup]bool{}
	for _, spec := range gd.Specs {
		vs := spec.(*ast.ValueSpec)
		if vs.Type != nil || len(vs.Values) != len(vs.Names) {
			continue // typed constants are enum values, which the CRD's schema lists
		}
		for i, name := range vs.Names {
			if !isConditionName(pkgName, name.Name) {
				continue
			}
			lit, ok := vs.Values[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				continue
			}
			value, err := strconv.Unquote(lit.Value)
			if err != nil {
				continue
			}
			c := constant{name: name.Name, value: value}
			if vs.Doc != nil {
				attached[vs.Doc] = true
				c.doc = cleanDoc(strings.TrimPrefix(strings.TrimSpace(vs.Doc.Text()), name.Name+":"))
			}
			if vs.Comment != nil {
				attached[vs.Comment] = true
				c.doc = strings.TrimSpace(c.doc + " " + cleanDoc(vs.Comment.Text()))
			}
			g.consts = append(g.consts, c)
		}
	}
	if len(g.consts) == 0 {
		return g, false
	}
	if gd.Lparen.IsValid() {
		for _, cg := range f.Comments {
			if cg.Pos() > gd.Lparen && cg.End() < gd.Rparen && !attached[cg] {
				g.notes = append(g.notes, cleanDoc(cg.Text()))
			}
		}
	}
	if len(gd.Specs) == 1 && g.doc != "" && g.consts[0].doc == "" {
		// A single constant with the declaration's comment: the comment is the constant's.
		g.consts[0].doc, g.doc = g.doc, ""
	}
	return g, true
}

// cleanDoc is a comment on one line, without kubebuilder markers.
func cleanDoc(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "+") {
			continue
		}
		lines = append(lines, l)
	}
	return oneLine(strings.Join(lines, " "))
}

func firstSentence(s string) string {
	s = oneLine(s)
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func writeConditions(b *strings.Builder, pkgs []apiPackage) {
	b.WriteString("## Conditions and reasons\n\n")
	b.WriteString("The condition types and reasons are Go constants of the API packages; a kind reports those of its ")
	b.WriteString("own package, and MyWeb and AppService those of `api/conditions` too. What to do about each reason: ")
	b.WriteString("the guide of the kind ([docs/README.md](../README.md)).\n\n")
	for _, p := range pkgs {
		fmt.Fprintf(b, "### `%s`", p.dir)
		if len(p.kinds) > 0 {
			sort.Strings(p.kinds)
			fmt.Fprintf(b, " (%s)", strings.Join(p.kinds, ", "))
		}
		b.WriteString("\n\n")
		if p.doc != "" {
			fmt.Fprintf(b, "%s\n\n", p.doc)
		}
		for _, g := range p.groups {
			if g.doc != "" {
				fmt.Fprintf(b, "%s\n\n", g.doc)
			}
			b.WriteString("| constant | value | meaning |\n|---|---|---|\n")
			for _, c := range g.consts {
				fmt.Fprintf(b, "| `%s` | `%s` | %s |\n", c.name, c.value, cell(c.doc))
			}
			b.WriteString("\n")
			for _, n := range g.notes {
				fmt.Fprintf(b, "%s\n\n", n)
			}
		}
	}
}
