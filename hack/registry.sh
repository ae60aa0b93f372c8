# How operator101's scripts reach image registries. Sourced, not run.
#
# TLS is always verified, with one exception: a registry on this machine (localhost, 127.0.0.1, or the local
# cluster's node address) that is given no CA, which is plain HTTP or self-signed.
#   REGISTRY_CERT_DIR  a directory of PEM CAs (*.crt, as podman's --cert-dir takes it) that sign the certificate
#                      of IMAGE_TAG_BASE's registry: a private registry, or the local cluster's TLS listener. Skopeo
#                      and opm verify that registry against them; other registries against the system's CAs.

# registry_on_this_machine REF: REF's registry runs on this machine.
registry_on_this_machine() {
	case ${1%%/*} in
	localhost | localhost:* | 127.0.0.1 | 127.0.0.1:* | 198.18.255.254 | 198.18.255.254:*) return 0 ;;
	esac
	return 1
}

# registry_uses_ca REF: REGISTRY_CERT_DIR is given and signs REF's registry (the one IMAGE_TAG_BASE names).
registry_uses_ca() {
	local base=${IMAGE_TAG_BASE:-localhost:5000/operator101/operator101}
	[[ -n ${REGISTRY_CERT_DIR:-} && ${1%%/*} == "${base%%/*}" ]]
}

# tls_flags SIDE REF: skopeo's TLS flags for REF; SIDE is src or dest (copy) or empty (inspect).
tls_flags() {
	local p=${1:+$1-}
	if registry_uses_ca "$2"; then
		echo "--${p}tls-verify=true --${p}cert-dir $REGISTRY_CERT_DIR"
	elif registry_on_this_machine "$2"; then
		echo "--${p}tls-verify=false"
	else
		echo "--${p}tls-verify=true"
	fi
}

# trust_registry_ca: Go programs started after this (opm, operator-sdk) trust REGISTRY_CERT_DIR's CAs besides
# the system's (SSL_CERT_FILE, a file of both).
trust_registry_ca() {
	[[ -n ${REGISTRY_CERT_DIR:-} ]] || return 0
	local bundle=${TMPDIR:-/tmp}/operator101-registry-ca.$(id -u).pem
	{
		cat /etc/ssl/certs/ca-certificates.crt 2>/dev/null || true
		cat "$REGISTRY_CERT_DIR"/*.crt
	} >"$bundle"
	export SSL_CERT_FILE=$bundle
}
