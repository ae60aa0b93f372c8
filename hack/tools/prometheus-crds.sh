#!/usr/bin/env bash
# Writes the Prometheus Operator's CRDs (ServiceMonitor, PrometheusRule, ...) into bin/prometheus-crds, for the
# test that applies config/prometheus to a real API server (test/monitoring).
#
# Generated with controller-gen from the API module pinned in hack/tools/prometheus-operator, as the Prometheus
# Operator generates its own: the CRD files of its releases are in no Go module the proxy serves. Cached per
# version in ${XDG_CACHE_HOME:-$HOME/.cache}/operator101/ like the other tools.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/operator101
bindir=${LOCALBIN:-$root/bin}
mod=github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring
mkdir -p "$cache" "$bindir"

cd "$here/prometheus-operator"
version=$(go list -mod=readonly -m -f '{{.Version}}' "$mod")
dest=$cache/prometheus-crds-$version
stamp=$(cat go.mod go.sum "$bindir/controller-gen" | sha256sum | cut -c1-16)
(
	flock 9
	if [[ "$(cat "$dest/.stamp" 2>/dev/null)" != "$stamp" ]]; then
		rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
		"$bindir/controller-gen" crd:allowDangerousTypes=true paths="$mod/v1" output:crd:dir="$dest.tmp"
		echo "$stamp" >"$dest.tmp/.stamp"
		rm -rf "$dest" && mv "$dest.tmp" "$dest"
		echo "==> generated the Prometheus Operator's CRDs $version into $dest"
	else
		echo "==> prometheus-crds $version: cached"
	fi
) 9>"$cache/.prometheus-crds.lock"
ln -sfn "$dest" "$bindir/prometheus-crds"
