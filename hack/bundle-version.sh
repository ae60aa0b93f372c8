#!/usr/bin/env bash
# Writes the bundle of one VERSION into DIR: a copy of bundle/ (what `make bundle` generated and the repository
# commits), relabelled when VERSION differs from bundle/'s version: CSV name operator101.vVERSION, spec.version,
# and the operator image OP_IMG (default: the committed image with the tag vVERSION). The catalog's older
# versions and their bundle images come from here, so every version in the catalog is built from the same,
# validated manifests.
#
#   hack/bundle-version.sh DIR [VERSION [OP_IMG]]
set -euo pipefail
cd "$(dirname "$0")/.."

dir=$1 version=${2:-} op_img=${3:-}
csv=bundle/manifests/operator101.clusterserviceversion.yaml
[[ -f $csv ]] || { echo "bundle-version.sh: $csv missing: run make bundle" >&2; exit 1; }

mkdir -p "$dir"
cp -a bundle/. "$dir/"
current=$(sed -n 's/^  version: //p' "$csv")
image=$(sed -n 's/^    containerImage: //p' "$csv")
[[ -n $version ]] || version=$current
[[ -n $op_img ]] || op_img=${image%:*}:v$version
if [[ $version != "$current" || $op_img != "$image" ]]; then
	go run ./hack/csvgen finalize -bundle "$dir" -version "$version" -image "$op_img"
fi
