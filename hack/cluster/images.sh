#!/usr/bin/env bash
# Builds the local cluster's images offline and pushes them to its registry (127.0.0.1:5000, see up.sh).
# Every image is FROM scratch: static binaries built here, busybox-static from Debian as the shell of RUN
# steps, `podman build --network none`; nothing is ever run with podman (its rlimits need CAP_SYS_RESOURCE).
#
#   hack/cluster/images.sh [NAME...]      build and push NAME (default: every image below)
#   hack/cluster/images.sh push IMG...    push images already in podman's storage (e.g. the ones hack/images.sh
#                                         builds as localhost:5000/operator101/...) to the same name here
#
# An image is a directory hack/cluster/images/NAME with a Containerfile; `context_NAME` below fills its build
# context; `IMAGES[NAME]` names where it is pushed (several names are fine). Pods name images as
# localhost:5000/...; containerd's registry config also sends docker.io pulls to the local registry, so the
# samples' `nginx` and `busybox`, the docs' nginxinc/nginx-unprivileged, and busybox:1.36.0 (operator-sdk run
# bundle's decompression image) resolve to these images offline.
# Later images (operator, bundle, catalog, opm, OLM) join the table the same way.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
REGISTRY=${REGISTRY:-127.0.0.1:5000}
# PUSHED_DIR (set by up.sh, inside the registry's state): remembers what was pushed, so unchanged images are
# not copied again.
BUSYBOX_VERSION=$(dpkg-query -W -f='${Version}' busybox-static 2>/dev/null | sed 's/^1://; s/-.*//')

# NAME -> the repositories:tags it is pushed as (relative to the registry).
declare -A IMAGES=(
	[pause]="operator101/pause:3.10"
	[busybox]="operator101/busybox:${BUSYBOX_VERSION:-latest} library/busybox:1.36 library/busybox:1.36.0 library/busybox:latest"
	[web]="operator101/web:1 library/nginx:1.27 library/nginx:1.7.9 library/nginx:alpine library/nginx:latest"
	[web-unprivileged]="operator101/web-unprivileged:1 nginxinc/nginx-unprivileged:1.27 nginxinc/nginx-unprivileged:latest"
	[probe]="operator101/probe:1"
	[olm]="operator101/olm:v0.41.0"
	[scorecard-test]="operator-framework/scorecard-test:v1.33.0"
	[traefik]="operator101/traefik:v3.6.12"
)
# up.sh builds these; olm (hack/cluster/olm.sh), traefik (hack/cluster/traefik.sh) and scorecard-test (the e2e
# tests) are built when asked for.
ORDER="pause busybox web web-unprivileged probe"

# forget REPO:TAG...: after a push, the node's containerd drops the names it may hold for these images, so the
# next pod that names one pulls the new content (pods use IfNotPresent for tags: a rebuilt image pushed under
# the same tag would otherwise never reach a running cluster). Running containers are not affected.
CONTAINERD_SOCK=${CLUSTER_DIR:-$root/bin/cluster}/containerd/containerd.sock
forget() {
	[[ -S $CONTAINERD_SOCK ]] || return 0
	local ref names=()
	for ref in "$@"; do
		names+=("localhost:5000/$ref" "127.0.0.1:5000/$ref" "198.18.255.254:5000/$ref" "docker.io/$ref" "quay.io/$ref")
	done
	ctr --address "$CONTAINERD_SOCK" -n k8s.io images rm "${names[@]}" >/dev/null 2>&1 || true
}

static_go() { # static_go OUT PACKAGE
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$1" "$2"
}
context_pause() { static_go "$1/pause" ./hack/cluster/images/pause; }
context_busybox() { cp -L /bin/busybox "$1/busybox"; }
context_probe() { static_go "$1/probe" ./hack/cluster/images/probe; }
context_olm() {
	[[ -x bin/olm && -x bin/cpb ]] || hack/tools/install.sh olm
	cp -L bin/olm bin/catalog bin/package-server bin/copy-content bin/cpb /bin/busybox "$1/"
}
context_scorecard-test() {
	[[ -x bin/scorecard-test ]] || hack/tools/install.sh operator-sdk
	cp -L bin/scorecard-test /bin/busybox "$1/"
}
context_traefik() {
	[[ -x bin/traefik ]] || hack/tools/install.sh traefik
	cp -L bin/traefik "$1/"
}
context_web() { static_go "$1/web" ./hack/cluster/images/web && cp hack/cluster/images/web/index.html "$1/"; }
context_web-unprivileged() { context_web "$@"; }

