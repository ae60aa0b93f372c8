#!/usr/bin/env bash
# Builds the project's tools from the pinned wrapper modules beside this script and links them into bin/.
#
#   hack/tools/install.sh TOOL...      (TOOL: see the table below; "all" builds every one, "cluster" the
#                                       local cluster's node binaries, CoreDNS and grpc_health_probe)
#
# Each tool is built once per version into ${XDG_CACHE_HOME:-$HOME/.cache}/operator101/<tool>-<version>/ so that
# every clone on this machine shares it; a version bump (or a change of the wrapper's go.mod/go.sum or build
# flags) builds it again. Nothing is downloaded but Go modules from the module proxy.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/operator101
bindir=${LOCALBIN:-$root/bin}
mkdir -p "$cache" "$bindir"

KUBE_VERSION=v1.36.3
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION}"
kube_ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36"
kube_ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
static="-extldflags -static"

# spec TOOL -> "module-dir|version|env|tags|ldflags|binary=package ..."
spec() {
	case "$1" in
	controller-gen) echo "controller-gen|v0.23.0|CGO_ENABLED=0||-s -w|controller-gen=sigs.k8s.io/controller-tools/cmd/controller-gen" ;;
	kustomize) echo "kustomize|v5.8.2|CGO_ENABLED=0||-s -w|kustomize=sigs.k8s.io/kustomize/kustomize/v5" ;;
	etcd) echo "etcd|v3.6.16|CGO_ENABLED=0||-s -w|etcd=go.etcd.io/etcd/server/v3" ;;
	kube-apiserver) echo "kube|${KUBE_VERSION}|CGO_ENABLED=0||${kube_ldflags}|kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver" ;;
	kubectl) echo "kubectl|${KUBE_VERSION}|CGO_ENABLED=0||${kube_ldflags}|kubectl=k8s.io/kubernetes/cmd/kubectl" ;;
	kube-node) echo "kube|${KUBE_VERSION}|CGO_ENABLED=0||${kube_ldflags}|kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler kubelet=k8s.io/kubernetes/cmd/kubelet kube-proxy=k8s.io/kubernetes/cmd/kube-proxy" ;;
	operator-sdk) echo "operator-sdk|v1.33.0|GOSUMDB=off CGO_ENABLED=0|containers_image_openpgp|-s -w -X github.com/operator-framework/operator-sdk/internal/version.Version=v1.33.0 -X github.com/operator-framework/operator-sdk/internal/version.GitVersion=v1.33.0|operator-sdk=github.com/operator-framework/operator-sdk/cmd/operator-sdk scorecard-test=github.com/operator-framework/operator-sdk/images/scorecard-test" ;;
	opm) echo "olm|v1.64.0|CGO_ENABLED=1|json1,containers_image_openpgp,netgo,osusergo|-s -w ${static} -X github.com/operator-framework/operator-registry/cmd/opm/version.gitCommit=v1.64.0 -X github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=v1.64.0|opm=github.com/operator-framework/operator-registry/cmd/opm" ;;
	olm) echo "olm|v0.41.0|CGO_ENABLED=1|json1,containers_image_openpgp,netgo,osusergo|-s -w ${static} -X github.com/operator-framework/operator-lifecycle-manager/pkg/version.OLMVersion=0.41.0|olm=github.com/operator-framework/operator-lifecycle-manager/cmd/olm catalog=github.com/operator-framework/operator-lifecycle-manager/cmd/catalog package-server=github.com/operator-framework/operator-lifecycle-manager/cmd/package-server copy-content=github.com/operator-framework/operator-lifecycle-manager/cmd/copy-content cpb=github.com/operator-framework/operator-lifecycle-manager/util/cpb" ;;
	golangci-lint) echo "golangci-lint|v2.15.0|CGO_ENABLED=0||-s -w -X main.version=2.15.0 -X main.commit=v2.15.0 -X main.date=2026-10-16T10:51:54Z|golangci-lint=github.com/golangci/golangci-lint/v2/cmd/golangci-lint" ;;
	# promtool test rules (make test-rules). Prometheus' Go module v0.316.0 is its release 3.16.0.
	# remove_all_sd, Prometheus' own build tag, leaves out the service discovery plugins (and their cloud SDKs):
	# rule tests use none.
	promtool) echo "promtool|v0.316.0|CGO_ENABLED=0|remove_all_sd|-s -w|promtool=github.com/prometheus/prometheus/cmd/promtool" ;;
	# The local cluster (hack/cluster): its DNS and the probe OLM's catalog pods exec.
	coredns) echo "coredns|v1.12.4|CGO_ENABLED=0||-s -w|coredns=operator101/hack/tools/coredns" ;;
	grpc-health-probe) echo "grpc-health-probe|v0.4.61|CGO_ENABLED=0||-s -w|grpc_health_probe=github.com/grpc-ecosystem/grpc-health-probe" ;;
	# Its ingress and Gateway API controller (hack/cluster/traefik); v3.7 cannot be fetched from the proxy here.
	traefik) echo "traefik|v3.6.12|CGO_ENABLED=0||-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=v3.6.12|traefik=github.com/traefik/traefik/v3/cmd/traefik" ;;
	*) return 1 ;;
	esac
}
ALL="controller-gen kustomize etcd kube-apiserver kubectl operator-sdk opm olm golangci-lint promtool"
# What `make cluster-up` needs besides etcd, kube-apiserver and kubectl ("cluster" builds these). Traefik first:
# make ci builds this list beside ci-tools (cluster-tools), and kube-node shares most of its packages with the
# kube-apiserver ci-tools builds first.
CLUSTER="traefik coredns grpc-health-probe kube-node"

