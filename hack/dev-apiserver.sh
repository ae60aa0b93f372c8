#!/usr/bin/env bash
# Starts or stops a local API server (etcd + kube-apiserver built by hack/tools) with the CRDs installed.
#   hack/dev-apiserver.sh start|stop|status
# State lives in bin/dev-apiserver/: the kubeconfig, the pid and the log.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${DEV_DIR:-$PWD/bin/dev-apiserver}
pidfile=$dir/devenv.pid
mkdir -p "$dir"

running() { [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

case "${1:-}" in
start)
	if running; then
		echo "local API server already running (pid $(cat "$pidfile")); kubeconfig $dir/kubeconfig"
		exit 0
	fi
	rm -f "$dir/kubeconfig"
	go build -o "$dir/devenv" ./hack/devenv
	nohup "$dir/devenv" -assets bin/k8s -crds config/crd/bases -write-kubeconfig "$dir/kubeconfig" >"$dir/devenv.log" 2>&1 &
	echo $! >"$pidfile"
	for _ in $(seq 1 120); do
		[[ -s $dir/kubeconfig ]] && { echo "local API server ready; export KUBECONFIG=$dir/kubeconfig"; exit 0; }
		running || { echo "local API server failed to start:"; tail -n 30 "$dir/devenv.log"; exit 1; }
		sleep 0.5
	done
	echo "local API server did not become ready within 60s:"; tail -n 30 "$dir/devenv.log"; exit 1
	;;
stop)
	if running; then
		pid=$(cat "$pidfile")
		kill "$pid"
		for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
		kill -9 "$pid" 2>/dev/null || true
		echo "local API server stopped"
	else
		echo "local API server not running"
	fi
	rm -f "$pidfile" "$dir/kubeconfig"
	;;
status)
	if running; then echo "running (pid $(cat "$pidfile")); kubeconfig $dir/kubeconfig"; else echo "not running"; exit 1; fi
	;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
