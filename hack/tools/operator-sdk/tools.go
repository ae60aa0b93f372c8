//go:build tools

// Package tools pins the binaries this wrapper module builds.
package tools

import (
	_ "github.com/operator-framework/operator-sdk/cmd/operator-sdk"
	_ "github.com/operator-framework/operator-sdk/images/scorecard-test"
)
