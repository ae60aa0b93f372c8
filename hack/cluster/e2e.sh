#!/usr/bin/env bash
# make test-e2e: operator101 installed the ways its users install it, on a real cluster with real OLM: the local
# cluster by default, or a cluster of your own (KUBECONFIG and IMAGE_TAG_BASE; hack/cluster/target.sh):
#   1. the cluster and OLM (hack/cluster/up.sh and olm.sh; or checked), operator101's release images and this
#      tree's (release-images.sh) in the registry the cluster pulls from;
#   2. a MySQL/MariaDB server the operator's pod reaches: the MARIADB_* variables, else a private MariaDB
#      started here on the node address;
#   3. go test -tags e2e ./test/e2e: first the README's quick start and docs/admin/upgrade.md's and docs/admin/uninstall.md's blocks, run
#      as written (TestQuickStartFromTheREADME; QUICKSTART=0 skips it), then the rest (Subscription install,
#      samples, upgrade, scorecard, uninstall; operator-sdk run bundle / bundle-upgrade / cleanup); then, with
#      CHAOS=1 (make ci's), the chaos upgrade (TestChaosUpgrade, build tag chaos; CHAOS_ONLY=1 runs it alone:
#      make test-chaos);
#   4. make demo (hack/demo.sh) on the same cluster, then TestSeedsAfterDemo: each tutorial's own steps, as its
#      reader types them, beside the demo's samples; then the demo's uninstall (SEEDS=0 skips 4).
# It stops what it started: the MariaDB always; the local cluster when it was not running before (KEEP_CLUSTER=1
# keeps it, to look around afterwards). On a cluster of your own it leaves OLM and the cluster as they were,
# and removes what the tests installed.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=target.sh
source "$(dirname "$0")/target.sh"
cd "$root"
t0=$SECONDS

started_cluster=true
if $existing || { [[ -s $KUBECONFIG_ADMIN ]] && kc get --raw /readyz >/dev/null 2>&1; }; then
	started_cluster=false
fi
db_dir=$(mktemp -d "${TMPDIR:-/tmp}/operator101-e2e-mariadb.XXXXXX")
demo_started=false
cleanup() {
	local rc=$?
	if $demo_started; then
		hack/demo.sh uninstall || rc=1
	fi
	MARIADB_DIR=$db_dir hack/mariadb.sh stop 2>/dev/null || true
	rm -rf "$db_dir"
	if $started_cluster && [[ ${KEEP_CLUSTER:-0} != 1 ]]; then
		"$root/hack/cluster/down.sh" || rc=1
	fi
	start_beside
	say "e2e finished in $((SECONDS - t0))s (exit $rc)"
	exit "$rc"
}
trap cleanup EXIT
# start_beside: under make ci (hack/ci.sh), the steps that run beside this one may start now: the setup's builds
# and the quick start's are done, and the rest mostly waits on OLM and pods.
start_beside() { [[ -z ${CI_START_BESIDE:-} ]] || touch "$CI_START_BESIDE"; }

target_up
if tk -n operator101-system get subscription operator101 >/dev/null 2>&1; then
	die "make demo's operator101 runs on this cluster (one install per cluster): make demo-down first"
fi
TIGHTENED=1 "$root/hack/cluster/release-images.sh"
# The scorecard-test image the bundle names (quay.io/operator-framework/...): the local cluster serves quay.io
# from its registry; a cluster of your own pulls it from quay.io or its mirror.
$existing || PUSHED_DIR=$CLUSTER_DIR/registry/pushed "$root/hack/cluster/images.sh" scorecard-test
# Traefik serves the routes (Ingress and HTTPRoute) TestOLM/RoutesThroughTraefik fetches; TRAEFIK=0 leaves it out.
traefik=0
if ! $existing && [[ ${TRAEFIK:-1} != 0 ]]; then
	"$root/hack/cluster/traefik.sh"
	traefik=1
fi
hack/tools/install.sh operator-sdk kubectl
node=$(target_node_address)
say "the cluster: ${EXISTING_KUBECONFIG:-the local one}; node address $node; images $IMAGE_TAG_BASE"
target_mariadb "$db_dir" "$node" >/dev/null

