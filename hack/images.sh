#!/usr/bin/env bash
# Builds operator101's images with podman, offline: every image is FROM scratch (or FROM another image built
# here), from statically linked binaries compiled on this machine, and `podman build --network none` never
# reaches a registry. Nothing is run with podman (its default rlimits need CAP_SYS_RESOURCE, which this
# machine does not grant); tests check the images with `podman inspect`.
#
#   hack/images.sh operator  IMG                     the manager, FROM scratch, USER 65532 (Dockerfile, target offline;
#                                                    OFFLINE=0 builds the Dockerfile's online multi-stage target instead);
#                                                    with PLATFORMS (os/arch,...), a manifest list of one per platform
#   hack/images.sh bundle    IMG                     bundle/ as `make bundle` wrote it
#   hack/images.sh opm       IMG                     /bin/opm + grpc_health_probe + busybox, /tmp 1777, USER 1001: the catalog's base
#                                                    (with docker: no busybox, no shell); an empty file-based catalog
#                                                    (/configs, its label), as operator-sdk run bundle takes its
#                                                    default index image, the upstream opm image
#   hack/images.sh catalog   IMG [DIR]               DIR (default catalog/) served by opm (catalog.Dockerfile on the opm image)
#   hack/images.sh scorecard IMG                     operator101's scorecard test (test/scorecard/cmd/operator101-scorecard)
#
# CONTAINER_TOOL (default podman) may be buildah or docker (docker's images are not reproducible: no --timestamp).
#
# Builds are reproducible: the same source gives the same image, byte for byte, on any machine with the same
# toolchain. Go builds are (-trimpath), and every image and file time is SOURCE_DATE_EPOCH (default: the commit
# time of SRC's HEAD), so a released digest can be rebuilt from its commit (hack/release.sh checks it does).
# No layer cache: a layer cached by an earlier build of the same step with other times would be reused as is.
# SRC (default: this repository) is the source tree the manager, the scorecard test and the bundle come from.
# PLATFORMS (operator only; e.g. linux/amd64,linux/arm64; default empty: one image for this machine's platform)
# makes IMG a manifest list with an image per platform, each around a manager cross-compiled for it (static Go,
# GOOS/GOARCH: nothing is emulated, the offline stage has no RUN step). podman and buildah hold the list under
# IMG (push it with `podman manifest push --all`); docker cannot hold one locally: it builds IMG-OS-ARCH per
# platform, which `make docker-push` pushes and joins with `docker manifest`.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
src=$(cd "${SRC:-$root}" && pwd)
tool=${CONTAINER_TOOL:-podman}
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || echo 0)}
OPM_IMG=${OPM_IMG:-localhost/operator101/opm:v1.64.0}

[[ $# -ge 2 ]] || { sed -n '2,14p' "$0" >&2; exit 2; }
what=$1 img=$2
shift 2

# podman and buildah builds need the packages hack/install-deps.sh installs (as root, on Debian); a docker build
# needs none: the docker CLI and its daemon, run as the user, and binaries built here from Go modules.
case ${tool##*/} in
docker) ;;
*) hack/install-deps.sh ;;
esac

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

build() { # build DOCKERFILE CONTEXT [extra flags...]: the flags of the Makefile's BUILD_FLAGS, offline
	local file=$1 dir=$2
	shift 2
	case ${tool##*/} in
	buildah) buildah bud --network none --no-cache --timestamp "$epoch" -f "$file" -t "$img" "$@" "$dir" ;;
	# docker's builder has no --timestamp: its images are not reproducible (releases use podman).
	docker) docker build --network none --no-cache -f "$file" -t "$img" "$@" "$dir" ;;
	# runc, not podman's default crun: crun cannot create RUN-step containers with cgroups v1 (hybrid).
	*) "$tool" build --runtime "${OCI_RUNTIME:-runc}" --network none --no-cache --timestamp "$epoch" -f "$file" -t "$img" "$@" "$dir" ;;
	esac
	echo "==> built $img"
}

build_into_list() { # build_into_list DOCKERFILE CONTEXT [extra flags...]: build, adding the image to the list $img
	local file=$1 dir=$2
	shift 2
	case ${tool##*/} in
	buildah) buildah bud --network none --no-cache --timestamp "$epoch" -f "$file" --manifest "$img" "$@" "$dir" ;;
	*) "$tool" build --runtime "${OCI_RUNTIME:-runc}" --network none --no-cache --timestamp "$epoch" -f "$file" --manifest "$img" "$@" "$dir" ;;
	esac
	echo "==> built $img ($*)"
}

static_go() { # static_go OUT PACKAGE (of SRC); the collector off below 3 GiB as in hack/tools/install.sh
	(cd "$src" && CGO_ENABLED=0 GOGC=off GOMEMLIMIT=3GiB go build -trimpath -ldflags "-s -w" -o "$1" "$2")
}

