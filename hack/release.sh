#!/usr/bin/env bash
# Releases of operator101. A release is built from its own commit, pushed, and recorded by digest; it is never
# rebuilt from today's tree, and the catalog renders it from its own bundle image.
#
#   hack/release.sh new VERSION [COMMIT]  build VERSION from COMMIT (default HEAD, which must be clean and
#                                         committed), push the operator, scorecard and bundle images, record
#                                         them in config/catalog/releases and the bundle in the catalog template
#   hack/release.sh pin VAR=IMAGE:TAG...  prints VAR=IMAGE@DIGEST for each, as a release records them
#   hack/release.sh ensure [-- CMD...]    every recorded release is in the registry; one that is not is
#                                         rebuilt from its commit and must give the recorded digests. Then
#                                         CMD runs while the registry is up (its output is the only stdout).
#
# UNPINNED_DEFAULTS=1 (new only) leaves those default images as the commit's Makefile names them (tags).
# Builds are reproducible (hack/images.sh), which is what lets a fresh clone on another machine serve the
# releases recorded here: `ensure` fails, naming the image, if a rebuild gives another digest.
#
# The bundle of a release is what `make bundle` writes at its commit, with the operator and scorecard images
# by digest, the images its controllers start by default (BUSYBOX_IMG) by digest too, read from their registry
# (docker.io, or DOCKER_IO_MIRROR=host:port that serves it) and recorded, and createdAt set to the commit's
# time. Images are named IMAGE_TAG_BASE (default: the Makefile's, the name the project publishes under) and
# pushed where hack/registry.sh's registry_ref says: the published name's mirror in REGISTRY (default
# 127.0.0.1:5000, the registry of the local cluster, or one started for the duration when none listens there)
# unless MIRRORED= (empty), another IMAGE_TAG_BASE to its own registry. TLS is verified except for a registry on
# this machine that is given no CA (hack/registry.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

BASE=${IMAGE_TAG_BASE:-$(sed -n 's/^IMAGE_TAG_BASE ?= //p' Makefile)}
RELEASES=config/catalog/releases
TOOLCHAINS=config/catalog/toolchains
IMAGES=config/catalog/images
TEMPLATE=config/catalog/operator101.yaml
CACHE=${OPERATOR101_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/operator101}

say() { printf '==> %s\n' "$*"; }
die() {
	printf 'release: %s\n' "$*" >&2
	exit 1
}
usage() {
	sed -n '2,19p' "$0" >&2
	exit 2
}

cleanups=()
cleanup() {
	local i
	for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do eval "${cleanups[i]}" || true; done
}
trap cleanup EXIT

# shellcheck source=registry.sh
source hack/registry.sh

# cache_registry ADDR: serves the release cache (a registry's storage outside the clone: releases are immutable,
# so what it holds never goes stale) on ADDR until this script ends.
cache_registry() {
	local addr=$1 name=release-registry-${1##*:}
	hack/install-deps.sh
	hack/install-deps.sh docker-registry
	mkdir -p "$CACHE/release-registry"
	cat >"$CACHE/$name.yml" <<EOF
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: $CACHE/release-registry/data}
  delete: {enabled: false}
http: {addr: $addr}
EOF
	docker-registry serve "$CACHE/$name.yml" >"$CACHE/$name.log" 2>&1 &
	local pid=$!
	cleanups+=("kill $pid; wait $pid 2>/dev/null")
	local i
	for i in $(seq 1 60); do
		curl -fsS "http://$addr/v2/" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	cat "$CACHE/$name.log" >&2
	die "the release cache's registry did not start on $addr"
}

# registry_up: REGISTRY answers: the local cluster's when it runs, else the release cache served there. A
# registry elsewhere (REGISTRY=host:port, an existing cluster's) is taken as given: skopeo says if it fails.
cached_registry=false
registry_up() {
	[[ $REGISTRY == 127.0.0.1:* ]] || return 0
	curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1 && return 0
	cache_registry "$REGISTRY"
	cached_registry=true
}