# What the tests trust for the registry pods pull from by the node address (operator-sdk's CLI pulls there too).
cert_dir=${REGISTRY_CERT_DIR:-}
if ! $existing; then
	cert_dir=$CLUSTER_DIR/registry/ca
	mkdir -p "$cert_dir"
	cp "$PKI/ca.crt" "$cert_dir/ca.crt"
fi


e2e_test() {
	KUBECONFIG=$TARGET_KUBECONFIG \
		E2E_KUBECTL=$BIN/kubectl \
		E2E_OPERATOR_SDK=$BIN/operator-sdk \
		E2E_NODE_IP=$node \
		E2E_TRAEFIK=$traefik \
		E2E_CATALOG_IMAGE=$IMAGE_TAG_BASE-catalog:v$(bundle_version) \
		E2E_TIGHTENED_CATALOG_IMAGE=$IMAGE_TAG_BASE-catalog:tightened \
		E2E_BUNDLE_REPO=$POD_IMAGE_TAG_BASE-bundle \
		E2E_OPM_IMAGE=${POD_IMAGE_TAG_BASE%/*}/opm:v1.64.0 \
		E2E_HELPER_IMAGE=${E2E_HELPER_IMAGE:-docker.io/library/busybox:1.36} \
		E2E_PROBE_IMAGE=${E2E_PROBE_IMAGE:-${POD_IMAGE_TAG_BASE%/*}/probe:1} \
		E2E_REGISTRY_CERT_DIR=$cert_dir \
		E2E_MARIADB_ENV=${mariadb_env:-$db_dir/env} \
		E2E_ROOT=$root \
		E2E_CONTAINERD_CERTS_D=$($existing || echo "$CLUSTER_DIR/containerd/certs.d") \
		go test -tags "e2e${E2E_TAGS:+,$E2E_TAGS}" ./test/e2e/ -count=1 -v "$@"
}

# chaos_upgrade: TestChaosUpgrade (build tag chaos), which restarts the local cluster's kubelet and API server:
# the local cluster only.
chaos_upgrade() {
	! $existing || die "the chaos test restarts the local cluster's kubelet and API server, so it runs on the local cluster only (CHAOS=0 leaves it out of make ci)"
	say "the chaos upgrade (TestChaosUpgrade, CHAOS_SEED=${CHAOS_SEED:-drawn from the clock})"
	E2E_TAGS=chaos e2e_test -timeout 45m -run '^TestChaosUpgrade$'
}

# make test-chaos (CHAOS_ONLY=1): the chaos upgrade alone, on the cluster and images set up above.
if [[ ${CHAOS_ONLY:-0} == 1 ]]; then
	chaos_upgrade
	exit 0
fi

# The README's quick start first, as a new user meets the cluster: nothing of operator101's installed or stored
# (its uninstall deletes every object of every kind). QUICKSTART=0 skips it.
if [[ ${QUICKSTART:-1} == 1 ]]; then
	say "the README's quick start, then docs/admin/upgrade.md's and docs/admin/uninstall.md's blocks, as written (TestQuickStartFromTheREADME)"
	e2e_test -timeout 30m -run '^TestQuickStartFromTheREADME$'
fi
start_beside

say "go test -tags e2e ./test/e2e"
# shellcheck disable=SC2086 # E2E_TEST_ARGS is a list of go test flags
e2e_test -timeout 45m -skip '^(TestSeedsAfterDemo|TestQuickStartFromTheREADME)$' ${E2E_TEST_ARGS:-}

# The chaos upgrade on the same cluster, when CHAOS=1 (make ci sets it).
if [[ ${CHAOS:-0} == 1 ]]; then
	chaos_upgrade
fi

[[ ${SEEDS:-1} == 1 ]] || exit 0
# The e2e's MariaDB is done with; the demo starts its own, as make demo does.
MARIADB_DIR=$db_dir hack/mariadb.sh stop 2>/dev/null || true
say "make demo on this cluster, then each tutorial's steps as its reader types them (TestSeedsAfterDemo)"
demo_started=true
hack/demo.sh
mariadb_env=$root/bin/demo/mariadb/env e2e_test -timeout 20m -run '^TestSeedsAfterDemo$'
