#!/usr/bin/env bash
# make bench: measures the operator101 manager at scale on a local API server (etcd + kube-apiserver from
# bin/k8s) and prints a markdown table; the JSON and the logs land in bin/bench/. See docs/contributing/performance.md.
#   hack/bench.sh [bench flags]      e.g. hack/bench.sh -sizes 100,1000  or  hack/bench.sh -n 100
#   hack/bench.sh -tenant-junk 100   the manager's memory at rest with 100 ConfigMaps a tenant labelled as its own
# The manager runs as its own process (bin/bench/manager, built from this tree) with the flags given by
# BENCH_MANAGER_ARGS and environment BENCH_MANAGER_ENV (defaults below: the manager as shipped; set them to
# measure another setting against it).
# Everything started here is stopped on exit, on failure and on Ctrl-C.
# Beside the manager and the lower bound runs the peer (bin/bench/peer, test/bench/cmd/peer): a tutorial-style
# controller of MyWeb and AppService, for comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bin/bench
mkdir -p "$out"
pidfile=$out/pids
: >"$pidfile"
# The manager runs as shipped: its own flag defaults, and the MEMORY_LIMIT its Deployment gets from the
# container's memory limit (config/manager/manager.yaml).
manager_args=${BENCH_MANAGER_ARGS-}
limit=$(sed -n '/limits:/,/requests:/s/^ *memory: *\([0-9]*\)Mi$/\1/p' config/manager/manager.yaml)
manager_env=${BENCH_MANAGER_ENV-"MEMORY_LIMIT=$((limit * 1024 * 1024))"}

bench_pid=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n $bench_pid ]] && kill -0 "$bench_pid" 2>/dev/null; then
		kill -TERM "$bench_pid" 2>/dev/null || true
		for _ in $(seq 1 100); do kill -0 "$bench_pid" 2>/dev/null || break; sleep 0.5; done
		kill -KILL "$bench_pid" 2>/dev/null || true
	fi
	# Anything the bench started and could not stop itself (etcd, kube-apiserver, the manager).
	while read -r pid; do
		[[ -n $pid ]] || continue
		if kill -0 "$pid" 2>/dev/null && grep -qaE 'etcd|kube-apiserver|bench/manager|bench/lowerbound|bench/peer' "/proc/$pid/cmdline" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
			sleep 1
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done <"$pidfile"
	rm -f "$pidfile"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The tree the binaries are built from, for the report; +dirty when tracked files differ from it.
commit=$(git rev-parse --short HEAD 2>/dev/null || true)
if [[ -n $commit ]] && [[ -n $(git status --porcelain --untracked-files=no 2>/dev/null || true) ]]; then
	commit+="+dirty"
fi

echo "building the manager, the bench, the lower bound, the peer and the charts into $out/"
# Built as the Dockerfile builds the image's manager: -trimpath and -s -w make 1 MiB fewer resident pages.
nice -n 10 go build -trimpath -ldflags "-s -w" -o "$out/manager" ./cmd
nice -n 10 go build -o "$out/bench" ./test/bench/cmd/bench
nice -n 10 go build -o "$out/lowerbound" ./test/bench/cmd/lowerbound
nice -n 10 go build -o "$out/peer" ./test/bench/cmd/peer
# The charts are a module of their own (the plotting library stays out of the operator's go.mod).
(cd test/bench/charts && nice -n 10 go build -o "../../../$out/charts" .)

nice -n 10 "$out/bench" -commit "$commit" -assets bin/k8s -crds config/crd/bases -manager "$out/manager" \
	-lowerbound "$out/lowerbound" -peer "$out/peer" -out "$out" -pidfile "$pidfile" -manager-args "$manager_args" -manager-env "$manager_env" "$@" &
bench_pid=$!
rc=0
wait "$bench_pid" || rc=$?
# The charts of this run (objects Available over time, memory over time), next to its JSON.
json=$(ls -t "$out"/bench-*.json 2>/dev/null | head -n 1 || true)
if [[ -n $json && $json -nt $out/charts ]]; then
	"$out/charts" "$json" || true
fi
exit "$rc"
