#!/usr/bin/env bash
# make test-e2e: operator101 installed the ways its users install it, on the real local cluster with real OLM.
#   1. the cluster (hack/cluster/up.sh), OLM (olm.sh), operator101's release images (release-images.sh) and the
#      scorecard-test image in its registry;
#   2. a private MariaDB listening on the node address, so the operator's pod reaches it;
#   3. go test -tags e2e ./test/e2e (Subscription install, samples, upgrade, scorecard, uninstall; operator-sdk
#      run bundle / bundle-upgrade / cleanup).
# It stops what it started: the MariaDB always; the cluster when it was not running before (KEEP_CLUSTER=1 keeps
# it, to look around afterwards).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$root"
t0=$SECONDS

started_cluster=true
if [[ -s $KUBECONFIG_ADMIN ]] && kc get --raw /readyz >/dev/null 2>&1; then
	started_cluster=false
fi
if ! $started_cluster && kc -n operator101-system get subscription operator101 >/dev/null 2>&1; then
	die "make demo's operator101 runs on this cluster (one install per cluster): make demo-down first"
fi
db_dir=$(mktemp -d "${TMPDIR:-/tmp}/operator101-e2e-mariadb.XXXXXX")
cleanup() {
	local rc=$?
	MARIADB_DIR=$db_dir hack/mariadb.sh stop 2>/dev/null || true
	if $started_cluster && [[ ${KEEP_CLUSTER:-0} != 1 ]]; then
		"$root/hack/cluster/down.sh" || rc=1
	fi
	say "e2e finished in $((SECONDS - t0))s (exit $rc)"
	exit "$rc"
}
trap cleanup EXIT

"$root/hack/cluster/up.sh"
"$root/hack/cluster/olm.sh"
"$root/hack/cluster/release-images.sh"
PUSHED_DIR=$CLUSTER_DIR/registry/pushed "$root/hack/cluster/images.sh" scorecard-test
hack/tools/install.sh operator-sdk kubectl
say "MariaDB on $NODE_IP (for the DatabaseUser tests)"
MARIADB_DIR=$db_dir MARIADB_BIND=$NODE_IP hack/mariadb.sh start

say "go test -tags e2e ./test/e2e"
KUBECONFIG=$KUBECONFIG_ADMIN \
	E2E_KUBECTL=$BIN/kubectl \
	E2E_OPERATOR_SDK=$BIN/operator-sdk \
	E2E_NODE_IP=$NODE_IP \
	E2E_CATALOG_IMAGE=localhost:5000/operator101/operator101-catalog:v$(bundle_version) \
	E2E_BUNDLE_REPO=$NODE_IP:5000/operator101/operator101-bundle \
	E2E_OPM_IMAGE=$NODE_IP:5000/operator101/opm:v1.64.0 \
	E2E_HELPER_IMAGE=localhost:5000/library/busybox:1.36 \
	E2E_CA_FILE=$PKI/ca.crt \
	E2E_MARIADB_ENV=$db_dir/env \
	E2E_ROOT=$root \
	go test -tags e2e ./test/e2e/ -count=1 -v -timeout 45m ${E2E_TEST_ARGS:-}
