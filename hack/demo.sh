#!/usr/bin/env bash
# make demo: run operator101 with its samples on a local API server and show what it did.
#   hack/demo.sh        start (idempotent)
#   hack/demo.sh down   stop everything the demo started
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
state=$root/bin/demo
mkdir -p "$state"
export KUBECONFIG=$root/bin/dev-apiserver/kubeconfig
kubectl=$root/bin/kubectl
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

if [[ ${1:-} == down ]]; then
	if [[ -f $state/manager.pid ]] && kill -0 "$(cat "$state/manager.pid")" 2>/dev/null; then
		kill "$(cat "$state/manager.pid")" && echo "operator stopped"
	fi
	rm -f "$state/manager.pid"
	hack/mariadb.sh stop >/dev/null 2>&1 || true
	hack/dev-apiserver.sh stop
	exit 0
fi

step "Building the tools (cached after the first run)"
make --no-print-directory envtest kubectl kustomize controller-gen

step "Starting a local API server (etcd + kube-apiserver) with the operator101 CRDs"
hack/dev-apiserver.sh start

step "Building and starting the operator (log: bin/demo/manager.log)"
go build -o "$state/manager" .
if [[ -f $state/manager.pid ]] && kill -0 "$(cat "$state/manager.pid")" 2>/dev/null; then
	kill "$(cat "$state/manager.pid")"; sleep 1
fi
$kubectl create namespace operator101-system --dry-run=client -o yaml | $kubectl apply -f - >/dev/null
step "Starting a private MariaDB on 127.0.0.1 for the DatabaseUser sample (installed with apt-get if missing)"
# shellcheck disable=SC1090
source <(hack/mariadb.sh start --env)
# The operator, not the team, holds the database's admin account: a target Secret in the operator's namespace.
hack/mariadb.sh secret operator101-system mariadb-target | $kubectl apply -f - >/dev/null
POD_NAMESPACE=operator101-system nohup "$state/manager" --leader-elect=false --zap-devel \
	--metrics-bind-address=127.0.0.1:18443 --health-probe-bind-address=127.0.0.1:18081 >"$state/manager.log" 2>&1 &
echo $! >"$state/manager.pid"
for _ in $(seq 1 60); do
	curl -fs http://127.0.0.1:18081/readyz >/dev/null 2>&1 && break
	kill -0 "$(cat "$state/manager.pid")" 2>/dev/null || { tail -n 20 "$state/manager.log"; exit 1; }
	sleep 0.5
done
echo "operator ready (pid $(cat "$state/manager.pid"))"

step "Applying the samples (config/samples)"
$kubectl apply -k config/samples

step "What the operator made of them"
# Wait (bounded) for each sample to report its state; a kind whose sample has not settled is shown anyway.
for kind in mywebs appservices ats databaseusers; do
	$kubectl get "$kind" -A >/dev/null 2>&1 || continue
	$kubectl wait "$kind" --all -A --for=jsonpath='{.status.observedGeneration}' --timeout=60s >/dev/null 2>&1 || true
done
$kubectl get mywebs,appservices,ats,databaseusers -A -o wide || true
echo
$kubectl get deployments,services,configmaps,pods -A -l app.kubernetes.io/managed-by=operator101 2>/dev/null || true

cat <<MSG

This local API server runs no kubelet, so Deployments create no pods here: the operator's work is the objects
above and their status. Try:
  export KUBECONFIG=$KUBECONFIG
  bin/kubectl get web -o wide            # MyWeb: image, ready/desired, node port, Available
  bin/kubectl explain web.spec           # the API, documented
  bin/kubectl describe web               # conditions and Events
  bin/kubectl scale appservice --all --replicas=3
  bin/kubectl get dbu -o wide            # DatabaseUser: the account exists in the private MariaDB
  source <(hack/mariadb.sh env); mariadb -h127.0.0.1 -P\$MARIADB_PORT -ucnhandsomeguy -pchangeit -e 'select current_user()'

  tail -f bin/demo/manager.log           # what the operator does
  make demo-down                         # stop everything
MSG
