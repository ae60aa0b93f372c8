//go:build tools

// Package tools pins the binaries this wrapper module builds.
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