build_push() {
	local name=$1 ctx local_tag start=$SECONDS
	ctx=$(mktemp -d)
	"context_$name" "$ctx"
	cp "hack/cluster/images/$name/Containerfile" "$ctx/Containerfile"
	local_tag=localhost/operator101-cluster/$name:latest
	# runc, not podman's default crun: crun cannot create RUN-step containers with cgroups v1 (hybrid).
	podman build -q --runtime "${OCI_RUNTIME:-runc}" --network none -f "$ctx/Containerfile" -t "$local_tag" "$ctx" >/dev/null
	rm -rf "$ctx"
	# Unchanged since the last push to this registry (podman's layer cache gives the same image ID): done.
	local id
	id=$(podman image inspect --format '{{.Id}}' "$local_tag")
	if [[ -n ${PUSHED_DIR:-} && "$(cat "$PUSHED_DIR/$name" 2>/dev/null)" == "$id ${IMAGES[$name]}" ]]; then
		echo "    image $name: unchanged, already pushed ($((SECONDS - start))s)"
		return 0
	fi
	local ref
	for ref in ${IMAGES[$name]}; do
		# (containers-storage chatters about its graph driver on stderr: dropped.)
		skopeo copy -q --dest-tls-verify=false "containers-storage:$local_tag" "docker://$REGISTRY/$ref" \
			2> >(grep -v 'graphdriver' >&2)
	done
	forget ${IMAGES[$name]}
	[[ -z ${PUSHED_DIR:-} ]] || { mkdir -p "$PUSHED_DIR" && echo "$id ${IMAGES[$name]}" >"$PUSHED_DIR/$name"; }
	echo "    image $name -> ${IMAGES[$name]} ($((SECONDS - start))s)"
}

# push IMG...: an image in containers-storage to its registry: localhost:5000/REPO:TAG (or 127.0.0.1:5000/...) to
# REGISTRY/REPO:TAG; any other name to itself, TLS verified (hack/registry.sh). With PUSHED_DIR set, an image whose
# ID was pushed under that name before is not copied again.
if [[ ${1:-} == push ]]; then
	shift
	# shellcheck source=../registry.sh
	source hack/registry.sh
	for img in "$@"; do
		repo=${img#localhost:5000/}
		repo=${repo#127.0.0.1:5000/}
		dest=$REGISTRY/$repo
		[[ $repo != "$img" ]] || dest=$img
		id=$(podman image inspect --format '{{.Id}}' "$img")
		mark=${PUSHED_DIR:-}/$(echo "$dest" | tr '/:' '__')
		if [[ -n ${PUSHED_DIR:-} && "$(cat "$mark" 2>/dev/null)" == "$id" ]]; then
			echo "    $img: unchanged"
			continue
		fi
		# shellcheck disable=SC2046 # tls_flags gives several words
		skopeo copy -q $(tls_flags dest "$dest") "containers-storage:$img" "docker://$dest" \
			2> >(grep -v 'graphdriver' >&2)
		[[ $dest == "$img" ]] || forget "$repo"
		[[ -z ${PUSHED_DIR:-} ]] || { mkdir -p "$PUSHED_DIR" && echo "$id" >"$mark"; }
		echo "    $img: pushed"
	done
	exit 0
fi

[[ $# -gt 0 ]] || set -- $ORDER
for n in "$@"; do
	[[ -n ${IMAGES[$n]:-} ]] || { echo "images.sh: unknown image $n (known: $ORDER)" >&2; exit 2; }
	build_push "$n"
done
