#!/usr/bin/env bash
# make demo: operator101 as a platform team meets it. A real single-node cluster on this machine (hack/cluster),
# real OLM, operator101's catalog image in the cluster's registry, a Subscription, then the seeds' samples — and a
# summary of what runs and what to type next. On a cluster of your own with OLM (KUBECONFIG, IMAGE_TAG_BASE and
# the other variables of hack/cluster/target.sh), the same from "operator101's images" on.
#
#   hack/demo.sh        start (idempotent: a second run reuses what runs and re-checks it)
#   hack/demo.sh down   stop everything the demo started (the local cluster, or on yours what it installed; the
#                       MariaDB)
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

if [[ ${1:-} == down ]]; then
	if $existing; then
		# The samples first, while the operator runs (the DatabaseUser's finalizer drops its account), then
		# what OLM installed. The CRDs stay: removing them deletes every user's objects (docs/olm.md, Uninstall).
		k delete --ignore-not-found --wait=true --timeout 120s -n default myweb/myweb || true
		k delete --ignore-not-found --wait=true --timeout 180s namespace "$SAMPLES" || true
		k delete --ignore-not-found databasetarget/that-database || true
		k delete --ignore-not-found --wait=true --timeout 180s namespace "$NS" || true
	fi
	hack/mariadb.sh stop 2>/dev/null || true
	$existing || hack/cluster/down.sh
	exit 0
fi

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

step "The samples (config/samples): MyWeb in default, the others in namespace $SAMPLES"
k create namespace "$SAMPLES" --dry-run=client -o yaml | k apply -f - >/dev/null
k apply -f config/samples/operator_v1_myweb.yaml
for f in app_v1_appservice cnat_v1alpha1_at mygroup_v1alpha1_databaseuser; do
	k apply -n "$SAMPLES" -f "config/samples/$f.yaml"
done
wait_until "MyWeb Available" 180 k wait --for condition=Available --timeout 5s -n default myweb/myweb
wait_until "AppService Available" 180 k wait --for condition=Available --timeout 5s -n "$SAMPLES" appservice/nginx-app
wait_until "At DONE" 180 k wait --for jsonpath='{.status.phase}'=DONE --timeout 5s -n "$SAMPLES" at/example-at
wait_until "DatabaseUser Ready" 180 k wait --for condition=Ready --timeout 5s -n "$SAMPLES" databaseuser/cnhandsomeguy
wait_until "the MyWeb page" 60 curl -fsS -m 3 "http://$node:30100/"

echo
k get web -A
k -n "$SAMPLES" get appservice,at,databaseuser
cat <<MSG

$(printf '\033[1m')operator101 $version runs on $($existing && echo "your cluster" || echo "a local cluster"), installed by OLM from its catalog, in $((SECONDS - t0))s.$(printf '\033[0m')

  export KUBECONFIG=$TARGET_KUBECONFIG PATH=$BIN:\$PATH

  kubectl -n $NS get subscription,csv,pods
      what OLM installed
  kubectl get web,appservice,at,dbu -A; kubectl get dbt
      the samples and their state; the database server and whether the operator reaches it
  curl http://$node:30100/
      the MyWeb page (kubectl edit web myweb, change spec.pageContentHtml, GET again)
  kubectl -n $SAMPLES scale appservice/nginx-app --replicas 3; curl http://$node:30002/
      the AppService
  kubectl -n $SAMPLES logs example-at-pod
      what the At ran
  mariadb -h $MARIADB_HOST -P $MARIADB_PORT -u cnhandsomeguy -pchangeit
      the DatabaseUser's account (its password is in Secret $SAMPLES/my-secret)

  Upgrades, configuration, uninstall: docs/olm.md.   make demo-down stops what the demo started.
MSG
