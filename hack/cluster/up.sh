#!/usr/bin/env bash
# Starts a real single-node Kubernetes cluster on this machine (make cluster-up); hack/cluster/down.sh removes it.
#
#   hack/cluster/up.sh        idempotent: starts what is not running, then waits for the node to be Ready
#
# Components: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy (built from
# the pinned Go modules by hack/tools/install.sh), containerd + runc + CNI plugins and docker-registry from
# Debian, CoreDNS (kubernetes plugin only) as the cluster DNS. Everything lives under bin/cluster/ (override with
# CLUSTER_DIR) and listens on loopback or on the node address 198.18.255.254, which sits on a bridge device the
# cluster creates; pods use 198.18.0.0/24 on a second bridge, Services 198.19.0.0/16. No query or packet leaves
# the machine: CoreDNS has no forwarder, pods cannot be forwarded beyond their bridge, docker.io pulls are
# served by the local registry.
#
# Afterwards: export KUBECONFIG=bin/cluster/kubeconfig. Images: localhost:5000/... (see hack/cluster/images.sh).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
cd "$root"
t0=$SECONDS

[[ $(id -u) -eq 0 ]] || die "needs root (network devices, iptables, containers); run it as root"

# ---------------------------------------------------------------------------------------------------------------
say "toolchain (Debian packages, then the Go-built binaries; cached after the first run)"
"$root/hack/cluster/install-deps.sh"
LOCALBIN=$BIN nice -n 10 "$root/hack/tools/install.sh" etcd kube-apiserver kubectl cluster

owner=$(cat "$OWNER_FILE" 2>/dev/null || true)
if [[ -n $owner && $owner != "$CLUSTER_DIR" && -d $owner ]] && ! cluster_alive "$owner"; then
	say "the cluster at $owner left its state behind but none of its processes runs: removing it"
	CLUSTER_DIR=$owner "$root/hack/cluster/down.sh"
	owner=
fi
if [[ -n $owner && $owner != "$CLUSTER_DIR" && -d $owner ]]; then
	die "another local cluster ($owner) holds this machine's cluster addresses; stop it first: make -C ${owner%/bin/cluster} cluster-down"
fi
mkdir -p "$CLUSTER_DIR" "$PKI" "$PIDS" "$LOGS"
echo "$CLUSTER_DIR" >"$OWNER_FILE"

# ---------------------------------------------------------------------------------------------------------------
say "network: $NODE_BRIDGE ($NODE_IP/32), $POD_BRIDGE ($POD_GATEWAY, pods $POD_CIDR), services $SERVICE_CIDR"
# Chains that exist before the first start are never removed by down.sh.
[[ -f $CLUSTER_DIR/iptables.before ]] || {
	for t in filter nat mangle; do iptables-save -t "$t" | sed -n "s/^:\([^ ]*\) .*/$t \1/p"; done
} >"$CLUSTER_DIR/iptables.before"
bridge_with_addr() { # NAME CIDR
	ip link show "$1" >/dev/null 2>&1 || ip link add "$1" type bridge
	ip -br addr show dev "$1" | grep -qF " ${2}" || ip addr add "$2" dev "$1"
	ip link set "$1" up
}
bridge_with_addr "$NODE_BRIDGE" "$NODE_IP/32"
# The pod bridge is ours too (the CNI bridge plugin only attaches veths to it: isGateway false, so it never
# turns on forwarding for the whole machine). Forwarding is enabled for packets arriving on this bridge only,
# and our chain drops any that would leave it: pods reach pods (directly or through Services) and the node.
bridge_with_addr "$POD_BRIDGE" "$POD_GATEWAY/24"
sysctl -qw "net.ipv4.conf.$POD_BRIDGE.forwarding=1"
iptables -w -N "$FORWARD_CHAIN" 2>/dev/null || true
iptables -w -C "$FORWARD_CHAIN" -o "$POD_BRIDGE" -j ACCEPT 2>/dev/null || {
	iptables -w -F "$FORWARD_CHAIN"
	iptables -w -A "$FORWARD_CHAIN" -o "$POD_BRIDGE" -j ACCEPT
	iptables -w -A "$FORWARD_CHAIN" -j DROP
}
iptables -w -C FORWARD -i "$POD_BRIDGE" -j "$FORWARD_CHAIN" 2>/dev/null ||
	iptables -w -I FORWARD 1 -i "$POD_BRIDGE" -j "$FORWARD_CHAIN"

