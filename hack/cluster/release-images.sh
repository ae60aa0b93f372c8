#!/usr/bin/env bash
# Puts operator101's images in the registry the cluster pulls from, the way the e2e and make demo install it.
# IMAGE_TAG_BASE (default localhost:5000/operator101/operator101, the local cluster's registry) names them:
#   - every release (config/catalog/releases) by digest: hack/release.sh ensure rebuilds any the local registry
#     (or the release cache) lacks from its commit, and fails if the rebuild is not byte-identical. Releases
#     carry the name they were published under (quay.io/operator101/...), which the local cluster's containerd
#     pulls from its registry, the same path there; for another registry they are copied to the same paths
#     there, by digest, and the cluster must mirror quay.io/operator101 to it (docs/contributing/e2e.md);
#   - this tree as the next version (VERSION of bundle/, not released):
#       BASE:vV            the manager (make docker-build)
#       BASE-scorecard:vV  the project's own scorecard test
#       BASE-bundle:vV     bundle/ (make bundle-build), its images renamed to BASE
#       BASE-catalog:vV    the releases plus this bundle (hack/catalog.sh), on the local opm image
#     and BASE's folder/opm:v1.64.0, the index image of operator-sdk run bundle;
#   - with TIGHTENED=1 (the e2e), a next version whose MyWeb CRD is tighter than objects may be:
#       BASE-catalog:tightened  the above plus that version
# Pushes verify TLS (hack/registry.sh: REGISTRY_CERT_DIR). An image whose ID has not changed since it was pushed
# is not pushed again.
#
#   hack/cluster/release-images.sh          (after hack/cluster/up.sh and hack/cluster/olm.sh, or on a cluster
#                                            of your own: hack/cluster/e2e.sh)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$root"
t0=$SECONDS
BASE=${IMAGE_TAG_BASE:-localhost:5000/operator101/operator101}
export IMAGE_TAG_BASE=$BASE
export OPM_IMG=localhost:5000/operator101/opm:v1.64.0
# What was pushed is remembered in the local registry's own state, which goes with it; another registry is
# always copied to (skopeo skips the blobs it has).
case $BASE in
localhost:5000/* | 127.0.0.1:5000/*) export PUSHED_DIR=$CLUSTER_DIR/registry/pushed ;;
*) unset PUSHED_DIR ;;
esac
export REGISTRY SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
# shellcheck source=../registry.sh
source hack/registry.sh

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

# digest_of IMG: the digest of IMG as pushed (push: a local name went to REGISTRY).
digest_of() {
	local ref=$1
	case $ref in localhost:5000/* | 127.0.0.1:5000/*) ref=$REGISTRY/${ref#*/} ;; esac
	# shellcheck disable=SC2046 # tls_flags gives several words
	skopeo inspect -n $(tls_flags "" "$ref") --format '{{.Digest}}' "docker://$ref"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Releases in another registry than the local one: copied there by digest, under their own paths.
case $BASE in localhost:5000/* | 127.0.0.1:5000/*) ;; *) quiet env REGISTRY="${BASE%%/*}" hack/release.sh ensure ;; esac

for what in operator scorecard; do
	img=$BASE:v$version
	[[ $what == operator ]] || img=$BASE-$what:v$version
	quiet hack/images.sh "$what" "$img"
	push "$img"
done
# bundle/ names its images after make bundle's default IMAGE_TAG_BASE: a copy with BASE instead, as make bundle
# IMAGE_TAG_BASE=BASE would write it.
src=$work/src
mkdir -p "$src"
cp -a bundle bundle.Dockerfile "$src/"
published=$(sed -n 's/^IMAGE_TAG_BASE ?= //p' Makefile)
grep -rlF "$published" "$src/bundle" | xargs -r sed -i "s|$published|$BASE|g"
# And the images the controllers start by default by digest, as a release gives them (hack/release.sh pin): read
# from the local registry, which serves docker.io to the local cluster (containerd's mirror); on a cluster of
# your own from docker.io, or DOCKER_IO_MIRROR.
case $BASE in localhost:5000/* | 127.0.0.1:5000/*) export DOCKER_IO_MIRROR=${DOCKER_IO_MIRROR:-$REGISTRY} ;; esac
busybox=$(sed -n 's/^BUSYBOX_IMG ?= //p' Makefile)
pinned=$(hack/release.sh pin "BUSYBOX_IMG=$busybox")
sed -i "s|$busybox\$|${pinned#*=}|" "$src/bundle/manifests/operator101.clusterserviceversion.yaml"
grep -qF "${pinned#*=}" "$src/bundle/manifests/operator101.clusterserviceversion.yaml" || die "$busybox is not in bundle/'s CSV"
quiet env SRC="$src" hack/images.sh bundle "$BASE-bundle:v$version"
push "$BASE-bundle:v$version"
digest=$(digest_of "$BASE-bundle:v$version")
quiet hack/catalog.sh "$work/dev" "$BASE-bundle@$digest"
quiet hack/images.sh catalog "$BASE-catalog:v$version" "$work/dev"
push "$BASE-catalog:v$version"
# operator-sdk run bundle's index image: its registry pod and the CLI both pull it.
if [[ ${BASE%/*}/opm:v1.64.0 != "$OPM_IMG" ]]; then
	podman tag "$OPM_IMG" "${BASE%/*}/opm:v1.64.0"
	push "${BASE%/*}/opm:v1.64.0"
fi

# With TIGHTENED=1 (the e2e), a version after this one whose MyWeb CRD tightens nodePortNumber to at most 30199:
# an upgrade that would invalidate stored objects, which OLM must refuse (test/e2e/upgradesafety_test.go).
# Catalog tag "tightened".
if [[ ${TIGHTENED:-0} == 1 ]]; then
	IFS=. read -r major minor patch <<<"$version"
	next=$major.$minor.$((patch + 1))
	tight=$work/tightened
	mkdir -p "$tight"
	cp -a "$src/bundle" "$src/bundle.Dockerfile" "$tight/"
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
