//go:build tools

// Package tools pins the Prometheus Operator's API types, from which hack/tools/prometheus-crds.sh generates its
// CRDs for the tests that apply config/prometheus.
package tools

import _ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
