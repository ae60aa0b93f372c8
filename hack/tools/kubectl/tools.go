//go:build tools

// Package tools pins the binaries this wrapper module builds.
package tools

import _ "k8s.io/kubernetes/cmd/kubectl"
