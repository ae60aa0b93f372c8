#!/usr/bin/env bash
# Renders operator101's file-based catalog into catalog/operator101/ with the locally built opm, offline:
#  1. the package and channels come from the template config/catalog/operator101.yaml;
#  2. for every bundle version the channels name, hack/bundle-version.sh writes that version's bundle
#     directory (bundle/, relabelled) and `opm render DIR` turns it into an olm.bundle with all its properties;
#     the bundle's image is set to IMAGE_TAG_BASE-bundle:vVERSION (what `make bundle-build` builds), since a
#     directory has no image name;
#  3. `opm render` of the assembled directory writes it back in opm's canonical form, and `opm validate` checks it.
# The result is committed; `make verify-generated` fails if it is stale.
set -euo pipefail
cd "$(dirname "$0")/.."

OPM=${OPM:-bin/opm}
IMAGE_TAG_BASE=${IMAGE_TAG_BASE:-localhost:5000/operator101/operator101}
template=config/catalog/operator101.yaml
out=catalog/operator101

hack/install-deps.sh jq
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/fbc"
cp "$template" "$work/fbc/operator101.yaml"

versions=$(grep -o 'operator101\.v[0-9][0-9A-Za-z.+-]*' "$template" | sed 's/^operator101\.v//' | sort -uV)
[[ -n $versions ]] || { echo "catalog.sh: no bundle versions in $template" >&2; exit 1; }
for v in $versions; do
	hack/bundle-version.sh "$work/bundle-$v" "$v" "$IMAGE_TAG_BASE:v$v"
	img=$IMAGE_TAG_BASE-bundle:v$v
	# A rendered image lists itself among its related images; a directory cannot, so add it as opm would.
	"$OPM" render "$work/bundle-$v" -o json |
		jq --arg img "$img" '.image = $img | .relatedImages = ((.relatedImages // []) + [{"name": "", "image": $img}])' \
			>"$work/fbc/bundle-v$v.json"
done

"$OPM" render "$work/fbc" -o yaml >"$work/index.yaml"
mkdir -p "$work/check/operator101"
cp "$work/index.yaml" "$work/check/operator101/index.yaml"
"$OPM" validate "$work/check"
# Only a rendered and valid catalog replaces the committed one.
rm -rf "$out"
mkdir -p "$out"
mv "$work/index.yaml" "$out/index.yaml"
echo "==> catalog/operator101/index.yaml: versions $(echo $versions), validated"
