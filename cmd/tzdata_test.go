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
	"go/parser"
	"go/token"
	"strconv"
	"testing"
	"time"
)

// TestZoneDatabaseCompiledIn: the manager links Go's time zone database (time/tzdata), so an At's timeZone
// resolves in the released image, which is FROM scratch and has no /usr/share/zoneinfo. A process cannot be
// kept from the system's database (Go reads fixed paths before its embedded copy), so the test reads main.go's
// imports, and checks a zone resolves in this binary, which links what cmd links.
func TestZoneDatabaseCompiledIn(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time/tzdata" {
			found = true
		}
	}
	if !found {
		t.Fatal(`cmd/main.go does not import _ "time/tzdata": an At's timeZone fails in the image, which has no zone database`)
	}
	if _, err := time.LoadLocation("Europe/Berlin"); err != nil {
		t.Fatalf("Europe/Berlin: %v", err)
	}
}
