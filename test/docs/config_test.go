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
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/operator-framework/operator-lib/proxy"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// module is the Go module path of the tree, which import paths of its own packages begin with.
const module = "github.com/operator101/operator101"

// configSettings reads cmd/config.go and returns every flag it defines and every environment variable it reads:
// the first string argument of each method called on the flag.FlagSet it makes, the flags of each
// BindFlags(fs) (controller-runtime's zap options), the argument of each getenv, os.Getenv or os.LookupEnv
// call (a string, or a constant of one of the tree's packages), and operator-lib's proxy variables when it calls
// proxy.ReadProxyVarsFromEnv. What it cannot resolve is an error, so that a new way of reading a setting is not
// missed silently.
func configSettings(t *testing.T) (flags, vars []string) {
	t.Helper()
	path := filepath.Join(root, "cmd", "config.go")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]string{} // name → import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
	}
	flagSets := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == 1 && len(as.Rhs) == 1 {
			if call, ok := as.Rhs[0].(*ast.CallExpr); ok && isCall(call, "flag", "NewFlagSet") {
				if id, ok := as.Lhs[0].(*ast.Ident); ok {
					flagSets[id.Name] = true
				}
			}
		}
		return true
	})
	if len(flagSets) == 0 {
		t.Fatal("cmd/config.go makes no flag.FlagSet: this test no longer knows where its flags are")
	}
	resolve := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(e.Value); err == nil {
				return s
			}
		case *ast.SelectorExpr:
			if pkg, ok := e.X.(*ast.Ident); ok && strings.HasPrefix(imports[pkg.Name], module+"/") {
				return constValue(t, filepath.Join(root, strings.TrimPrefix(imports[pkg.Name], module+"/")), e.Sel.Name)
			}
		}
		t.Errorf("%s: cannot tell which setting %s reads", fset.Position(e.Pos()), types(e))
		return ""
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch fn := call.Fun.(type) {
		case *ast.Ident:
			if fn.Name == "getenv" && len(call.Args) == 1 {
				vars = append(vars, resolve(call.Args[0]))
			}
		case *ast.SelectorExpr:
			recv, _ := fn.X.(*ast.Ident)
			switch {
			case recv != nil && flagSets[recv.Name]:
				if fn.Sel.Name == "Parse" || fn.Sel.Name == "SetOutput" || fn.Sel.Name == "NArg" || fn.Sel.Name == "Args" {
					return true
				}
				for _, a := range call.Args {
					if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						flags = append(flags, resolve(lit))
						return true
					}
				}
				t.Errorf("%s: %s.%s names no flag this test can read", fset.Position(call.Pos()), recv.Name, fn.Sel.Name)
			case fn.Sel.Name == "BindFlags":
				fs := flag.NewFlagSet("zap", flag.ContinueOnError)
				(&zap.Options{}).BindFlags(fs)
				fs.VisitAll(func(fl *flag.Flag) { flags = append(flags, fl.Name) })
			case isCall(call, "os", "Getenv") || isCall(call, "os", "LookupEnv"):
				vars = append(vars, resolve(call.Args[0]))
			case isCall(call, "proxy", "ReadProxyVarsFromEnv"):
				vars = append(vars, proxy.ProxyEnvNames...)
			case isCall(call, "os", "Environ"):
				t.Errorf("%s: os.Environ: every variable is read; this test cannot tell which", fset.Position(call.Pos()))
			}
		}
		return true
	})
	return flags, vars
}

func isCall(call *ast.CallExpr, pkg, name string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}

func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return types(e.X) + "." + e.Sel.Name
	}
	return "an expression"
}

// constValue is the value of the string constant name declared in the package in dir.
func constValue(t *testing.T, dir, name string) string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name == name && i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
							v, _ := strconv.Unquote(lit.Value)
							return v
						}
					}
				}
			}
		}
	}
	t.Errorf("no string constant %s in %s", name, dir)
	return ""
}

// TestConfigDocListsEverySetting: docs/admin/configuration.md names every flag cmd/config.go defines (as
// `--name`) and every environment variable it reads (as `NAME`), and its table of flags names no flag the
// manager does not have.
func TestConfigDocListsEverySetting(t *testing.T) {
	flags, vars := configSettings(t)
	if len(flags) < 10 || len(vars) < 10 {
		t.Fatalf("read %d flags and %d variables from cmd/config.go: the test no longer finds them (%v %v)", len(flags), len(vars), flags, vars)
	}
	raw, err := os.ReadFile(filepath.Join(root, "docs", "admin", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	defined := map[string]bool{}
	for _, fl := range flags {
		defined[fl] = true
		if !strings.Contains(doc, "`--"+fl+"`") {
			t.Errorf("cmd/config.go defines the flag --%s, which docs/admin/configuration.md does not list", fl)
		}
	}
	for _, v := range vars {
		if !strings.Contains(doc, "`"+v+"`") {
			t.Errorf("cmd/config.go reads the variable %s, which docs/admin/configuration.md does not list", v)
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		if name, ok := strings.CutPrefix(line, "| `--"); ok {
			if name, _, _ = strings.Cut(name, "`"); !defined[name] {
				t.Errorf("docs/admin/configuration.md lists --%s, which cmd/config.go does not define", name)
			}
		}
	}
}
