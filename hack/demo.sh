#!/usr/bin/env bash
# make demo: operator101 as a platform team meets it. A real single-node cluster on this machine (hack/cluster),
# real OLM, operator101's catalog image in the cluster's registry, a Subscription, then the seeds' samples — and a
# summary of what runs and what to type next. On a cluster of your own with OLM (KUBECONFIG, IMAGE_TAG_BASE and
# the other variables of hack/cluster/target.sh), the same from "operator101's images" on.
#
#   hack/demo.sh            start (idempotent: a second run reuses what runs and re-checks it)
#   hack/demo.sh uninstall  remove what the demo installed (the samples, operator101, the DatabaseTarget) and stop
#                           its MariaDB; the cluster and OLM stay
#   hack/demo.sh down       uninstall, then stop the local cluster (on a cluster of yours: uninstall only)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=cluster/lib.sh
source hack/cluster/lib.sh
# shellcheck source=cluster/target.sh
source hack/cluster/target.sh
t0=$SECONDS
NS=operator101-system   # where OLM runs the operator
SAMPLES=demo            # the samples without a namespace of their own
export MARIADB_DIR=$root/bin/demo/mariadb
export KUBECONFIG=$TARGET_KUBECONFIG
k() { "$BIN/kubectl" "$@"; }
step() { printf '\n\033[1m==> %s\033[0m (%ss)\n' "$*" "$((SECONDS - t0))"; }

uninstall() {
	# The samples first, while the operator runs (the DatabaseUser's finalizer drops its account, the Database's
	# its database: the demo made it, so it goes, unlike a user's, whose cleanupPolicy keeps it by default), then
	# what OLM installed. The CRDs stay: removing them deletes every user's objects (docs/admin/uninstall.md).
	if [[ -s $KUBECONFIG ]] && k get --raw /readyz >/dev/null 2>&1; then
		k -n "$SAMPLES" patch mydb demo-app --type merge -p '{"spec":{"cleanupPolicy":"Delete"}}' >/dev/null 2>&1 || true
		k delete --ignore-not-found --wait=true --timeout 180s namespace "$SAMPLES" || true
		k delete --ignore-not-found databasetarget/that-database || true
		k delete --ignore-not-found --wait=true --timeout 180s namespace "$NS" || true
	fi
	hack/mariadb.sh stop 2>/dev/null || true
}
case ${1:-} in
uninstall)
	uninstall
	exit 0
	;;
down)
	uninstall
	$existing || hack/cluster/down.sh
	exit 0
	;;
esac

if $existing; then
	step "Toolchain; the cluster of KUBECONFIG=$TARGET_KUBECONFIG and its OLM"
	hack/tools/install.sh controller-gen kustomize kubectl operator-sdk opm
	target_up
else
	step "Toolchain, cluster, registry (make cluster-up; the first run builds everything, later runs take seconds)"
	hack/tools/install.sh controller-gen kustomize kubectl operator-sdk opm olm
	target_up
fi

step "operator101's images: operator, bundles, catalog (make docker-build bundle-build catalog-build, pushed to $IMAGE_TAG_BASE)"
hack/cluster/release-images.sh
version=$(bundle_version)
node=$(target_node_address)

if [[ -n ${MARIADB_HOST:-} ]]; then
	step "The MySQL/MariaDB server MARIADB_HOST=$MARIADB_HOST for the DatabaseUser sample"
else
	step "A MariaDB with TLS for the DatabaseUser sample, on the node address $node (installed with apt-get if missing)"
fi
target_mariadb "$MARIADB_DIR" "$node" >/dev/null
# shellcheck disable=SC1091
source "$MARIADB_DIR/env"

step "Installing operator101 from its catalog: CatalogSource, OperatorGroup, Subscription to channel stable"
k create namespace "$NS" --dry-run=client -o yaml | k apply -f - >/dev/null
# The cluster admin, not the application teams, holds the database's admin account: a Secret in the
# operator's namespace (with the CA that signed the MariaDB's certificate).
hack/mariadb.sh secret "$NS" mariadb-target | k apply -f - >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: operator101-catalog, namespace: $NS}
spec:
  sourceType: grpc
  image: $IMAGE_TAG_BASE-catalog:v$version
  displayName: operator101 (local)
  publisher: operator101
  grpcPodConfig: {securityContextConfig: restricted}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: operator101, namespace: $NS}
