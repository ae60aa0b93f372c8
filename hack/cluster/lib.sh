# Shared by hack/cluster/*.sh: the cluster's layout, addresses and small helpers. Sourced, not run.
#
# Everything the cluster keeps lives under CLUSTER_DIR (default bin/cluster); every process it starts writes its
# pid to CLUSTER_DIR/pids/NAME.pid and its log to CLUSTER_DIR/logs/NAME.log.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CLUSTER_DIR=${CLUSTER_DIR:-$root/bin/cluster}
BIN=${LOCALBIN:-$root/bin}
PKI=$CLUSTER_DIR/pki
PIDS=$CLUSTER_DIR/pids
LOGS=$CLUSTER_DIR/logs
# Published (a copy of pki/admin.kubeconfig) once the node is Ready: its presence means the cluster works.
KUBECONFIG_ADMIN=$CLUSTER_DIR/kubeconfig

# Addresses: all from 198.18.0.0/15, the range reserved for network testing, so nothing can collide with a
# real network. The node (and API server, registry TLS, DNS) address sits alone on a bridge of its own; pods get
# 198.18.0.0/24 on the CNI bridge; Services 198.19.0.0/16. Not the cluster's: 198.18.64.0/18, where a Go test
# makes an address of its own for the time it runs (test/registrytest's OwnAddress, one bridge o101-PID-N each).
NODE_NAME=operator101-node
NODE_IP=198.18.255.254
NODE_BRIDGE=o101-node
POD_BRIDGE=o101-pods
POD_CIDR=198.18.0.0/24
POD_GATEWAY=198.18.0.1
SERVICE_CIDR=198.19.0.0/16
API_SERVICE_IP=198.19.0.1
DNS_SERVICE_IP=198.19.0.10
API_PORT=6443
ETCD_CLIENT=127.0.0.1:23790
ETCD_PEER=127.0.0.1:23800
DNS_PORT=1053
REGISTRY=127.0.0.1:5000
CLUSTER_DOMAIN=cluster.local
# Our own iptables chain (filter FORWARD): pods may reach each other and the node, nothing beyond the machine.
FORWARD_CHAIN=O101-FORWARD

CONTAINERD_SOCK=$CLUSTER_DIR/containerd/containerd.sock
# One cluster per machine: the addresses, bridges and ports above are machine-wide. The state directory of the
# cluster that holds them is recorded here while it exists.
OWNER_FILE=/run/operator101-cluster.owner

say() { printf '==> %s\n' "$*"; }
die() {
	printf 'cluster: %s\n' "$*" >&2
	exit 1
}

# running NAME: the process recorded for NAME is alive (and is still the one we started).
running() {
	local pidfile=$PIDS/$1.pid pid
	[[ -s $pidfile ]] || return 1
	pid=$(<"$pidfile")
	[[ -d /proc/$pid ]] || return 1
	# A recycled pid would not carry our state dir on its command line.
	# (Compared in the shell, not with grep -q, which can leave tr a SIGPIPE that pipefail counts.)
	[[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == *"$(<"$PIDS/$1.mark")"* ]]
}

# cluster_alive DIR: some process recorded under the cluster state dir DIR still runs. A state dir whose
# processes are all gone (a killed session, a reboot) holds nothing and may be cleaned up by anyone.
cluster_alive() {
	local pidfile name
	for pidfile in "$1"/pids/*.pid; do
		[[ -s $pidfile ]] || continue
		name=${pidfile%.pid}
		PIDS=$1/pids running "$(basename "$name")" && return 0
	done
	return 1
}

# wait_until DESCRIPTION SECONDS COMMAND...: polls COMMAND every half second; on timeout, says what it waited
# for and the command's last output.
wait_until() {
	local what=$1 limit=$2 start=$SECONDS out
	shift 2
	until out=$("$@" 2>&1); do
		((SECONDS - start < limit)) || {
			echo "cluster: timed out after ${limit}s waiting for $what${out:+: $out}" >&2
			return 1
		}
		sleep 0.5
	done
}

# bundle_version: the version of the newest bundle (bundle/, what make bundle wrote), run from the repository root.
bundle_version() { sed -n 's/^  version: //p' bundle/manifests/operator101.clusterserviceversion.yaml; }

kc() { "$BIN/kubectl" --kubeconfig "$PKI/admin.kubeconfig" "$@"; }
