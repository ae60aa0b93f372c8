#!/usr/bin/env bash
# Removes the local cluster that hack/cluster/up.sh started (make cluster-down): stops every process it recorded
# and the containers they ran, unmounts what lies under the state dir, deletes the cluster's bridges and iptables
# chains, then the state dir itself. Safe to run twice, or after a half-finished up.
#
#   hack/cluster/down.sh
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
t0=$SECONDS

[[ $(id -u) -eq 0 ]] || die "needs root"

# alive PID: the process exists and is not a zombie waiting for its parent to reap it.
alive() { [[ -d /proc/$1 ]] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# stop NAME...: SIGTERM to each recorded process at once, SIGKILL to those still alive after 10 seconds.
stop() {
	local name pids=() start=$SECONDS
	for name in "$@"; do
		if running "$name"; then
			pids+=("$(<"$PIDS/$name.pid")")
			kill -TERM "${pids[-1]}" 2>/dev/null || true
		fi
		rm -f "$PIDS/$name.pid"
	done
	[[ ${#pids[@]} -gt 0 ]] || return 0
	local p left
	for _ in $(seq 1 40); do
		left=0
		for p in "${pids[@]}"; do alive "$p" && left=1; done
		[[ $left -eq 1 ]] || break
		sleep 0.25
	done
	for p in "${pids[@]}"; do alive "$p" && kill -KILL "$p" 2>/dev/null; done
	echo "    stopped $* ($((SECONDS - start))s)"
}

if [[ -d $CLUSTER_DIR ]]; then
	say "stopping the node (kubelet, kube-proxy) and the containers"
	stop kubelet kube-proxy
	# Containers: runc's state (Root in containerd's config) lists exactly ours. Kill them, then the shims that
	# served our containerd (their command line names its socket).
	for ns_root in "$CLUSTER_DIR"/runc/*; do
		[[ -d $ns_root ]] || continue
		for id in $(runc --root "$ns_root" list -q 2>/dev/null); do
			runc --root "$ns_root" kill --all "$id" KILL 2>/dev/null || true
		done
	done
	for p in /proc/[0-9]*; do
		[[ $({ tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null) == *"-address $CONTAINERD_SOCK "* ]] || continue
		kill -KILL "${p#/proc/}" 2>/dev/null || true
	done
	for ns_root in "$CLUSTER_DIR"/runc/*; do
		[[ -d $ns_root ]] || continue
		for id in $(runc --root "$ns_root" list -q 2>/dev/null); do
			runc --root "$ns_root" delete --force "$id" 2>/dev/null || true
		done
	done
	say "stopping containerd, CoreDNS, the control plane and the registry"
	stop containerd coredns kube-scheduler kube-controller-manager
	stop kube-apiserver
	stop etcd registry-tls registry
	# kube-proxy's own cleanup removes the KUBE-* rules and chains it wrote.
	[[ -x $BIN/kube-proxy ]] && "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true

	say "unmounting what lies under $CLUSTER_DIR"
	# Deepest first: container rootfs, pod volumes (tmpfs), sandbox shm, network namespaces.
	awk -v d="$CLUSTER_DIR/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || echo "    could not unmount $m" >&2
	done
fi

owner=$(cat "$OWNER_FILE" 2>/dev/null || true)
holds_addresses=true
[[ -z $owner || $owner == "$CLUSTER_DIR" ]] || holds_addresses=false
if ! $holds_addresses; then
	# The bridges and chains are machine-wide and belong to the cluster that holds them: never take them away
	# from it (an up.sh that stopped because another cluster runs ends here through its caller's cleanup).
	say "the machine's cluster addresses belong to $owner: leaving its network devices and chains alone"
else
	say "removing the cluster's network devices and iptables chains"
	iptables -w -D FORWARD -i "$POD_BRIDGE" -j "$FORWARD_CHAIN" 2>/dev/null || true
	# Chains named like the cluster's (KUBE-*, CNI-*: kubelet, kube-proxy, portmap; O101-*: ours) that did not exist
	# before the first up: first the rules that jump to them, then the chains.
	before=$CLUSTER_DIR/iptables.before
	for t in filter nat mangle; do
		chains=$(iptables-save -t "$t" | sed -n 's/^:\(KUBE-[^ ]*\|CNI-[^ ]*\|O101-[^ ]*\) .*/\1/p' |
			while read -r c; do grep -qx "$t $c" "$before" 2>/dev/null || echo "$c"; done)
		[[ -n $chains ]] || continue
		pattern=$(echo "$chains" | paste -sd'|')
		{ iptables-save -t "$t" | grep -E "^-A .* -j ($pattern)( |\$)" || true; } | sed 's/^-A /-D /' |
			while read -r rule; do eval "iptables -w -t $t $rule" 2>/dev/null || true; done
		for c in $chains; do iptables -w -t "$t" -F "$c" 2>/dev/null || true; done
		for c in $chains; do iptables -w -t "$t" -X "$c" 2>/dev/null || true; done
	done
	# veths left by killed sandboxes vanish with their network namespaces; any still attached are ours.
	ip -o link show type veth 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | while read -r v; do
		[[ $(ip -o link show "$v" 2>/dev/null) == *"master $POD_BRIDGE"* ]] && ip link delete "$v" || true
	done
	for dev in "$POD_BRIDGE" "$NODE_BRIDGE"; do
		ip link show "$dev" >/dev/null 2>&1 && ip link delete "$dev" && echo "    deleted $dev"
	done
fi

if [[ -d $CLUSTER_DIR ]]; then
	left=$(awk -v d="$CLUSTER_DIR/" 'index($2, d) == 1' /proc/self/mounts | wc -l)
	[[ $left -eq 0 ]] || die "$left mounts remain under $CLUSTER_DIR; not removing it"
	rm -rf "$CLUSTER_DIR"
fi
[[ "$(cat "$OWNER_FILE" 2>/dev/null)" != "$CLUSTER_DIR" ]] || rm -f "$OWNER_FILE"
# What the node leaves at fixed host paths: the kubelet's /var/log/containers links into our pod logs and its
# device-plugin socket, the CNI result cache entries of our network, the runc shims' socket dir (containerd 1.6).
# Directories go only when nothing else is left in them.
for l in /var/log/containers/*.log; do
	[[ -L $l && $(readlink "$l") == "$CLUSTER_DIR/"* ]] && rm -f "$l"
done
$holds_addresses || {
	say "cluster down in $((SECONDS - t0))s"
	exit 0
}
for r in /var/lib/cni/results/operator101-*-eth0; do
	[[ -e $r ]] || continue
	id=${r#/var/lib/cni/results/operator101-}
	rm -f "$r" "/var/lib/cni/results/cni-loopback-${id%-eth0}-lo"
done
rm -f /var/lib/kubelet/device-plugins/kubelet.sock
# Shim sockets: the shims were killed, so their sockets stay behind; stale unless some shim still runs.
grep -qx 'containerd-shim.*' /proc/[0-9]*/comm 2>/dev/null || rm -f /run/containerd/s/*
rmdir /var/log/containers /var/lib/kubelet/device-plugins /var/lib/kubelet /var/lib/cni/results /var/lib/cni \
	/run/containerd/s /run/containerd 2>/dev/null || true
say "cluster down in $((SECONDS - t0))s"