spec: {}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: operator101, namespace: $NS}
spec:
  channel: stable
  name: operator101
  source: operator101-catalog
  sourceNamespace: $NS
  installPlanApproval: Automatic
YAML
csv_phase() { k -n "$NS" get csv "operator101.v$version" -o jsonpath='{.status.phase}' | grep -qx Succeeded; }
wait_until "CSV operator101.v$version Succeeded" 300 csv_phase
k -n "$NS" rollout status deployment/operator101-controller-manager --timeout 120s >/dev/null
k -n "$NS" get csv

step "The cluster admin declares the database server: DatabaseTarget that-database (config/samples), TLS verified"
k apply -f config/samples/mygroup_v1alpha1_databasetarget.yaml
wait_until "DatabaseTarget Ready" 120 k wait --for condition=Ready --timeout 5s databasetarget/that-database
k get databasetarget that-database

# The README's path for the samples, as a user types it: one namespace, every sample, each Ready at the end.
step "The samples: kubectl apply -n $SAMPLES -k config/samples"
k create namespace "$SAMPLES" --dry-run=client -o yaml | k apply -f - >/dev/null
k apply -n "$SAMPLES" -k config/samples
k -n "$SAMPLES" wait --timeout 300s --for condition=Available \
	myweb/myweb appservices.app.example.com/nginx-app appservices.batch.schwarzeni.github.com/nginx-app-v1alpha1
k -n "$SAMPLES" wait --timeout 300s --for condition=Succeeded at/example-at
k -n "$SAMPLES" wait --timeout 300s --for condition=Ready databaseuser/cnhandsomeguy mydb/demo-app
# The samples leave their node ports to the cluster: read them from the Services.
port() { k -n "$SAMPLES" get service "$1" -o jsonpath='{.spec.ports[0].nodePort}'; }
web_port=$(port myweb) app_port=$(port nginx-app) batch_port=$(port nginx-app-v1alpha1)
wait_until "the MyWeb page" 60 curl -fsS -m 3 "http://$node:$web_port/"

echo
k -n "$SAMPLES" get web,appservices.app.example.com,appservices.batch.schwarzeni.github.com,at,databaseuser,mydb
cat <<MSG

$(printf '\033[1m')operator101 $version runs on $($existing && echo "your cluster" || echo "a local cluster"), installed by OLM from its catalog, in $((SECONDS - t0))s.$(printf '\033[0m')

  export KUBECONFIG=$TARGET_KUBECONFIG PATH=$BIN:\$PATH

  kubectl -n $NS get subscription,csv,pods
      what OLM installed
  kubectl get web,appservice,at,dbu,mydb -A; kubectl get dbt
      the samples and their state; the database server and whether the operator reaches it
  curl http://$node:$web_port/
      the MyWeb page (kubectl -n $SAMPLES edit web myweb, change spec.pageContentHtml, GET again)
  kubectl -n $SAMPLES scale appservice/nginx-app --replicas 3; curl http://$node:$app_port/
      the AppService of app.example.com (seed 003)
  kubectl -n $SAMPLES get pods -l app=nginx-app-v1alpha1; curl http://$node:$batch_port/
      the AppService of batch.schwarzeni.github.com (seed 004): appservices.batch.schwarzeni.github.com/nginx-app-v1alpha1
  kubectl -n $SAMPLES logs example-at-pod
      what the At ran
  mariadb -h $MARIADB_HOST -P $MARIADB_PORT -u cnhandsomeguy -pchangeit
      the DatabaseUser's account (its password is in Secret $SAMPLES/my-secret)

  Upgrades, configuration, uninstall: docs/admin/.   make demo-down stops what the demo started.
MSG
