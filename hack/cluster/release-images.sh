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
#   - with TIGHTENED=1 (the e2e), a next version whose MyWeb CRD is tighter than objects may be:
#       localhost:5000/operator101/operator101-catalog:tightened  the above plus that version
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

digest_of() { skopeo inspect -n --tls-verify=false --format '{{.Digest}}' "docker://$REGISTRY/${1#*/}"; } # of IMG, pushed

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for what in operator scorecard bundle; do
	img=$BASE:v$version
	[[ $what == operator ]] || img=$BASE-$what:v$version
	quiet hack/images.sh "$what" "$img"
	push "$img"
done
digest=$(digest_of "$BASE-bundle:v$version")
quiet hack/catalog.sh "$work/dev" "$BASE-bundle@$digest"
quiet hack/images.sh catalog "$BASE-catalog:v$version" "$work/dev"
push "$BASE-catalog:v$version"

# With TIGHTENED=1 (the e2e), a version after this one whose MyWeb CRD tightens nodePortNumber to at most 30199:
# an upgrade that would invalidate stored objects, which OLM must refuse (test/e2e/upgradesafety_test.go).
# Catalog tag "tightened".
if [[ ${TIGHTENED:-0} == 1 ]]; then
	IFS=. read -r major minor patch <<<"$version"
	next=$major.$minor.$((patch + 1))
	tight=$work/tightened
	mkdir -p "$tight"
	cp -a bundle bundle.Dockerfile "$tight/"
	sed -i -e "s/^  name: operator101\.v$version\$/  name: operator101.v$next/" -e "s/^  version: $version\$/  version: $next/" \
		-e "s/^  replaces: .*/  replaces: operator101.v$version/" -e "s/^\(    olm.skipRange: '>=[^ ]*\) <$version'\$/\1 <$next'/" \
		"$tight/bundle/manifests/operator101.clusterserviceversion.yaml"
	sed -i '/^              nodePortNumber:$/,/^              [a-zA-Z]*:$/ s/^\(                maximum:\) 65535$/\1 30199/' \
		"$tight/bundle/manifests/operator.k8s-summit.org_mywebs.yaml"
	grep -q "^  name: operator101.v$next\$" "$tight/bundle/manifests/operator101.clusterserviceversion.yaml" &&
		grep -q "^                maximum: 30199\$" "$tight/bundle/manifests/operator.k8s-summit.org_mywebs.yaml" ||
		die "the tightened bundle's edits no longer apply to bundle/"
	quiet env SRC="$tight" hack/images.sh bundle "$BASE-bundle:v$next-tightened"
	push "$BASE-bundle:v$next-tightened"
	tdigest=$(digest_of "$BASE-bundle:v$next-tightened")
	quiet hack/catalog.sh "$work/tight" "$BASE-bundle@$digest" "$tight/bundle=$BASE-bundle@$tdigest"
	quiet hack/images.sh catalog "$BASE-catalog:tightened" "$work/tight"
	push "$BASE-catalog:tightened"
fi
say "operator101 images in the registry ($((SECONDS - t0))s)"
