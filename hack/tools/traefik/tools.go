//go:build tools

// Package tools pins the binaries this wrapper module builds.
package tools

import _ "github.com/traefik/traefik/v3/cmd/traefik"
