#!/usr/bin/env bash
# Installs Traefik v3.6.12 on the local cluster as its ingress and Gateway API controller (issue 55), from the
# binary hack/tools/install.sh traefik builds:
#   1. the Gateway API standard CRDs of sigs.k8s.io/gateway-api (the version go.mod requires, from the module
#      cache: config/crd/standard, with its safe-upgrades ValidatingAdmissionPolicy), applied server-side and
#      waited for until Established;
#   2. the image operator101/traefik:v3.6.12 (hack/cluster/images.sh traefik);
#   3. hack/cluster/traefik/traefik.yaml: namespace traefik, ServiceAccount, ClusterRole, IngressClass traefik,
#      the Deployment and the NodePort 30443 (https://HOST:30443 on the node address 198.18.255.254 only);
#   4. the Secret traefik/gateway-tls (a certificate signed by the cluster CA, made when it is missing) and
#      hack/cluster/traefik/gateway.yaml: GatewayClass traefik, Gateway traefik/traefik with an HTTPS listener;
#   5. waits until the Deployment is available and the Gateway Programmed.
# Idempotent. Not yet called by up.sh or e2e.sh.
#
#   hack/cluster/traefik.sh [install]     (after hack/cluster/up.sh)
#   hack/cluster/traefik.sh uninstall     removes Traefik, the Gateway, the classes (the CRDs stay: other
#                                         objects of theirs may exist)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$root"
t0=$SECONDS
TRAEFIK_VERSION=v3.6.12
export PUSHED_DIR=$CLUSTER_DIR/registry/pushed
manifests=$root/hack/cluster/traefik

[[ -s $KUBECONFIG_ADMIN ]] || die "no cluster: run make cluster-up first"
k() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

case ${1:-install} in
install) ;;
uninstall)
	say "removing Traefik"
	k delete --ignore-not-found -f "$manifests/gateway.yaml" >/dev/null 2>&1 || true
	k delete --ignore-not-found --wait=true --timeout 120s -f "$manifests/traefik.yaml" >/dev/null
	exit 0
	;;
*) echo "usage: $0 [install|uninstall]" >&2; exit 2 ;;
esac

say "Gateway API CRDs (standard channel, server-side apply)"
crds=$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)/config/crd/standard
[[ -d $crds ]] || die "the Gateway API CRDs not found in $crds"
k apply --server-side --force-conflicts -f "$crds" >/dev/null
for f in "$crds"/gateway.networking.k8s.io_*.yaml; do
	[[ $f == *_vap_* ]] && continue
	name=$(sed -n 's/^  name: //p' "$f" | head -1)
	k wait --for condition=Established --timeout 60s "crd/$name" >/dev/null
done

say "Traefik $TRAEFIK_VERSION: binary and image"
LOCALBIN=$BIN nice -n 10 hack/tools/install.sh traefik
"$(dirname "$0")/images.sh" traefik

say "Traefik: namespace, RBAC, IngressClass traefik, Deployment, NodePort $NODE_IP:30443"
k apply --server-side --force-conflicts -f "$manifests/traefik.yaml" >/dev/null

# The Gateway listener's certificate: any name under the cluster CA, until someone (the e2e) puts their own.
if ! k -n traefik get secret gateway-tls >/dev/null 2>&1; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	openssl req -new -newkey rsa:2048 -nodes -keyout "$tmp/tls.key" -subj "/CN=gateway.operator101.test" \
		-out "$tmp/tls.csr" 2>/dev/null
	printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:*.operator101.test\n' >"$tmp/ext"
	openssl x509 -req -in "$tmp/tls.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-CAserial "$tmp/ca.srl" -days 365 -extfile "$tmp/ext" -out "$tmp/tls.crt" 2>/dev/null
	k -n traefik create secret tls gateway-tls --cert "$tmp/tls.crt" --key "$tmp/tls.key" >/dev/null
fi
say "Gateway API: GatewayClass traefik, Gateway traefik/traefik (HTTPS on the websecure entry point)"
k apply --server-side --force-conflicts -f "$manifests/gateway.yaml" >/dev/null

if ! k -n traefik rollout status deployment/traefik --timeout 180s >/dev/null; then
	k -n traefik get pods -o wide >&2
	k -n traefik logs deployment/traefik --tail 30 >&2 || true
	die "Traefik did not become available"
fi
if ! k -n traefik wait --for condition=Programmed --timeout 60s gateway/traefik >/dev/null; then
	k -n traefik get gateway traefik -o yaml >&2
	die "the Gateway traefik/traefik is not Programmed"
fi
say "Traefik $TRAEFIK_VERSION ready in $((SECONDS - t0))s: IngressClass and GatewayClass traefik, https://HOST:30443 on $NODE_IP"