# ---------------------------------------------------------------------------------------------------------------
say "certificates and tokens (openssl, in $PKI)"
ossl() { openssl "$@" 2>>"$LOGS/openssl.log"; }
cert() { # NAME SUBJECT [SANS]: a key and a certificate signed by the cluster CA (or by $CA)
	local name=$1 subj=$2 sans=${3:-}
	[[ -s $PKI/$name.crt ]] && return 0
	ossl genrsa -out "$PKI/$name.key" 2048
	ossl req -new -key "$PKI/$name.key" -subj "$subj" -out "$PKI/$name.csr"
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		if [[ -n $sans ]]; then
			echo "extendedKeyUsage=serverAuth,clientAuth"
			echo "subjectAltName=$sans"
		else
			echo "extendedKeyUsage=clientAuth"
		fi
	} >"$PKI/$name.ext"
	local ca=${CA:-ca}
	ossl x509 -req -in "$PKI/$name.csr" -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -CAcreateserial -days 365 \
		-extfile "$PKI/$name.ext" -out "$PKI/$name.crt"
	rm -f "$PKI/$name.csr" "$PKI/$name.ext"
}
umask 077
if [[ ! -s $PKI/ca.crt ]]; then
	ossl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 365 \
		-subj "/CN=operator101-cluster-ca" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
fi
cert apiserver "/CN=kube-apiserver" \
	"IP:$NODE_IP,IP:$API_SERVICE_IP,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.$CLUSTER_DOMAIN"
# The API server's identity towards the kubelet (logs, exec, port-forward); the kubelet trusts the CA.
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
# API aggregation (OLM's packageserver is an aggregated API): a CA of its own for the front proxy, whose client
# certificate the API server presents to aggregated API servers.
if [[ ! -s $PKI/front-proxy-ca.crt ]]; then
	ossl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/front-proxy-ca.key" -out "$PKI/front-proxy-ca.crt" \
		-days 365 -subj "/CN=operator101-front-proxy-ca" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
fi
[[ -s $PKI/front-proxy-client.crt ]] || CA=front-proxy-ca cert front-proxy-client "/CN=front-proxy-client"
# The registry's TLS listener on the node address (clients inside pods, such as opm, see their own loopback as
# localhost; they name the registry by the node address).
cert registry "/CN=$NODE_IP" "IP:$NODE_IP"
[[ -s $PKI/sa.key ]] || {
	ossl genrsa -out "$PKI/sa.key" 2048
	ossl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"
}
# One bearer token per component (static token file); the node's in system:nodes for the Node authorizer.
if [[ ! -s $PKI/tokens.csv ]]; then
	tok() { openssl rand -hex 24; }
	{
		echo "$(tok),admin,admin,system:masters"
		echo "$(tok),system:node:$NODE_NAME,system:node:$NODE_NAME,system:nodes"
		echo "$(tok),system:kube-controller-manager,system:kube-controller-manager"
		echo "$(tok),system:kube-scheduler,system:kube-scheduler"
		echo "$(tok),system:kube-proxy,system:kube-proxy"
		echo "$(tok),system:operator101:coredns,system:operator101:coredns"
	} >"$PKI/tokens.csv"
