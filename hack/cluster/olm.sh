#!/usr/bin/env bash
# Installs OLM v0.41.0 on the local cluster (make olm-install) from its own released manifests, taken from the
# pinned operator-lifecycle-manager module that hack/tools/install.sh olm builds from:
#   1. the CRDs of deploy/chart/crds, applied server-side (the CSV CRD is too big for client-side apply), and
#      waited for until Established (olm.yaml holds OperatorGroups);
#   2. deploy/upstream/quickstart/olm.yaml rendered by hack/cluster/olmyaml: the locally built OLM and opm
#      images, the catalog operator's flags with two dashes, no packageserver CSV, no operatorhub.io catalog;
#   3. waits until the olm-operator and catalog-operator Deployments are available.
# Idempotent: a second run re-applies the same objects and returns as soon as both are available.
#
#   hack/cluster/olm.sh [install]     (after hack/cluster/up.sh)
#   hack/cluster/olm.sh uninstall     removes OLM's Deployments, namespaces and CRDs
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$root"
t0=$SECONDS
OLM_VERSION=v0.41.0
OLM_IMAGE=localhost:5000/operator101/olm:$OLM_VERSION
OPM_IMAGE=localhost:5000/operator101/opm:v1.64.0
export PUSHED_DIR=$CLUSTER_DIR/registry/pushed

[[ -s $KUBECONFIG_ADMIN ]] || die "no cluster: run make cluster-up first"
k() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# The module the olm binaries were built from (downloaded by that build, so in the module cache).
olm_module() {
	(cd hack/tools/olm && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' github.com/operator-framework/operator-lifecycle-manager)
}

case ${1:-install} in
install) ;;
uninstall)
	dir=$(olm_module)
	say "removing OLM"
	k delete --ignore-not-found --wait=true --timeout 120s -n olm deployment olm-operator catalog-operator >/dev/null
	k delete --ignore-not-found --wait=true --timeout 180s namespace olm operators >/dev/null
	k delete --ignore-not-found -f "$dir/deploy/chart/crds" >/dev/null
	exit 0
	;;
*) echo "usage: $0 [install|uninstall]" >&2; exit 2 ;;
esac

say "OLM $OLM_VERSION: binaries and images"
hack/tools/install.sh olm opm grpc-health-probe
dir=$(olm_module)
[[ -d $dir/deploy/chart/crds ]] || die "OLM's manifests not found in $dir"
"$(dirname "$0")/images.sh" olm
# The opm image (bundle unpacking, catalogs): rebuilt from podman's layer cache, pushed when its ID changed.
hack/images.sh opm "$OPM_IMAGE" >/dev/null
"$(dirname "$0")/images.sh" push "$OPM_IMAGE"

say "OLM CRDs (server-side apply)"
k apply --server-side --force-conflicts -f "$dir/deploy/chart/crds" >/dev/null
for f in "$dir"/deploy/chart/crds/*.yaml; do
	name=$(sed -n 's/^  name: //p' "$f" | head -1)
	k wait --for condition=Established --timeout 60s "crd/$name" >/dev/null
done

say "OLM operators (olm.yaml with local images)"
go run ./hack/cluster/olmyaml -in "$dir/deploy/upstream/quickstart/olm.yaml" -olm-image "$OLM_IMAGE" \
	-opm-image "$OPM_IMAGE" >"$CLUSTER_DIR/olm.yaml"
k apply --server-side --force-conflicts -f "$CLUSTER_DIR/olm.yaml" >/dev/null
for d in olm-operator catalog-operator; do
	if ! k -n olm rollout status "deployment/$d" --timeout 180s >/dev/null; then
		k -n olm get pods -o wide >&2
		k -n olm logs "deployment/$d" --tail 30 >&2 || true
		die "OLM's $d did not become available"
	fi
done
say "OLM $OLM_VERSION ready in $((SECONDS - t0))s (namespaces olm, operators; OperatorGroup global-operators)"
