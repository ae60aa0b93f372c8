#!/usr/bin/env bash
# Renders operator101's file-based catalog with opm, offline, from the template config/catalog/operator101.yaml
# (opm's olm.template.basic): each release's bundle image is rendered by digest (`opm render IMAGE`), then the
# template's package, channels and deprecations with those bundles (`opm render DIR`, opm's own normal form), and
# `opm validate` checks the result. A released version is always rendered from its own image, never from today's
# bundle/.
#
#   hack/catalog.sh [DIR]            DIR (default catalog)/operator101/index.yaml: the releases (make catalog;
#                                    committed)
#   hack/catalog.sh DIR BUNDLE@DIG   DIR/operator101/index.yaml: the releases and BUNDLE, the bundle of this
#                                    tree (make bundle), as the next version of the default channel: what the
#                                    catalog becomes when this tree is released (the e2e and make demo install it)
#   hack/catalog.sh DIR BUNDLE@DIG BUNDLE_DIR=IMG@DIG...
#                                    the same, then the bundle in BUNDLE_DIR (pushed as IMG) after it
#   hack/catalog.sh dev DIR IMG...   DIR/operator101/index.yaml: the committed catalog (catalog/, the releases as
#                                    they are, nothing pulled) and each bundle image IMG (a developer's, pushed:
#                                    make bundle-push), `opm render`ed from its registry, as the next version of
#                                    the default channel; a version the catalog holds is served as released.
#                                    make catalog-build builds its image from DIR.
#
# One rule per registry: each image is read where hack/registry.sh's registry_ref says (a release under the
# mirrored prefix from REGISTRY, through a registries.conf mirror, so that opm records the image's own name), over plain
# HTTP only when that registry is on this machine and given no CA,
# else over TLS verified against the system's CAs and REGISTRY_CERT_DIR's. (`opm alpha render-template` takes
# one rule for every image of a run, which is why the bundles are rendered one by one.) The release images
# come from the registry; hack/release.sh ensure rebuilds the ones it lacks from their commits first.
set -euo pipefail
cd "$(dirname "$0")/.."

OPM=${OPM:-bin/opm}
template=config/catalog/operator101.yaml
out=${1:-catalog}
shift || true

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=registry.sh
source hack/registry.sh
trust_registry_ca "$work"

# render-bundles FILE IMG...: each bundle image rendered into FILE with its registry's rule. (Run by
# hack/release.sh ensure, which keeps the release registry up meanwhile.)
if [[ $out == render-bundles ]]; then
	file=$1
	shift
	# opm reads a mirror from the per-user registries.conf only (its containers/image takes no
	# CONTAINERS_REGISTRIES_CONF): a HOME of its own, with the user's registry credentials kept.
	home=$(mktemp -d)
	mkdir -p "$home/.config/containers"
	registries_conf "$home/.config/containers/registries.conf"
	auth=${REGISTRY_AUTH_FILE:-$HOME/.docker/config.json}
	[[ -f $auth ]] || auth=
	for img in "$@"; do
		from=$(registry_ref "$img")
		flags=()
		! registry_skips_tls "$from" || flags=(--use-http)
		HOME=$home REGISTRY_AUTH_FILE=$auth "$OPM" render "$img" -o yaml "${flags[@]}" >>"$file" || { rm -rf "$home"; exit 1; }
	done
	rm -rf "$home"
	exit 0
fi

# The committed catalog, rendered already, and the developer's bundle images, as opm renders them, each added
# as the next version by bundletool add-bundle (opm has no command that adds a channel entry); then opm's normal
# form (`opm render DIR`) and `opm validate`, as below.
if [[ $out == dev ]]; then
	[[ $# -ge 2 ]] || { echo "usage: hack/catalog.sh dev DIR BUNDLE_IMG..." >&2; exit 2; }
	out=$1
	shift
	mkdir -p "$work/fbc" "$work/check/operator101"
	cp catalog/operator101/index.yaml "$work/fbc/index.yaml"
	for img in "$@"; do
		: >"$work/bundle.yaml"
		"$0" render-bundles "$work/bundle.yaml" "$img" || {
			echo "catalog: opm could not render $img from its registry (make bundle-build bundle-push first; REGISTRY_CERT_DIR for a registry with a CA of its own)" >&2
			exit 1
		}
		go run ./hack/bundletool add-bundle -catalog "$work/fbc/index.yaml" -bundle "$work/bundle.yaml"
	done
	"$OPM" render "$work/fbc" -o yaml >"$work/check/operator101/index.yaml"
	"$OPM" validate "$work/check"
	rm -rf "$out/operator101"
	mkdir -p "$out"
	mv "$work/check/operator101" "$out/operator101"
	echo "==> $out/operator101/index.yaml: the committed catalog and $*, validated"
	exit 0
fi

cp "$template" "$work/template.yaml"
for next in "$@"; do # BUNDLE_DIR=IMAGE@DIGEST, or IMAGE@DIGEST for bundle/ (an image name has no "=")
	dir=bundle
	[[ $next != *=* ]] || dir=${next%%=*}
	go run ./hack/bundletool add-release -template "$work/template.yaml" -bundle "$dir" -image "${next#*=}"
done
mkdir -p "$work/fbc" "$work/check/operator101"
mapfile -t images < <(go run ./hack/bundletool split-template -template "$work/template.yaml" -entries "$work/fbc/entries.yaml")
hack/release.sh ensure -- "$0" render-bundles "$work/fbc/bundles.yaml" "${images[@]}" || {
	echo "catalog: rendering the bundles of $template failed" >&2
	exit 1
}
"$OPM" render "$work/fbc" -o yaml >"$work/index.yaml"
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