fi
kubeconfig() { # FILE USER
	local token
	token=$(awk -F, -v u="$2" '$2 == u { print $1 }' "$PKI/tokens.csv")
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: operator101
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")
users:
- name: $2
  user:
    token: $token
contexts:
- name: operator101
  context: {cluster: operator101, user: "$2"}
current-context: operator101
EOF
}
kubeconfig "$PKI/controller-manager.kubeconfig" system:kube-controller-manager
kubeconfig "$PKI/scheduler.kubeconfig" system:kube-scheduler
kubeconfig "$PKI/kubelet.kubeconfig" "system:node:$NODE_NAME"
kubeconfig "$PKI/kube-proxy.kubeconfig" system:kube-proxy
kubeconfig "$PKI/coredns.kubeconfig" system:operator101:coredns
umask 022
# The admin kubeconfig is published as bin/cluster/kubeconfig only once the node is Ready (see the end).
kubeconfig "$PKI/admin.kubeconfig" admin && chmod 600 "$PKI/admin.kubeconfig"

# ---------------------------------------------------------------------------------------------------------------
# start NAME COMMAND...: runs COMMAND detached (own session), records its pid; no-op when already running.
start() {
	local name=$1
	shift
	if running "$name"; then
		echo "    $name: running (pid $(<"$PIDS/$name.pid"))"
		return 0
	fi
	# The mark identifies our process on /proc/PID/cmdline (see running): every command names CLUSTER_DIR.
	echo "$CLUSTER_DIR" >"$PIDS/$name.mark"
	setsid "$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
	echo $! >"$PIDS/$name.pid"
	echo "    $name: started (pid $!, log $LOGS/$name.log)"
}
started_ok() { # NAME: fail with the log's tail when the process died
	running "$1" || {
		echo "cluster: $1 exited; the end of $LOGS/$1.log:" >&2
		tail -n 30 "$LOGS/$1.log" >&2
		exit 1
	}
}

# ---------------------------------------------------------------------------------------------------------------
say "registry on $REGISTRY (plain HTTP) and $NODE_IP:5000 (TLS, certificate from the cluster CA)"
mkdir -p "$CLUSTER_DIR/registry/data"
registry_config() { # FILE ADDR [TLS]
	cat >"$1" <<EOF
version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: $CLUSTER_DIR/registry/data}
  delete: {enabled: true}
http:
  addr: $2
$([[ -n ${3:-} ]] && printf '  tls: {certificate: %s, key: %s}' "$PKI/registry.crt" "$PKI/registry.key")
EOF
}
registry_config "$CLUSTER_DIR/registry/local.yml" "$REGISTRY"
registry_config "$CLUSTER_DIR/registry/node.yml" "$NODE_IP:5000" tls
start registry docker-registry serve "$CLUSTER_DIR/registry/local.yml"
start registry-tls docker-registry serve "$CLUSTER_DIR/registry/node.yml"
wait_until "the registry" 30 curl -fsS "http://$REGISTRY/v2/"
started_ok registry-tls

say "images (podman build --network none, pushed with skopeo)"
PUSHED_DIR=$CLUSTER_DIR/registry/pushed "$root/hack/cluster/images.sh"

# ---------------------------------------------------------------------------------------------------------------
say "control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler"
start etcd "$BIN/etcd" --name operator101 --data-dir "$CLUSTER_DIR/etcd" \
	--listen-client-urls "http://$ETCD_CLIENT" --advertise-client-urls "http://$ETCD_CLIENT" \
	--listen-peer-urls "http://$ETCD_PEER" --initial-advertise-peer-urls "http://$ETCD_PEER" \
	--initial-cluster "operator101=http://$ETCD_PEER" \
	--unsafe-no-fsync --quota-backend-bytes 4294967296 --log-level warn
wait_until "etcd" 60 curl -fsS "http://$ETCD_CLIENT/health"

start kube-apiserver "$BIN/kube-apiserver" \
	--etcd-servers "http://$ETCD_CLIENT" \
	--bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
	--service-cluster-ip-range "$SERVICE_CIDR" \
	--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
	--client-ca-file "$PKI/ca.crt" --token-auth-file "$PKI/tokens.csv" \
	--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction,OwnerReferencesPermissionEnforcement \
	--service-account-issuer "https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
	--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
	--kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
	--kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
	--kubelet-preferred-address-types InternalIP \
	--requestheader-client-ca-file "$PKI/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
	--requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
	--requestheader-extra-headers-prefix X-Remote-Extra- \
	--proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
	--allow-privileged --profiling=false --cert-dir "$PKI/apiserver-generated"
