# How operator101's scripts reach image registries. Sourced, not run.
#
# TLS is always verified, with one exception: a registry on this machine (localhost, 127.0.0.1, or the local
# cluster's node address) that is given no CA, which is plain HTTP or self-signed.
#   REGISTRY_CERT_DIR  a directory of PEM CAs (*.crt, as podman's --cert-dir takes it) that sign the certificate
#                      of IMAGE_TAG_BASE's registry: a private registry, or the local cluster's TLS listener. Skopeo
#                      and opm verify that registry against them; other registries against the system's CAs.

# Releases are named under the project's published name (the Makefile's IMAGE_TAG_BASE default,
# quay.io/operator101/...). This machine reaches no registry: it holds them in REGISTRY (default 127.0.0.1:5000,
# the local cluster's registry or the release cache) under the same path, as a disconnected cluster's mirror
# does, and the local cluster's containerd pulls quay.io from there. MIRRORED (default quay.io/operator101) is
# the prefix so mirrored; MIRRORED= (empty) pushes to and pulls from the real registry.
REGISTRY=${REGISTRY:-127.0.0.1:5000}
MIRRORED=${MIRRORED-quay.io/operator101}

# registry_ref REF: where REF is pushed and read here: REGISTRY for the local names (localhost:5000,
# 127.0.0.1:5000) and for the mirrored prefix, REF itself otherwise.
registry_ref() {
	case $1 in
	localhost:5000/* | 127.0.0.1:5000/*) echo "$REGISTRY/${1#*/}" ;;
	*)
		if [[ -n $MIRRORED && $1 == "$MIRRORED"/* ]]; then
			echo "$REGISTRY/${1#*/}"
		else
			echo "$1"
		fi
		;;
	esac
}

# registries_conf FILE: a containers-registries.conf(5) that reads MIRRORED from its mirror in REGISTRY.
registries_conf() {
	{
		echo "# Written by hack/registry.sh registries_conf."
		echo 'unqualified-search-registries = []'
		[[ -z $MIRRORED ]] || printf '\n[[registry]]\nprefix = "%s"\nlocation = "%s"\n\n[[registry.mirror]]\nlocation = "%s"\n' \
			"$MIRRORED" "$MIRRORED" "$REGISTRY/${MIRRORED#*/}"
	} >"$1"
}

# registry_on_this_machine REF: REF's registry runs on this machine.
registry_on_this_machine() {
	case ${1%%/*} in
	localhost | localhost:* | 127.0.0.1 | 127.0.0.1:* | 198.18.255.254 | 198.18.255.254:*) return 0 ;;
	esac
	return 1
}

# registry_uses_ca REF: REGISTRY_CERT_DIR is given and signs REF's registry (the one IMAGE_TAG_BASE names).
registry_uses_ca() {
	local base=${IMAGE_TAG_BASE:-quay.io/operator101/operator101}
	[[ -n ${REGISTRY_CERT_DIR:-} && ${1%%/*} == "${base%%/*}" ]]
}

# registry_skips_tls REF: the one rule: TLS is not verified (plain HTTP or self-signed allowed) only for a
# registry on this machine that is given no CA.
registry_skips_tls() { registry_on_this_machine "$1" && ! registry_uses_ca "$1"; }

# tls_flags SIDE REF: skopeo's TLS flags for REF; SIDE is src or dest (copy) or empty (inspect).
tls_flags() {
	local p=${1:+$1-}
	if registry_uses_ca "$2"; then
		echo "--${p}tls-verify=true --${p}cert-dir $REGISTRY_CERT_DIR"
	elif registry_skips_tls "$2"; then
		echo "--${p}tls-verify=false"
	else
		echo "--${p}tls-verify=true"
	fi
}

# trust_registry_ca DIR: Go programs started after this (opm, operator-sdk) trust REGISTRY_CERT_DIR's CAs besides
# the system's (SSL_CERT_FILE, a file of both: DIR/registry-ca.pem, in a directory of the caller's own, as a run
# beside it trusts another CA).
trust_registry_ca() {
	[[ -n ${REGISTRY_CERT_DIR:-} ]] || return 0
	local bundle=$1/registry-ca.pem
	{
		cat /etc/ssl/certs/ca-certificates.crt 2>/dev/null || true
		cat "$REGISTRY_CERT_DIR"/*.crt
	} >"$bundle"
	export SSL_CERT_FILE=$bundle
}
