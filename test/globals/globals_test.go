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

// Package globals keeps internal/ free of package-level mutable state: every memo, cache, counter or pool
// belongs to a value the manager builds once and passes in (reconciler.Memory), not to a package.
package globals

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tables are the package-level variables of internal/ that are constant tables: set once where they are
// declared and never written, which TestNoPackageState checks. Go has no constant of their types (a slice, a
// map, a struct of functions). Each is named "directory.name", directory relative to internal/.
var tables = []string{
	// The two AppService APIs' accessors: a struct of functions (appservice_controller.go).
	"controller/appservice.v1API",
	"controller/appservice.batchAPI",
	// The labels every cached child labelled as operator101's shares: one map, which transforms replace and
	// never write into (apply/cache.go).
	"controller/apply.managedLabels",
	// The one request the Upgradeable gate's queue holds.
	"controller/at.gateRequest",
	// The names of the obstacles to adopting an account, for messages.
	"mysqlaccount.obstacleNames",
	// The authentication plugins whose password exchange is a scramble.
	"mysqlaccount.scramblePlugins",
	// The statements that create the claim table.
	"mysqlaccount.createClaimTable",
	// The schemas no tenant may be granted.
	"mysqlaccount.SystemSchemas",
	// The privilege columns of mysql.user, in order.
	"mysqlaccount.privilegeColumns",
}

// allowedCall tells whether fun is one of the calls whose result a package-level variable may hold: error values, regular expressions
// and the metrics registry's collectors. None of them is state a reconcile writes.
func allowedCall(fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	switch pkg.Name {
	case "errors":
		return sel.Sel.Name == "New"
	case "fmt":
		return sel.Sel.Name == "Errorf"
	case "regexp":
		return sel.Sel.Name == "MustCompile"
	case "prometheus":
		return strings.HasPrefix(sel.Sel.Name, "New")
	}
	return false
}

// TestNoPackageState lists every package-level variable of the non-test Go files under internal/ and fails on
// any that is not an error value, a regular expression, a metrics collector or a constant table listed in
// tables; and on any write, in the same package, to a table listed there.
func TestNoPackageState(t *testing.T) {
	root := filepath.Join("..", "..", "internal")
	pkgs := map[string][]*ast.File{} // directory relative to internal/ → files
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkgs[filepath.ToSlash(rel)] = append(pkgs[filepath.ToSlash(rel)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for dir, files := range pkgs {
		for _, f := range files {
			for _, decl := range f.Decls {
				g, ok := decl.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if name.Name == "_" {
							continue // a compile-time assertion (var _ I = T{})
						}
						id := dir + "." + name.Name
						seen[id] = true
						var value ast.Expr
						if i < len(vs.Values) {
							value = vs.Values[i]
						}
						if call, ok := value.(*ast.CallExpr); ok && allowedCall(call.Fun) {
							continue
						}
						if slices.Contains(tables, id) {
							continue
						}
						t.Errorf("%s: package-level variable %s holds state: make it part of a value the manager "+
							"builds once (reconciler.Memory), a constant, or, if it is a table never written, list it in "+
							"tables with why", fset.Position(name.Pos()), name.Name)
					}
				}
			}
		}
		for _, table := range tables {
			pkg, name, _ := strings.Cut(table, ".")
			if pkg != dir {
				continue
			}
			for _, f := range files {
				for _, pos := range writes(f, name) {
					t.Errorf("%s: the table %s is written", fset.Position(pos), table)
				}
			}
		}
	}
	for _, id := range tables {
		if !seen[id] {
			t.Errorf("%s is listed but is no package-level variable of internal/ any more: remove it from the list", id)
		}
	}
}

// writes lists where f assigns to name, to an element or field of it, increments or decrements it, or takes
// its address (through which it could be written).
func writes(f *ast.File, name string) []token.Pos {
	var out []token.Pos
	names := func(e ast.Expr) bool {
		for {
			switch x := e.(type) {
			case *ast.Ident:
				return x.Name == name
			case *ast.IndexExpr:
				e = x.X
			case *ast.SelectorExpr:
				e = x.X
			case *ast.StarExpr:
				e = x.X
			case *ast.ParenExpr:
				e = x.X
			default:
				return false
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				return true
			}
			for _, l := range s.Lhs {
				if names(l) {
					out = append(out, l.Pos())
				}
			}
		case *ast.IncDecStmt:
			if names(s.X) {
				out = append(out, s.Pos())
			}
		case *ast.UnaryExpr:
			if s.Op == token.AND && names(s.X) {
				out = append(out, s.Pos())
			}
		case *ast.ValueSpec:
			return true
		}
		return true
	})
	return out
}
