#!/usr/bin/env bash
# A private MariaDB for the DatabaseUser tests and `make demo`: its own data directory, socket and pid file
# under one directory, listening on 127.0.0.1 only, on a free port, with an admin account whose password is
# random. It never touches a system MariaDB.
#
#   hack/mariadb.sh start [--env]   install mariadb-server if missing, initialise (first time) and start;
#                                   --env prints the connection facts as `export` lines on stdout
#   hack/mariadb.sh halt            stop the server, keep its data (start brings it back on the same port)
#   hack/mariadb.sh stop            stop the server and remove its directory
#   hack/mariadb.sh env             print the connection facts (export lines)
#   hack/mariadb.sh secret [NS] [NAME]  print a target Secret manifest for the operator (NS default
#                                   operator101-system, NAME default mariadb-target)
#
# TLS: MARIADB_TLS_DIR names a directory with ca.pem, server-cert.pem and server-key.pem (a test's own CA);
# MARIADB_TLS=1 instead generates a CA and a server certificate for the bind address with openssl. Either is
# kept in $MARIADB_DIR/tls and used on every start; MARIADB_REQUIRE_TLS=1 also refuses unencrypted
# connections (require_secure_transport). The env file then has MARIADB_CA_FILE, and `secret` adds ca.crt.
# MARIADB_DIR chooses the directory (default: ${TMPDIR:-/tmp}/operator101-mariadb). MARIADB_BIND chooses the one
# address it listens on (default 127.0.0.1; the local cluster's pods reach it on the node address 198.18.255.254,
# see hack/cluster/). A directory keeps the address it was first started with. The connection facts are
# in $MARIADB_DIR/env as KEY=VALUE lines: MARIADB_HOST, MARIADB_PORT, MARIADB_ADMIN_USER,
# MARIADB_ADMIN_PASSWORD, MARIADB_SOCKET. Messages go to stderr, so stdout stays machine-readable.
set -euo pipefail

dir=${MARIADB_DIR:-${TMPDIR:-/tmp}/operator101-mariadb}
envfile=$dir/env
sock=$dir/mysqld.sock
pidfile=$dir/mysqld.pid
tlsdir=$dir/tls
log=$dir/mysqld.log
admin_user=operator101admin
bind=${MARIADB_BIND:-127.0.0.1}
[[ ! -f $envfile ]] || bind=$(sed -n 's/^MARIADB_HOST=//p' "$envfile")

say() { echo "mariadb.sh: $*" >&2; }
die() { say "$*"; exit 1; }

# The server refuses to run as root unless told to; any other user runs it as itself.
user_opts=()
cli_user=$(id -un)
if [[ $(id -u) == 0 ]]; then
	user_opts=(--user=root)
	cli_user=root
fi

# setup_tls puts the server's certificates in $tlsdir, once: the caller's (MARIADB_TLS_DIR) or new ones.
setup_tls() {
	[[ ! -f $tlsdir/ca.pem ]] || return 0
	if [[ -n ${MARIADB_TLS_DIR:-} ]]; then
		mkdir -p "$tlsdir"
		cp "$MARIADB_TLS_DIR/ca.pem" "$MARIADB_TLS_DIR/server-cert.pem" "$MARIADB_TLS_DIR/server-key.pem" "$tlsdir/"
	elif [[ ${MARIADB_TLS:-} == 1 ]]; then
		command -v openssl >/dev/null || die "MARIADB_TLS=1 needs openssl"
		mkdir -p "$tlsdir"
		say "generating a CA and a server certificate for $bind in $tlsdir"
		(
			cd "$tlsdir"
			openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca-key.pem -out ca.pem \
				-days 3650 -subj "/CN=operator101 private MariaDB CA" 2>/dev/null
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server-key.pem -out server.csr \
				-subj "/CN=$bind" 2>/dev/null
			printf 'subjectAltName=IP:%s,DNS:localhost\n' "$bind" >san.ext
			openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out server-cert.pem \
				-days 3650 -extfile san.ext 2>/dev/null
			rm -f server.csr san.ext ca-key.pem ca.srl
		)
	else
		return 0
	fi
	[[ ${MARIADB_REQUIRE_TLS:-} != 1 ]] || touch "$tlsdir/require"
	chmod -R go-rwx "$tlsdir"
}

installed() {
	command -v mariadbd >/dev/null 2>&1 && command -v mariadb-install-db >/dev/null 2>&1 &&
		command -v mariadb >/dev/null 2>&1
}

install_server() {
	installed && return
	[[ $(id -u) == 0 ]] || die "mariadb-server is not installed and installing it needs root"
	# Test packages start their servers in parallel: one installs, the others wait for it.
	exec 9>"${TMPDIR:-/tmp}/operator101-mariadb-install.lock"
	flock 9
	if ! installed; then
		say "installing mariadb-server (apt-get)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 mariadb-server mariadb-client >&2
	fi
	flock -u 9
}

running() {
	[[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

port_in_use() {
	(exec 3<>"/dev/tcp/$bind/$1") 2>/dev/null
}

free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 40000))
		if ! port_in_use "$p"; then
			echo "$p"
			return
		fi
	done
	die "no free port found"
}

cli() { mariadb --no-defaults --protocol=socket --socket="$sock" -u"$cli_user" "$@"; }

