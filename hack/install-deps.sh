#!/usr/bin/env bash
# Installs the Debian packages the image builds need, when they are missing: podman (builds the FROM-scratch
# images with --network none), buildah and skopeo (copy images to a registry), busybox-static (the shell of RUN
# steps in scratch images), runc (crun cannot run RUN steps here: cgroups v1/hybrid), jq (hack/catalog.sh).
# Idempotent and non-interactive; a no-op when everything is there. Debian only installs (apt-get, as root or
# with sudo -n); elsewhere it checks the commands and names what is missing. Docker builds need none of this
# (hack/images.sh does not call it with CONTAINER_TOOL=docker). It writes only to stderr: scripts whose
# stdout is data (hack/release.sh ensure -- opm ..., whose output becomes the catalog) call it.
#
#   hack/install-deps.sh            # the image-build packages
#   hack/install-deps.sh PKG...     # only these Debian packages (tests ask for docker-registry, iproute2)
set -euo pipefail

pkgs=("$@")
[[ ${#pkgs[@]} -gt 0 ]] || pkgs=(podman buildah skopeo busybox-static uidmap runc jq)

missing=()
if command -v dpkg-query >/dev/null; then
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
else
	# Not Debian: each package is there when what it provides is; what is not, the user installs with their
	# distribution's packages (nothing here knows their names).
	for p in "${pkgs[@]}"; do
		case $p in
		busybox-static) [[ -x /bin/busybox ]] || missing+=("$p (a statically linked /bin/busybox)") ;;
		uidmap) command -v newuidmap >/dev/null || missing+=("$p (newuidmap)") ;;
		iproute2) command -v ip >/dev/null || missing+=("$p (ip)") ;;
		*) command -v "$p" >/dev/null || missing+=("$p") ;;
		esac
	done
	[[ ${#missing[@]} -eq 0 ]] || { echo "install-deps: missing, install with your distribution's packages: ${missing[*]}" >&2; exit 1; }
fi
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
echo "==> installing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A lock held by another apt run (another helper, CI) is waited for, not failed on.
apt_opts=(-o DPkg::Lock::Timeout=600 -y -q --no-install-recommends)
"${sudo[@]}" apt-get "${apt_opts[@]}" install "${missing[@]}" >/tmp/operator101-apt.log 2>&1 || {
	"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 -q update >>/tmp/operator101-apt.log 2>&1
	"${sudo[@]}" apt-get "${apt_opts[@]}" install "${missing[@]}" >>/tmp/operator101-apt.log 2>&1 ||
		{ tail -n 30 /tmp/operator101-apt.log >&2; exit 1; }
}
echo "==> installed ${missing[*]}" >&2