# from_cache REF@DIGEST...: when REGISTRY is another registry (the local cluster's) and the release cache holds
# every REF, copies them into REGISTRY, digests kept; fails otherwise. A copy is what a rebuild would give (the
# rebuild that filled the cache was checked), in seconds instead of minutes.
from_cache() {
	! $cached_registry && [[ -d $CACHE/release-registry/data ]] || return 1
	local addr=127.0.0.1:${RELEASE_CACHE_PORT:-5001} ref src
	curl -fsS "http://$addr/v2/" >/dev/null 2>&1 || cache_registry "$addr"
	for ref in "$@"; do
		skopeo inspect -n --raw --tls-verify=false "docker://$addr/${ref#*/}" >/dev/null 2>&1 || return 1
	done
	for ref in "$@"; do
		src=$addr/${ref#*/}
		# shellcheck disable=SC2046 # tls_flags gives several words
		skopeo copy -q --all --preserve-digests --src-tls-verify=false $(tls_flags dest "$(registry_ref "$ref")") \
			"docker://$src" "docker://$(registry_ref "${ref%@*}"):release-cache" 2> >(grep -v 'graphdriver' >&2) || return 1
		present "$ref" || return 1
	done
}

# push IMG: copies IMG from podman's storage to its registry; prints its digest. A manifest list (the operator
# image of a commit whose Makefile sets PLATFORMS) goes with every image in it, as an OCI index, whose digest is
# the one recorded.
push() {
	local img=$1 dest digest
	dest=$(registry_ref "$img")
	digest=$(mktemp)
	if podman manifest inspect "$img" >/dev/null 2>&1; then
		# shellcheck disable=SC2046
		podman manifest push -q --all --format oci $(tls_flags "" "$dest") --digestfile "$digest" \
			"$img" "docker://$dest" >&2 || { rm -f "$digest"; die "cannot push $img to $dest"; }
	else
		# shellcheck disable=SC2046
		skopeo copy -q $(tls_flags dest "$dest") --digestfile "$digest" \
			"containers-storage:$img" "docker://$dest" 2> >(grep -v 'graphdriver' >&2) ||
			{ rm -f "$digest"; die "cannot push $img to $dest"; }
	fi
	# Callers read this in $(...), where set -e does not reach: an empty digest would pass as a name.
	[ -s "$digest" ] || { rm -f "$digest"; die "pushing $img gave no digest"; }
	cat "$digest"
	rm -f "$digest"
}

# present REF@DIGEST: the registry holds it.
present() {
	local dest
	dest=$(registry_ref "$1")
	# shellcheck disable=SC2046
	skopeo inspect -n --raw $(tls_flags "" "$dest") "docker://$dest" >/dev/null 2>&1
}

quiet() { # runs a step, shows its output only when it fails
	local log
	log=$(mktemp)
	"$@" >"$log" 2>&1 || {
		tail -40 "$log" >&2
		rm -f "$log"
		die "failed: $*"
	}
	rm -f "$log"
}

# pin VAR=IMAGE:TAG: VAR=IMAGE@DIGEST, the digest the registry serves for the tag. DOCKER_IO_MIRROR (host:port)
# answers for docker.io when given: the local cluster's registry serves docker.io here, where no pull leaves
# the machine.
pin() {
	local var=${1%%=*} ref=${1#*=} src digest
	src=$ref
	if [[ -n ${DOCKER_IO_MIRROR:-} && $ref == docker.io/* ]]; then src=$DOCKER_IO_MIRROR/${ref#docker.io/}; fi
	# shellcheck disable=SC2046 # tls_flags gives several words
	digest=$(skopeo inspect -n $(tls_flags "" "$src") --format '{{.Digest}}' "docker://$src") ||
		die "cannot read the digest of $ref${DOCKER_IO_MIRROR:+ (from $src)}"
	echo "$var=${ref%:*}@$digest"
}

# toolchain: what builds a release's images besides the commit's own pinned tools (hack/tools): Go, podman,
# buildah, skopeo.
toolchain() {
	printf 'go=%s podman=%s buildah=%s skopeo=%s\n' "$(go env GOVERSION)" \
		"$(podman version --format '{{.Client.Version}}' 2>/dev/null)" "$(buildah version --json 2>/dev/null |
			sed -n 's/^ *"version": "\(.*\)",$/\1/p' | head -1)" "$(skopeo --version | awk '{print $3}')"
}

# build VERSION COMMIT RECIPE [VAR=IMAGE@DIGEST...]: builds and pushes the release's images from a worktree of
# COMMIT, with the image recipe (hack/images.sh, hack/bundletool) of a worktree of RECIPE and the default images
# given (by digest); sets op, sc, bundle (IMAGE@DIGEST) and leaves the worktree's bundle in $built_bundle.
# GOTOOLCHAIN, when set, is the Go the release was built with (the go command fetches it from the module proxy).
build() {
	local version=$1 commit=$2 recipe=$3 wt
	wt=$(mktemp -d "${TMPDIR:-/tmp}/operator101-release.XXXXXX")
	cleanups+=("git -C '$root' worktree remove --force '$wt/src'; git -C '$root' worktree remove --force '$wt/recipe'; rm -rf '$wt'")
	git worktree add -q --detach "$wt/src" "$commit"
	git worktree add -q --detach "$wt/recipe" "$recipe"
	local images=$wt/recipe/hack/images.sh
	# Its compiles with the collector off below 3 GiB, as hack/tools/install.sh's (the output is the same).
	local GOGC=off GOMEMLIMIT=3GiB
	export GOGC GOMEMLIMIT
	export SOURCE_DATE_EPOCH
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct "$commit")
	say "$version from $(git log -1 --format='%h (%cs) %s' "$commit"), recipe $(git log -1 --format=%h "$recipe"), $(toolchain)"
	# The platforms the commit's Makefile builds the operator for (PLATFORMS; none before it had them: one image).
	local platforms
	platforms=$(sed -n 's/^PLATFORMS ?= //p' "$wt/src/Makefile")
	quiet env SRC="$wt/src" PLATFORMS="$platforms" "$images" operator "$BASE:v$version"
	op=${BASE}@$(push "$BASE:v$version")
	quiet env SRC="$wt/src" "$images" scorecard "$BASE-scorecard:v$version"
	sc=${BASE}-scorecard@$(push "$BASE-scorecard:v$version")
	# The bundle as the commit's own `make bundle` writes it, with the images above by digest.
	quiet make -C "$wt/src" bundle VERSION="$version" IMG="$op" SCORECARD_IMG="$sc" "${@:4}"
	# createdAt is the commit's time: reproducible, and a development bundle has none to churn.
	quiet go -C "$wt/recipe" run ./hack/bundletool created-at -bundle "$wt/src/bundle" \
		-at "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
	quiet env SRC="$wt/src" "$images" bundle "$BASE-bundle:v$version"
	bundle=${BASE}-bundle@$(push "$BASE-bundle:v$version")
	built_bundle=$wt/src/bundle
	say "  operator  $op"
	say "  scorecard $sc"
	say "  bundle    $bundle"
	[[ $# -le 3 ]] || say "  defaults  ${*:4}"
}

# record_image DIR NAME REF: REF's manifest and config, as the registry serves them, into DIR/NAME.manifest.json
# and DIR/NAME.config.json: what a rebuild is compared with, layer by layer.
record_image() {
	local dir=$1 name=$2 ref
	ref=$(registry_ref "$3")
	mkdir -p "$dir"
	# shellcheck disable=SC2046 # tls_flags gives several words
	skopeo inspect -n --raw $(tls_flags "" "$ref") "docker://$ref" >"$dir/$name.manifest.json"
	# shellcheck disable=SC2046
	skopeo inspect -n --config --raw $(tls_flags "" "$ref") "docker://$ref" >"$dir/$name.config.json"
}

# explain VERSION NAME GOT: why the rebuilt NAME (GOT) differs from the release's recorded image: the layers
# (with the step that made each) and the configuration fields that differ, and the toolchain then and now.
explain() {
	local version=$1 name=$2 dir tmp
	dir=$IMAGES/$version
	[[ -f $dir/$name.manifest.json ]] || {
		echo "  (no recorded manifest of $name in $dir: cannot say which layer differs)"
		return
	}
	tmp=$(mktemp -d)
	record_image "$tmp" "$name" "$3"
	go run ./hack/imagediff "$dir/$name.manifest.json" "$dir/$name.config.json" "$tmp/$name.manifest.json" "$tmp/$name.config.json" |
		sed 's/^/  /' || true
	rm -rf "$tmp"
	echo "  toolchain recorded: $(sed -n "s/^$version //p" "$TOOLCHAINS")"
	echo "  toolchain now:      $(toolchain)"
}

cmd=${1:-}
case $cmd in
pin)
	shift
	for p in "$@"; do pin "$p"; done
	;;
new)
	version=${2:-}
	commit=$(git rev-parse --verify "${3:-HEAD}^{commit}")
	[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || usage
	if [[ -z ${3:-} && -n $(git status --porcelain) ]]; then
		die "the working tree has changes: commit them first (a release is built from a commit)"
	fi
	! grep -q "^$version " "$RELEASES" 2>/dev/null || die "$version is released already ($RELEASES)"
	registry_up
	# The images its controllers start by default (the Makefile's BUSYBOX_IMG, which make bundle gives the
	# manager's RELATED_IMAGE_BUSYBOX), pinned by digest and recorded, so a rebuild gives the same bundle.
	# UNPINNED_DEFAULTS=1 releases them by tag, as the commit's Makefile names them, where no registry that serves
	# them can be read (this machine reaches none, and its mirror's images are stand-ins, whose digests are not
	# docker.io's); docs/contributing/packaging.md says what that gives up.
	mapfile -t pins < <(git show "$commit:Makefile" | sed -n 's/^\(BUSYBOX_IMG\) ?= \(.*\)$/\1=\2/p')
	if [[ ${UNPINNED_DEFAULTS:-0} == 1 ]]; then
		say "the default images stay tags: ${pins[*]}"
		pins=()
	fi
	for i in "${!pins[@]}"; do pins[i]=$(pin "${pins[i]}"); done
	[[ -z $(git status --porcelain) ]] || die "the working tree has changes: a release is built with a committed recipe (hack/)"
	recipe=$(git rev-parse HEAD)
	build "$version" "$commit" "$recipe" "${pins[@]}"
	go run ./hack/bundletool add-release -template "$TEMPLATE" -bundle "$built_bundle" -image "$bundle"
	record_image "$IMAGES/$version" operator "$op"
	record_image "$IMAGES/$version" scorecard "$sc"
	record_image "$IMAGES/$version" bundle "$bundle"
	[[ -s $TOOLCHAINS ]] || printf '%s\n' \
		"# How each release was built: VERSION RECIPE (the commit whose hack/images.sh and hack/bundletool built it)" \
		"# and the toolchain besides the source commit's pinned tools. Written by hack/release.sh new." >"$TOOLCHAINS"
	echo "$version $recipe $(toolchain)" >>"$TOOLCHAINS"
	[[ -s $RELEASES ]] || printf '%s\n' \
		"# Released versions of operator101: VERSION COMMIT OPERATOR SCORECARD BUNDLE [VAR=DEFAULT_IMAGE...] (images by digest)." \
		"# Written by hack/release.sh new; hack/release.sh ensure rebuilds any that a registry lacks." >"$RELEASES"
	echo "$version $commit $op $sc $bundle${pins[*]:+ ${pins[*]}}" >>"$RELEASES"
	say "released $version: $RELEASES, $TOOLCHAINS, $IMAGES/$version and $TEMPLATE updated; now make catalog, then commit"
	;;
ensure)
	shift
	[[ ${1:-} != -- ]] || shift
	registry_up
	exec 3>&1 1>&2 # what ensure says goes to stderr; stdout is CMD's
	while read -r -u 4 version commit op sc bundle pinned; do
		[[ $version == \#* || -z $version ]] && continue
		if present "$op" && present "$sc" && present "$bundle"; then
			continue
		fi
		if from_cache "$op" "$sc" "$bundle"; then
			say "release $version copied into $REGISTRY from the release cache"
			continue
		fi
		say "release $version is not in $REGISTRY: rebuilding it from $commit"
		git cat-file -e "$commit^{commit}" 2>/dev/null || die "commit $commit of $version is not in this clone"
		read -r recipe tools < <(sed -n "s/^$version //p" "$TOOLCHAINS" 2>/dev/null) ||
			die "$version has no line in $TOOLCHAINS: its recipe and toolchain are unknown"
		git cat-file -e "$recipe^{commit}" 2>/dev/null || die "recipe commit $recipe of $version is not in this clone"
		want_op=$op want_sc=$sc want_bundle=$bundle
		# The Go it was built with; podman, buildah and skopeo are Debian's: a different one is named below.
		gover=$(tr ' ' '\n' <<<"$tools" | sed -n 's/^go=//p')
		# Under the names it was released with (the recorded images'), whatever IMAGE_TAG_BASE this run names: the
		# bundle holds the operator's and the scorecard's names, so only those give the recorded digests.
		# shellcheck disable=SC2086 # the recorded default images, VAR=IMAGE@DIGEST each
		BASE=${op%@*} GOTOOLCHAIN=${gover:-local} build "$version" "$commit" "$recipe" $pinned
		bad=0
		for pair in "operator $op $want_op" "scorecard $sc $want_sc" "bundle $bundle $want_bundle"; do
			read -r name got want <<<"$pair"
			[[ $got != "$want" ]] || continue
			bad=1
			echo "release: $version's $name rebuilt from $commit is $got, but $want was released:" >&2
			explain "$version" "$name" "$got" >&2
		done
		((bad == 0)) || die "$version: the rebuild is not reproducible"
	done 4< <(cat "$RELEASES" 2>/dev/null || true)
	[[ $# -eq 0 ]] || "$@" >&3
	;;
*) usage ;;
esac