# launch starts the server on $1 and waits until it answers; it fails when the port was taken meanwhile.
launch() {
	local port=$1
	: >"$log"
	mkdir -p "$dir/tmp"
	local tls_opts=()
	if [[ -f $tlsdir/ca.pem ]]; then
		tls_opts=(--ssl-ca="$tlsdir/ca.pem" --ssl-cert="$tlsdir/server-cert.pem" --ssl-key="$tlsdir/server-key.pem")
		[[ ! -f $tlsdir/require ]] || tls_opts+=(--require-secure-transport=ON)
	fi
	TMPDIR=$dir/tmp setsid nohup mariadbd --no-defaults "${user_opts[@]}" --datadir="$dir/data" --socket="$sock" \
		--tmpdir="$dir/tmp" "${tls_opts[@]}" \
		--pid-file="$pidfile" --port="$port" --bind-address="$bind" --skip-name-resolve \
		--log-error="$log" --innodb-buffer-pool-size=32M --innodb-log-file-size=16M --skip-log-bin \
		--max-connections=200 </dev/null >/dev/null 2>&1 &
	local pid=$!
	for _ in $(seq 1 300); do
		if ! kill -0 "$pid" 2>/dev/null; then
			return 1
		fi
		if [[ -S $sock ]] && cli -e 'SELECT 1' >/dev/null 2>&1 && port_in_use "$port"; then
			return 0
		fi
		sleep 0.1
	done
	kill "$pid" 2>/dev/null || true
	return 1
}

start() {
	install_server
	if running; then
		say "already running (pid $(cat "$pidfile"), $dir)"
		return
	fi
	mkdir -p "$dir"
	chmod 700 "$dir"
	setup_tls
	local fresh=false port
	if [[ ! -d $dir/data/mysql ]]; then
		fresh=true
		rm -rf "$dir/data"
		say "initialising a data directory in $dir/data"
		# Each instance has its own tmpdir: bootstraps running in parallel collide on temp table names in /tmp.
		mkdir -p "$dir/tmp"
		TMPDIR=$dir/tmp mariadb-install-db --no-defaults "${user_opts[@]}" --datadir="$dir/data" --skip-test-db \
			--auth-root-authentication-method=socket --tmpdir="$dir/tmp" >"$dir/install.log" 2>&1 ||
			{ cat "$dir/install.log" >&2; die "mariadb-install-db failed"; }
	fi
	if [[ -f $envfile ]]; then
		port=$(sed -n 's/^MARIADB_PORT=//p' "$envfile")
		launch "$port" || { tail -n 20 "$log" >&2; die "server did not start on port $port (log: $log)"; }
	else
		local ok=false
		for _ in 1 2 3 4 5; do
			port=$(free_port)
			if launch "$port"; then
				ok=true
				break
			fi
			say "port $port did not work, trying another"
		done
		$ok || { tail -n 20 "$log" >&2; die "server did not start (log: $log)"; }
	fi
	if $fresh || [[ ! -f $envfile ]]; then
		local pw
		pw=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
		# One local address only (bind-address), so '%' means "this machine (or the local cluster's pods) over TCP".
		cli <<SQL
CREATE OR REPLACE USER '$admin_user'@'%' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON *.* TO '$admin_user'@'%' WITH GRANT OPTION;
DELETE FROM mysql.global_priv WHERE User = '';
FLUSH PRIVILEGES;
SQL
		umask 077
		cat >"$envfile" <<ENV
MARIADB_HOST=$bind
MARIADB_PORT=$port
MARIADB_ADMIN_USER=$admin_user
MARIADB_ADMIN_PASSWORD=$pw
MARIADB_SOCKET=$sock
MARIADB_DIR=$dir
ENV
		[[ ! -f $tlsdir/ca.pem ]] || echo "MARIADB_CA_FILE=$tlsdir/ca.pem" >>"$envfile"
	fi
	say "running on $bind:$port (pid $(cat "$pidfile"), dir $dir)"
}

halt() {
	if running; then
		local pid
		pid=$(cat "$pidfile")
		kill "$pid"
		for _ in $(seq 1 300); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
		say "stopped (pid $pid)"
	fi
	rm -f "$pidfile"
}

print_env() {
	[[ -f $envfile ]] || die "not started: no $envfile"
	sed 's/^/export /' "$envfile"
}

case ${1:-} in
start)
	start
	if [[ ${2:-} == --env ]]; then print_env; fi
	;;
halt) halt ;;
stop)
	halt
	rm -rf "$dir"
	;;
env) print_env ;;
secret)
	[[ -f $envfile ]] || die "not started: no $envfile"
	# shellcheck disable=SC1090
	source "$envfile"
	cat <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: ${3:-mariadb-target}
  namespace: ${2:-operator101-system}
type: Opaque
stringData:
  host: "$MARIADB_HOST"
  port: "$MARIADB_PORT"
  username: "$MARIADB_ADMIN_USER"
  password: "$MARIADB_ADMIN_PASSWORD"
YAML
	if [[ -n ${MARIADB_CA_FILE:-} ]]; then
		echo "  ca.crt: |"
		sed 's/^/    /' "$MARIADB_CA_FILE"
	fi
	;;
*)
	sed -n '2,22p' "$0" >&2
	exit 2
	;;
esac
