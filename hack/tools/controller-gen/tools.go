//go:build tools

// Package tools pins the binaries this wrapper module builds.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
