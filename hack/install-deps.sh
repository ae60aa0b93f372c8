#!/usr/bin/env bash
# Installs the Debian packages the image builds need, when they are missing: podman (builds the FROM-scratch
# images with --network none), buildah and skopeo (copy images to a registry), busybox-static (the shell of RUN
# steps in scratch images), runc (crun cannot run RUN steps here: cgroups v1/hybrid), jq (hack/catalog.sh).
# Idempotent and non-interactive; a no-op when everything is there. It writes only to stderr: scripts whose
# stdout is data (hack/release.sh ensure -- opm ..., whose output becomes the catalog) call it.
#
#   hack/install-deps.sh            # the image-build packages
#   hack/install-deps.sh PKG...     # only these Debian packages
set -euo pipefail

pkgs=("$@")
[[ ${#pkgs[@]} -gt 0 ]] || pkgs=(podman buildah skopeo busybox-static uidmap runc jq)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
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
