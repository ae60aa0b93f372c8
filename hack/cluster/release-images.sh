#!/usr/bin/env bash
# Puts operator101's images in the local cluster's registry, the way the e2e and make demo install it:
#   - every release (config/catalog/releases) by digest: hack/release.sh ensure rebuilds any the registry lacks
#     from its commit, and fails if the rebuild is not byte-identical;
#   - this tree as the next version (VERSION of bundle/, not released):
#       localhost:5000/operator101/operator101:vV            the manager (make docker-build)
#       localhost:5000/operator101/operator101-scorecard:vV  the project's own scorecard test
#       localhost:5000/operator101/operator101-bundle:vV     bundle/ (make bundle-build)
#       localhost:5000/operator101/operator101-catalog:vV    the releases plus this bundle (hack/catalog.sh), on
#                                                            the local opm image
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
export REGISTRY

version=$(bundle_version)
[[ -n $version ]] || die "no version in bundle/: make bundle"
say "operator101 images: the releases, and $version from this tree"

push() { "$(dirname "$0")/images.sh" push "$1"; } # skips an image pushed before (PUSHED_DIR)
quiet() { # runs a build, shows its output only when it fails
	local log
	log=$(mktemp)
	"$@" >"$log" 2>&1 || { tail -40 "$log" >&2; rm -f "$log"; die "failed: $*"; }
	rm -f "$log"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for what in operator scorecard bundle; do
	img=$BASE:v$version
	[[ $what == operator ]] || img=$BASE-$what:v$version
	quiet hack/images.sh "$what" "$img"
	push "$img"
done
digest=$(skopeo inspect -n --tls-verify=false --format '{{.Digest}}' "docker://$REGISTRY/${BASE#*/}-bundle:v$version")
quiet hack/catalog.sh "$work/dev" "$BASE-bundle@$digest"
quiet hack/images.sh catalog "$BASE-catalog:v$version" "$work/dev"
push "$BASE-catalog:v$version"
say "operator101 images in the registry ($((SECONDS - t0))s)"
