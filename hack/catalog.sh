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
# shellcheck source=registry.sh
source hack/registry.sh
trust_registry_ca
# use_http REF: opm's flag for REF's registry: plain HTTP only to one on this machine without a CA.
use_http() { registry_on_this_machine "$1" && ! registry_uses_ca "$1" && echo --use-http || true; }
for next in "$@"; do # BUNDLE_DIR=IMAGE@DIGEST, or IMAGE@DIGEST for bundle/ (an image name has no "=")
	dir=bundle
	[[ $next != *=* ]] || dir=${next%%=*}
	img=${next#*=}
	go run ./hack/bundletool add-release -template "$work/template.yaml" -bundle "$dir" -image "$img"
	# Rendered here, from its own registry, and added to opm's output after the template is rendered: the
	# releases come from the local registry over plain HTTP, this bundle may come from one that wants TLS, and
	# opm takes one of the two per run (and its basic template takes bundles by image only).
	# shellcheck disable=SC2046 # use_http gives a flag or nothing
	{ echo "---" && "$OPM" render "$img" -o yaml $(use_http "$img"); } >>"$work/next.yaml"
	img=$img awk '
		$0 == "- image: " ENVIRON["img"] { skip = 1; next }
		skip && $0 == "  schema: olm.bundle" { skip = 0; next }
		{ print }' "$work/template.yaml" >"$work/t" && mv "$work/t" "$work/template.yaml"
	grep -qF -- "- image: $img" "$work/template.yaml" && { echo "catalog: $img left in the template" >&2; exit 1; }
done

# opm pulls the releases while hack/release.sh keeps the registry up; plain HTTP only to a registry on this machine.
first=$(sed -n 's/^- image: //p' "$work/template.yaml" | head -1)
# shellcheck disable=SC2046
hack/release.sh ensure -- "$OPM" alpha render-template basic "$work/template.yaml" -o yaml $([[ -z $first ]] || use_http "$first") \
	>"$work/index.yaml" || {
	echo "catalog: opm alpha render-template basic failed on $template" >&2
	exit 1
}
[[ ! -s $work/next.yaml ]] || cat "$work/next.yaml" >>"$work/index.yaml"
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
