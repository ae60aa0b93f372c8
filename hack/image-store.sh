#!/usr/bin/env bash
# The image tests' own podman, buildah and skopeo storage (test/images and test/release, make test-go-images), so
# that they share nothing with podman's default store, where the e2e and make demo build beside them images of
# the same IDs (the builds are reproducible), tag, push and remove them.
#
#   hack/image-store.sh          prints the environment that points podman, buildah and skopeo (and podman's
#                                Docker API service, started in it) at that store, as KEY=VALUE lines:
#                                testenv.HoldImageStore sets it before a test builds or removes an image
#   hack/image-store.sh CMD...   runs CMD in that environment
#
# The store is a directory (OPERATOR101_IMAGE_STORE, default the tool cache's image-store: ${OPERATOR101_CACHE:-
# ${XDG_CACHE_HOME:-$HOME/.cache}/operator101}/image-store), outside the clone and shared by every clone on the
# machine, like the tools, so that what it keeps (the offline opm image that catalog builds start from) outlasts
# a CI run. In it:
#   storage.conf     containers-storage (CONTAINERS_STORAGE_CONF): graphroot storage/ beside it; runroot on
#                    /run (else XDG_RUNTIME_DIR or TMPDIR), named after the store. The machine's storage.conf
#                    (/etc/containers, else /usr/share/containers) with these two paths, so the driver and its
#                    options are the default store's; where there is none, as here, the driver podman picks,
#                    overlay, with no options.
#   containers.conf  podman's (CONTAINERS_CONF, which podman then reads alone): the machine's, with [engine]'s
#                    tmp_dir (the alive marker, events log and exit files, else /run/libpod) beside the runroot
#                    and lock_type "file" (locks in tmp_dir, else the machine-wide /dev/shm/libpod_lock).
#   lock             what testenv.HoldImageStore locks: one test process uses the store at a time (and
#                    first prunes the images without a name that the runs before it left)
#   stamp            a hash of what the images kept between runs are built from: testenv.HoldImageStore
#                    empties the store when it changes.
# Every path that holds state is the store's own; a second store (another OPERATOR101_IMAGE_STORE) shares none
# with it.
set -euo pipefail

cache=${OPERATOR101_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/operator101}
store=${OPERATOR101_IMAGE_STORE:-$cache/image-store}
mkdir -p "$store/storage"
store=$(cd "$store" && pwd)
# One runroot per graphroot: containers-storage keeps its mount counts and layer locks there.
name=operator101-image-store-$(echo "$store" | sha256sum | cut -c1-12)
if [[ -w /run ]]; then
	run=/run/$name
else
	run=${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}/$name
fi
mkdir -p "$run"

first() { # first FILE...: the first that exists
	local f
	for f in "$@"; do [[ -f $f ]] && echo "$f" && return 0; done
	return 0
}

# write FILE: stdin into FILE, replaced at once (another clone may read it meanwhile).
write() {
	local tmp
	tmp=$(mktemp "$1.XXXXXX")
	cat >"$tmp"
	chmod 0644 "$tmp"
	mv -f "$tmp" "$1"
}

# splice FILE TABLE KEY=VALUE...: FILE's settings (none: no file; comments and blank lines left out) with TABLE's
# KEYs set to the VALUEs (TOML strings), the table added at the end when FILE has none.
splice() {
	local file=$1 table=$2
	shift 2
	SETS=$(printf '%s\n' "$@") awk -v table="[$table]" '
		function put(i) { for (i = 1; i <= n; i++) printf "%s = \"%s\"\n", order[i], keys[order[i]]; done = 1 }
		BEGIN {
			m = split(ENVIRON["SETS"], kv, "\n")
			for (i = 1; i <= m; i++) {
				if (kv[i] == "") continue
				k = substr(kv[i], 1, index(kv[i], "=") - 1)
				keys[k] = substr(kv[i], length(k) + 2)
				order[++n] = k
			}
		}
		/^[ \t]*\[/ { cur = $0; sub(/#.*/, "", cur); gsub(/[ \t]/, "", cur) }
		/^[ \t]*(#|$)/ { next }
		cur == table && /=/ { k = $0; sub(/^[ \t]*/, "", k); sub(/[ \t]*=.*/, "", k); if (k in keys) next }
		{ print }
		cur == table && !done && /^[ \t]*\[/ { put() }
		END { if (!done) { print table; put() } }
	' "${file:-/dev/null}"
}

machine_storage=$(first /etc/containers/storage.conf /usr/share/containers/storage.conf)
machine_containers=$(first /etc/containers/containers.conf /usr/share/containers/containers.conf)
storage=("graphroot=$store/storage" "runroot=$run/storage" "rootless_storage_path=$store/storage")
# No storage.conf on this machine: the driver podman picks by default, overlay, with no options (podman info).
[[ -n $machine_storage ]] || storage=("driver=overlay" "${storage[@]}")
{
	echo "# Written by hack/image-store.sh: the image tests' store: ${machine_storage:-the defaults of podman}"
	echo "# with paths of its own."
	splice "$machine_storage" storage "${storage[@]}"
} | write "$store/storage.conf"
{
	echo "# Written by hack/image-store.sh: the image tests' podman: ${machine_containers:-the defaults of podman}"
	echo "# with a per-boot directory and locks of the store's own."
	splice "$machine_containers" engine "tmp_dir=$run/libpod" "lock_type=file"
} | write "$store/containers.conf"

env=("OPERATOR101_IMAGE_STORE=$store" "CONTAINERS_STORAGE_CONF=$store/storage.conf"
	"CONTAINERS_CONF=$store/containers.conf")
if [[ $# -eq 0 ]]; then
	printf '%s\n' "${env[@]}"
	exit 0
fi
exec env "${env[@]}" "$@"
