#!/usr/bin/env bash
# Builds operator101's images the way a release pipeline does (make docker-build bundle-build catalog-build, i.e.
# hack/images.sh, offline) and pushes them to the local cluster's registry, for every version the catalog holds:
#   localhost:5000/operator101/operator101:vV            the manager (one build, tagged per version)
#   localhost:5000/operator101/operator101-bundle:vV     bundle/ relabelled for V (hack/bundle-version.sh)
#   localhost:5000/operator101/operator101-catalog:vNEW  catalog/ on the local opm image
#   localhost:5000/operator101/operator101-scorecard:vNEW  the project's own scorecard test
# An image whose ID has not changed since it was pushed is not pushed again.
#
#   hack/cluster/release-images.sh          (after hack/cluster/up.sh and hack/cluster/olm.sh)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$root"
t0=$SECONDS
BASE=${IMAGE_TAG_BASE:-localhost:5000/operator101/operator101}
export OPM_IMG=localhost:5000/operator101/opm:v1.64.0
export PUSHED_DIR=$CLUSTER_DIR/registry/pushed

versions=$(sed -n 's/^name: operator101\.v//p' catalog/operator101/index.yaml)
newest=$(bundle_version)
[[ -n $versions && -n $newest ]] || die "no versions in catalog/operator101/index.yaml or bundle/"
say "operator101 images for $(echo $versions) (newest $newest)"

push() { "$(dirname "$0")/images.sh" push "$1"; } # skips an image pushed before (PUSHED_DIR)
quiet() { # runs a build, shows its output only when it fails
	local log
	log=$(mktemp)
	"$@" >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; die "failed: $*"; }
	rm -f "$log"
}

quiet hack/images.sh operator "$BASE:v$newest"
push "$BASE:v$newest"
for v in $versions; do
	if [[ $v != "$newest" ]]; then
		podman tag "$BASE:v$newest" "$BASE:v$v"
		push "$BASE:v$v"
	fi
	quiet hack/images.sh bundle "$BASE-bundle:v$v" "$v" "$BASE:v$v"
	push "$BASE-bundle:v$v"
done
quiet hack/images.sh catalog "$BASE-catalog:v$newest"
push "$BASE-catalog:v$newest"
quiet hack/images.sh scorecard "$BASE-scorecard:v$newest"
push "$BASE-scorecard:v$newest"
say "operator101 images in the registry ($((SECONDS - t0))s)"