wait_until "the API server" 120 kc get --raw /readyz
started_ok kube-apiserver

# OpenShift's admission, emulated (docs/contributing/development.md): its namespaces' UID ranges and the restricted-v2 SCC as
# admission policies, applied before anything but the API server's own namespaces exists; those get their
# ranges through an update, as OpenShift's namespace controller gives every namespace one.
say "admission like OpenShift's: OwnerReferencesPermissionEnforcement, UID ranges and restricted-v2 (hack/cluster/admission)"
kc apply --server-side --force-conflicts --field-manager operator101-cluster -f hack/cluster/admission/scc.yaml >/dev/null
ranged() { # the range a new namespace would get (a dry run): the policies are loaded
	local r
	r=$(kc create namespace operator101-range-check --dry-run=server -o jsonpath='{.metadata.annotations.openshift\.io/sa\.scc\.uid-range}')
	echo "$r"
	[[ -n $r ]]
}
wait_until "the namespace UID-range policy to be loaded" 60 ranged
for ns in $(kc get namespaces -o name); do
	kc patch "$ns" --type merge -p '{}' >/dev/null # an update: the policy adds the range
done

start kube-controller-manager "$BIN/kube-controller-manager" \
	--kubeconfig "$PKI/controller-manager.kubeconfig" \
	--authentication-kubeconfig "$PKI/controller-manager.kubeconfig" \
	--authorization-kubeconfig "$PKI/controller-manager.kubeconfig" \
	--bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
	--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
	--cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
	--service-cluster-ip-range "$SERVICE_CIDR" --cert-dir "$PKI/controller-manager-generated" \
	--profiling=false
start kube-scheduler "$BIN/kube-scheduler" \
	--kubeconfig "$PKI/scheduler.kubeconfig" \
	--authentication-kubeconfig "$PKI/scheduler.kubeconfig" \
	--authorization-kubeconfig "$PKI/scheduler.kubeconfig" \
	--bind-address 127.0.0.1 --leader-elect=false --profiling=false \
	--cert-dir "$PKI/scheduler-generated"

# The cluster DNS: CoreDNS runs beside the node (not as a pod) on the node address, behind the kube-dns
# Service, with read access to what its kubernetes plugin watches.
kc apply --server-side --force-conflicts --field-manager operator101-cluster -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "operator101:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "operator101:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "operator101:coredns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:operator101:coredns"}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns, kubernetes.io/name: CoreDNS}
spec:
  clusterIP: $DNS_SERVICE_IP
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: $DNS_PORT}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: $DNS_PORT}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-node
  namespace: kube-system
  labels:
    kubernetes.io/service-name: kube-dns
    endpointslice.kubernetes.io/managed-by: operator101-cluster
addressType: IPv4
endpoints:
- addresses: ["$NODE_IP"]
  conditions: {ready: true}
  nodeName: $NODE_NAME
ports:
- {name: dns, port: $DNS_PORT, protocol: UDP}
- {name: dns-tcp, port: $DNS_PORT, protocol: TCP}
EOF
cat >"$CLUSTER_DIR/Corefile" <<EOF
.:$DNS_PORT {
    bind $NODE_IP
    errors
    kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
        kubeconfig $PKI/coredns.kubeconfig operator101
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
}
EOF
start coredns "$BIN/coredns" -conf "$CLUSTER_DIR/Corefile"

# ---------------------------------------------------------------------------------------------------------------
say "node: containerd, kubelet, kube-proxy"
mkdir -p "$CLUSTER_DIR/cni/net.d" "$CLUSTER_DIR/containerd/certs.d"
cat >"$CLUSTER_DIR/cni/net.d/10-operator101.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "operator101",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$POD_BRIDGE",
      "isGateway": false,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$CLUSTER_DIR/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0", "gw": "$POD_GATEWAY"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
