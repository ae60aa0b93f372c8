#!/usr/bin/env bash
# Restarts one process of the local cluster: hack/cluster/restart.sh NAME (a name of CLUSTER_DIR/pids: kubelet,
# kube-apiserver, ...). It stops the process (SIGTERM, SIGKILL after 20 s) and runs up.sh, which starts only what
# is not running and waits for the node to be Ready. The chaos test (make test-chaos) restarts the kubelet and
# the API server with it; the pods the kubelet started keep running in containerd meanwhile.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
name=${1:?usage: hack/cluster/restart.sh NAME}
running "$name" || die "$name is not running"
pid=$(<"$PIDS/$name.pid")
kill "$pid"
for _ in $(seq 40); do
	[[ -d /proc/$pid ]] || break
	sleep 0.5
done
[[ ! -d /proc/$pid ]] || kill -9 "$pid"
if ! "$root/hack/cluster/up.sh" >>"$LOGS/restart.log" 2>&1; then
	tail -n 30 "$LOGS/restart.log" >&2
	die "up.sh failed while restarting $name"
fi
running "$name" || die "$name did not come back"
say "$name restarted (pid $(<"$PIDS/$name.pid"))"
