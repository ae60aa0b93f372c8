//go:build tools

// Package tools pins the binaries this wrapper module builds.
package tools

import _ "go.etcd.io/etcd/server/v3"
