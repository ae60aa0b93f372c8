#!/usr/bin/env bash
# Installs the Debian packages the local cluster runs on, when they are missing: containerd and runc (the
# node's container runtime), containernetworking-plugins (bridge, host-local, portmap, loopback), docker-registry
# (the image registry on 127.0.0.1:5000), podman, skopeo and busybox-static (offline image builds and pushes),
# iptables (kube-proxy, portmap), iproute2 (ip: the cluster's bridges and addresses) and openssl (the cluster's
# certificates).
# Debian's containerd and docker-registry install without starting (there is no systemd here); hack/cluster/up.sh
# runs them with configs of its own. Idempotent and non-interactive: a no-op when everything is there.
#
#   hack/cluster/install-deps.sh
set -euo pipefail

pkgs=(containerd runc containernetworking-plugins docker-registry skopeo podman busybox-static iptables iproute2 openssl)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
log=${TMPDIR:-/tmp}/operator101-cluster-apt.log
echo "==> installing Debian packages: ${missing[*]} (log: $log)" >&2
export DEBIAN_FRONTEND=noninteractive
# A lock held by another apt run (another clone, CI) is waited for, not failed on.
apt_opts=(-o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold
	-y -q --no-install-recommends)
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 -q update >"$log" 2>&1 || { tail -n 30 "$log" >&2; exit 1; }
"${sudo[@]}" apt-get "${apt_opts[@]}" install "${missing[@]}" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; exit 1; }
echo "==> installed ${missing[*]}" >&2
