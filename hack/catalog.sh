#!/usr/bin/env bash
# Renders operator101's file-based catalog with opm, offline: `opm alpha render-template basic` expands the
# template config/catalog/operator101.yaml, pulling each release's bundle image by digest, and `opm validate`
# checks the result. A released version is always rendered from its own image, never from today's bundle/.
#
#   hack/catalog.sh [DIR]            DIR (default catalog)/operator101/index.yaml: the releases (make catalog;
#                                    committed)
#   hack/catalog.sh DIR BUNDLE@DIG   DIR/operator101/index.yaml: the releases and BUNDLE, the bundle of this
#                                    tree (make bundle), as the next version of the default channel: what the
#                                    catalog becomes when this tree is released (the e2e and make demo install it)
#   hack/catalog.sh DIR BUNDLE@DIG BUNDLE_DIR=IMG@DIG...
#                                    the same, then the bundle in BUNDLE_DIR (pushed as IMG) after it
#
# The release images come from the registry (hack/release.sh ensure rebuilds the ones it lacks from their
# commits first). Registry and names: see hack/release.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

OPM=${OPM:-bin/opm}
template=config/catalog/operator101.yaml
out=${1:-catalog}
shift || true

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$template" "$work/template.yaml"
for next in "$@"; do # BUNDLE_DIR=IMAGE@DIGEST, or IMAGE@DIGEST for bundle/ (an image name has no "=")
	dir=bundle
	[[ $next != *=* ]] || dir=${next%%=*}
	go run ./hack/bundletool add-release -template "$work/template.yaml" -bundle "$dir" -image "${next#*=}"
done

# opm pulls the bundles while hack/release.sh keeps the registry up; plain HTTP only to a registry on this machine.
http=()
case ${IMAGE_TAG_BASE:-localhost:5000/} in localhost:* | 127.0.0.1:*) http=(--use-http) ;; esac
hack/release.sh ensure -- "$OPM" alpha render-template basic "$work/template.yaml" -o yaml "${http[@]}" \
	>"$work/index.yaml" || {
	echo "catalog: opm alpha render-template basic failed on $template" >&2
	exit 1
}
mkdir -p "$work/check/operator101"
cp "$work/index.yaml" "$work/check/operator101/index.yaml"
"$OPM" validate "$work/check" || {
	kept=$(mktemp "${TMPDIR:-/tmp}/operator101-catalog.XXXXXX.yaml")
	cp "$work/index.yaml" "$kept"
	echo "catalog: opm validate refused the rendered catalog (kept in $kept; its first lines:)" >&2
	head -5 "$kept" >&2
	exit 1
}
# Only a rendered and valid catalog replaces the one in place.
rm -rf "$out/operator101"
mkdir -p "$out/operator101"
mv "$work/index.yaml" "$out/operator101/index.yaml"
echo "==> $out/operator101/index.yaml: $(grep -c '^schema: olm.bundle$' "$out/operator101/index.yaml") bundles, validated"
