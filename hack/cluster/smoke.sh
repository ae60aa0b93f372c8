#!/usr/bin/env bash
# Smoke check of the local cluster (make cluster-smoke), in a namespace of its own that it removes afterwards:
#   1. a busybox pod (from Debian's busybox-static) runs to Completed, and its log is read through the API server;
#   2. a web pod ("image: nginx", served by the local registry) behind a NodePort Service answers an HTTP GET
#      from the host at the node address;
#   3. a probe pod resolves kubernetes.default and the web Service by name (CoreDNS), GETs the web Service by
#      name, and reaches the API server through the kubernetes ClusterIP with its ServiceAccount token.
#
#   hack/cluster/smoke.sh        (after hack/cluster/up.sh)
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
t0=$SECONDS
NS=operator101-smoke
NODE_PORT=30080

[[ -s $KUBECONFIG_ADMIN ]] || die "no cluster: run make cluster-up first"
k() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" -n "$NS" "$@"; }
fail() {
	echo "SMOKE FAILED: $*" >&2
	k get pods -o wide >&2 || true
	k get events --sort-by .lastTimestamp 2>/dev/null | tail -n 20 >&2 || true
	exit 1
}
# pod_done NAME: waits until the pod Succeeded; fails with its logs when it Failed.
pod_done() {
	local phase start=$SECONDS
	while :; do
		phase=$(k get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null || true)
		case $phase in
		Succeeded) return 0 ;;
		Failed) k logs "$1" --all-containers >&2 || true; fail "pod $1 Failed" ;;
		esac
		((SECONDS - start < 120)) || fail "pod $1 not Succeeded after 120s (phase '$phase')"
		sleep 0.5
	done
}

if "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" get namespace "$NS" >/dev/null 2>&1; then
	"$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" delete namespace "$NS" --timeout 120s >/dev/null
fi
"$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" create namespace "$NS" >/dev/null
wait_until "the default ServiceAccount in $NS" 60 k get serviceaccount default

say "1. busybox pod to Completed"
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: busybox}
spec:
  restartPolicy: Never
  containers:
  - name: busybox
    image: localhost:5000/library/busybox:1.36
    command: [sh, -c, 'echo "hello from busybox"; test -s /var/run/secrets/kubernetes.io/serviceaccount/token && echo "token mounted"']
EOF
pod_done busybox
logs=$(k logs busybox)
[[ $logs == *"hello from busybox"*"token mounted"* ]] || fail "busybox log: $logs"
echo "    Completed; log via the API server: $(echo "$logs" | paste -sd' ')"

say "2. web pod behind NodePort $NODE_PORT, GET from the host"
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers:
  - name: web
    image: nginx
    ports: [{containerPort: 80}]
    readinessProbe: {httpGet: {path: /, port: 80}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: 80, nodePort: $NODE_PORT}]
EOF
k wait --for condition=Ready pod/web --timeout 120s >/dev/null || fail "web pod not Ready"
body=""
start=$SECONDS
until body=$(curl -fsS --max-time 2 "http://$NODE_IP:$NODE_PORT/" 2>/dev/null); do
	((SECONDS - start < 30)) || fail "NodePort http://$NODE_IP:$NODE_PORT/ did not answer"
	sleep 0.5
done
[[ $body == *"operator101 web"* ]] || fail "unexpected page: $body"
echo "    http://$NODE_IP:$NODE_PORT/ answered: $(grep -o '<h1>[^<]*</h1>' <<<"$body")"

say "3. from a pod: cluster DNS, a Service by name, the API server via the kubernetes ClusterIP"
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: probe}
spec:
  restartPolicy: Never
  initContainers:
  - name: dns
    image: localhost:5000/operator101/probe:1
    args: [dns, kubernetes.default.svc.$CLUSTER_DOMAIN, web.$NS.svc.$CLUSTER_DOMAIN, web]
  - name: web
    image: localhost:5000/operator101/probe:1
    args: [http, "http://web.$NS.svc.$CLUSTER_DOMAIN/"]
  containers:
  - name: api
    image: localhost:5000/operator101/probe:1
    args: [api]
EOF
pod_done probe
for c in dns web api; do echo "    $c: $(k logs probe -c "$c" | cut -c1-150 | paste -sd' ')"; done

"$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" delete namespace "$NS" --timeout 120s >/dev/null
say "smoke passed in $((SECONDS - t0))s"