case $what in
operator)
	if [[ ${OFFLINE:-1} == 0 ]]; then
		# With internet: the usual multi-stage build (golang -> distroless) from the repository.
		"$tool" build -f "$src/Dockerfile" -t "$img" "$src"
		exit 0
	fi
	# The manager's package: cmd/ since the go.kubebuilder.io/v4 layout, the root in releases made before it
	# (hack/release.sh builds a release from its own commit's tree).
	main=./cmd
	[[ -f $src/cmd/main.go ]] || main=.
	if [[ -z ${PLATFORMS:-} ]]; then
		static_go "$ctx/manager" "$main"
		build "$src/Dockerfile" "$ctx" --target offline
		exit 0
	fi
	list=$img
	case ${tool##*/} in
	docker) ;;
	*)
		# A list, or an image, of that name from an earlier build goes first: the list is made anew.
		"$tool" manifest rm "$list" >/dev/null 2>&1 || "$tool" rmi --force "$list" >/dev/null 2>&1 || true
		"$tool" manifest create "$list" >/dev/null
		;;
	esac
	for platform in ${PLATFORMS//,/ }; do
		os=${platform%%/*} arch=${platform#*/}
		mkdir -p "$ctx/$os-$arch"
		GOOS=$os GOARCH=$arch static_go "$ctx/$os-$arch/manager" "$main"
		case ${tool##*/} in
		docker)
			img=$list-$os-$arch
			build "$src/Dockerfile" "$ctx/$os-$arch" --target offline --platform "$platform"
			;;
		*)
			# Built without a name of its own, straight into the list (podman and buildah build --manifest).
			img=$list
			build_into_list "$src/Dockerfile" "$ctx/$os-$arch" --target offline --platform "$platform"
			;;
		esac
	done
	;;
bundle)
	[[ $# -eq 0 ]] || { echo "images.sh: bundle takes IMG only; make bundle VERSION=... IMG=... writes bundle/" >&2; exit 2; }
	cp -a "$src/bundle" "$ctx/bundle"
	build "$src/bundle.Dockerfile" "$ctx"
	;;
opm)
	[[ -x bin/opm ]] || hack/tools/install.sh opm
	# OLM's catalog pods probe the registry with /bin/grpc_health_probe (exec probes).
	[[ -x bin/grpc_health_probe ]] || hack/tools/install.sh grpc-health-probe
	cp -L bin/opm "$ctx/opm"
	cp -L bin/grpc_health_probe "$ctx/grpc_health_probe"
	if [[ ${tool##*/} == docker ]]; then
		# docker: no busybox (a Debian package here), so no shell: /tmp, 1777, comes from the context (COPY keeps
		# a directory's mode). A catalog needs only opm and the probe; `operator-sdk run bundle`, which runs a
		# shell in this image, is the lab's (podman).
		mkdir -p "$ctx/root/configs"
		mkdir -m 1777 "$ctx/root/tmp"
		cat >"$ctx/Dockerfile" <<'EOF'
FROM scratch
COPY opm grpc_health_probe /bin/
COPY root/ /
USER 1001
ENTRYPOINT ["/bin/opm"]
LABEL operators.operatorframework.io.index.configs.v1=/configs
EOF
		build "$ctx/Dockerfile" "$ctx"
		exit 0
	fi
	cp -L /bin/busybox "$ctx/busybox"
	cat >"$ctx/Dockerfile" <<'EOF'
FROM scratch
COPY busybox /bin/busybox
COPY opm grpc_health_probe /bin/
# A shell and its utilities: `operator-sdk run bundle`'s registry pod runs `sh -c '... cp ...; opm registry add ...'`.
RUN ["/bin/busybox", "--install", "-s", "/bin"]
ENV PATH=/bin
# opm serve writes its cache under /tmp as a non-root user.
RUN ["/bin/busybox", "mkdir", "-p", "-m", "1777", "/tmp"]
RUN ["/bin/busybox", "mkdir", "-p", "/configs"]
USER 1001
ENTRYPOINT ["/bin/opm"]
LABEL operators.operatorframework.io.index.configs.v1=/configs
EOF
	build "$ctx/Dockerfile" "$ctx"
	;;
catalog)
	if ! "$tool" image inspect "$OPM_IMG" >/dev/null 2>&1; then
		"$0" opm "$OPM_IMG"
	fi
	cp -a "${1:-catalog}" "$ctx/catalog"
	build "$root/catalog.Dockerfile" "$ctx" --build-arg "OPM_IMAGE=$OPM_IMG"
	;;
scorecard)
	mkdir -p "$ctx/usr/local/bin"
	static_go "$ctx/operator101-scorecard" ./test/scorecard/cmd/operator101-scorecard
	cat >"$ctx/Dockerfile" <<'EOF'
FROM scratch
COPY operator101-scorecard /usr/local/bin/operator101-scorecard
ENV PATH=/usr/local/bin:/usr/bin:/bin
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/operator101-scorecard"]
EOF
	build "$ctx/Dockerfile" "$ctx"
	;;
*)
	echo "images.sh: unknown image '$what' (operator, bundle, opm, catalog, scorecard)" >&2
	exit 2
	;;
esac