# exec_name PACKAGE: the file name go build -o DIR/ gives a main package: its last path element, or the one
# before it when that is a major version suffix (go.etcd.io/etcd/server/v3 -> server).
exec_name() {
	local base=${1##*/}
	if [[ $base =~ ^v[0-9]+$ ]]; then base=${1%/*}; base=${base##*/}; fi
	echo "$base"
}

# patch_modules WRAPPER_DIR WORK MODULE FILE REPLACEMENT...: WORK/go.mod and go.sum, the wrapper's, for go build
# -modfile, with a replace directive pointing each MODULE at a copy of it in WORK (as go mod download gives it,
# checked against go.sum) whose FILE is REPLACEMENT. (go build -overlay would do it in place, but it refuses
# files in the module cache.)
patch_modules() {
	local wd=$1 work=$2 mdir copy
	shift 2
	mkdir -p "$work"
	cp "$wd/go.mod" "$wd/go.sum" "$work/"
	while [[ $# -gt 0 ]]; do
		mdir=$(cd "$wd" && go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
		[[ -f $mdir/$2 ]] || { echo "install.sh: no $2 in $1 (${mdir:-not downloaded})" >&2; return 1; }
		copy=$work/${1//\//_}
		if [[ ! -d $copy ]]; then
			cp -R "$mdir" "$copy" && chmod -R u+w "$copy"
			go mod edit -replace "$1=$copy" "$work/go.mod"
		fi
		cp "$3" "$copy/$2"
		shift 3
	done
}

install_one() {
	local tool=$1 line dir version envs tags ldflags bins
	line=$(spec "$tool") || { echo "install.sh: unknown tool '$tool' (known: $ALL $CLUSTER)" >&2; return 2; }
	IFS='|' read -r dir version envs tags ldflags bins <<<"$line"
	[[ -n $bins ]] || { echo "install.sh: no binaries in the spec of $tool" >&2; return 2; }
	local dest="$cache/$tool-$version"
	# The stamp names everything that shapes the binaries, so a changed wrapper rebuilds.
	# A wrapper's file named patches lists files of its modules that the build replaces with files of the
	# wrapper's (patch_modules; one line each: MODULE FILE-IN-MODULE REPLACEMENT); they are part of the stamp.
	local patches=$here/$dir/patches patched=() inputs=("$here/$dir/go.mod" "$here/$dir/go.sum")
	if [[ -f $patches ]]; then
		inputs+=("$patches")
		local m f r
		while read -r m f r; do
			[[ -z $m || $m == \#* ]] && continue
			patched+=("$m" "$f" "$here/$dir/$r")
			inputs+=("$here/$dir/$r")
		done <"$patches"
	fi
	local stamp
	stamp=$(cat "${inputs[@]}" <(echo "$line") | sha256sum | cut -c1-16)
	(
		flock 9
		if [[ "$(cat "$dest/.stamp" 2>/dev/null)" != "$stamp" ]]; then
			local start=$SECONDS
			echo "==> building $tool $version from Go modules (cached in $dest; a cold build can take minutes)"
			rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
			local b pkgs=()
			local log=$cache/$tool-$version.build.log
			for b in $bins; do pkgs+=("${b#*=}"); done
			local flags=()
			if [[ ${#patched[@]} -gt 0 ]]; then
				patch_modules "$here/$dir" "$dest.tmp/.src" "${patched[@]}" >"$log" 2>&1 ||
					{ echo "==> FAILED to patch $tool's modules; $log:" >&2; cat "$log" >&2; exit 1; }
				flags=(-modfile "$dest.tmp/.src/go.mod")
			fi
			# One go build for all of a tool's binaries: their links run side by side, and the packages they
			# share are checked once. It names each binary after its package (exec_name), renamed below.
			# The compiler with its collector off until it holds 3 GiB: a fifth less CPU (etcd, cold: 87 s of
			# user time instead of 115), at most about 1 GiB for the largest Kubernetes packages.
			(cd "$here/$dir" && env GOGC=off GOMEMLIMIT=3GiB $envs go build -mod=readonly -trimpath ${tags:+-tags "$tags"} \
				-ldflags "$ldflags" ${flags[@]+"${flags[@]}"} -o "$dest.tmp/.out/" "${pkgs[@]}") >"$log" 2>&1 ||
				{ echo "==> FAILED to build $tool; the end of $log:" >&2; tail -n 40 "$log" >&2; exit 1; }
			for b in $bins; do mv "$dest.tmp/.out/$(exec_name "${b#*=}")" "$dest.tmp/${b%%=*}"; done
			rmdir "$dest.tmp/.out"
			rm -rf "$dest.tmp/.src"
			echo "$stamp" >"$dest.tmp/.stamp"
			rm -rf "$dest" && mv "$dest.tmp" "$dest"
			echo "==> built $tool $version in $((SECONDS - start))s"
		else
			echo "==> $tool $version: cached"
		fi
	) 9>"$cache/.$tool.lock"
	local b
	for b in $bins; do ln -sfn "$dest/${b%%=*}" "$bindir/${b%%=*}"; done
}

[[ $# -gt 0 ]] || set -- all
for t in "$@"; do
	if [[ $t == all ]]; then
		for a in $ALL; do install_one "$a"; done
	elif [[ $t == cluster ]]; then
		for a in $CLUSTER; do install_one "$a"; done
	else
		install_one "$t"
	fi
done