EOF
# Registry hosts: localhost:5000 is the plain-HTTP registry; docker.io and quay.io are served by it too (the
# samples' nginx and busybox, scorecard-test), so no pull ever leaves the machine; the node address is the TLS listener, trusted via our CA.
hosts() { # HOST SERVER [EXTRA]
	mkdir -p "$CLUSTER_DIR/containerd/certs.d/$1"
	printf 'server = "%s"\n\n[host."%s"]\n  capabilities = ["pull", "resolve"]\n%s' "$2" "$2" "${3:-}" \
		>"$CLUSTER_DIR/containerd/certs.d/$1/hosts.toml"
}
hosts "localhost:5000" "http://$REGISTRY"
hosts "$REGISTRY" "http://$REGISTRY"
hosts "docker.io" "http://$REGISTRY"
hosts "quay.io" "http://$REGISTRY"
hosts "$NODE_IP:5000" "https://$NODE_IP:5000" "  ca = \"$PKI/ca.crt\"
"
cat >"$CLUSTER_DIR/containerd/config.toml" <<EOF
version = 2
root = "$CLUSTER_DIR/containerd/root"
state = "$CLUSTER_DIR/containerd/state"
oom_score = 0

[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$CLUSTER_DIR/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost:5000/operator101/pause:3.10"
  # Negative OOM scores are not permitted here: without this every sandbox fails to start.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  # Containers may bind ports below 1024 without privilege (containerd 2's default): a pod running as its
  # namespace's UID (hack/cluster/admission) serves the samples' port 80.
  enable_unprivileged_ports = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "$CLUSTER_DIR/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CLUSTER_DIR/cni/net.d"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$CLUSTER_DIR/containerd/certs.d"
EOF
start containerd containerd --config "$CLUSTER_DIR/containerd/config.toml"
wait_until "containerd's socket" 30 test -S "$CONTAINERD_SOCK"
started_ok containerd

mkdir -p "$CLUSTER_DIR/kubelet/root" "$CLUSTER_DIR/kubelet/pki" "$CLUSTER_DIR/kubelet/pod-logs"
cat >"$CLUSTER_DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
# cgroups are v1 here.
failCgroupV1: false
failSwapOn: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
clusterDNS: [$DNS_SERVICE_IP]
clusterDomain: $CLUSTER_DOMAIN
# Pods with dnsPolicy Default get no upstream resolver: nothing is looked up beyond the machine.
resolvConf: ""
podLogsDir: $CLUSTER_DIR/kubelet/pod-logs
serializeImagePulls: false
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
start kubelet "$BIN/kubelet" --config "$CLUSTER_DIR/kubelet/config.yaml" \
	--kubeconfig "$PKI/kubelet.kubeconfig" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" \
	--root-dir "$CLUSTER_DIR/kubelet/root" --cert-dir "$CLUSTER_DIR/kubelet/pki"
start kube-proxy "$BIN/kube-proxy" --kubeconfig "$PKI/kube-proxy.kubeconfig" \
	--hostname-override "$NODE_NAME" --proxy-mode iptables --cluster-cidr "$POD_CIDR" \
	--bind-address "$NODE_IP" --nodeport-addresses "$NODE_IP/32" \
	--healthz-bind-address 127.0.0.1:10256 --metrics-bind-address 127.0.0.1:10249 \
	--conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 \
	--profiling=false

say "waiting for node $NODE_NAME to be Ready"
wait_until "node $NODE_NAME to register" 120 kc get node "$NODE_NAME"
kc wait --for condition=Ready "node/$NODE_NAME" --timeout 180s >/dev/null
wait_until "the default ServiceAccount" 60 kc -n default get serviceaccount default
wait_until "CoreDNS" 30 bash -c "exec 3<>/dev/tcp/$NODE_IP/$DNS_PORT"
for c in kube-controller-manager kube-scheduler coredns kubelet kube-proxy registry registry-tls; do started_ok "$c"; done

cp "$PKI/admin.kubeconfig" "$KUBECONFIG_ADMIN"
say "cluster up in $((SECONDS - t0))s: export KUBECONFIG=$KUBECONFIG_ADMIN (node $NODE_NAME, API https://$NODE_IP:$API_PORT)"
