#!/usr/bin/env bash
# Fails when the committed generated files are stale: it regenerates them and compares with what was there.
# Compares against the working tree (not git), so it also works with uncommitted edits.
set -euo pipefail
cd "$(dirname "$0")/.."

paths=(api config docs/reference bundle catalog)
targets=${VERIFY_TARGETS:-generate manifests docs bundle catalog}

snap=$(mktemp -d)
trap 'rm -rf "$snap"' EXIT
for p in "${paths[@]}"; do
	[[ -e $p ]] && mkdir -p "$snap/$(dirname "$p")" && cp -a "$p" "$snap/$(dirname "$p")/"
done

make --no-print-directory $targets >"$snap/.make.log" 2>&1 || { cat "$snap/.make.log"; exit 1; }

status=0
for p in "${paths[@]}"; do
	if [[ -e $p || -e $snap/$p ]]; then
		if ! diff -r -u "$snap/$p" "$p" >"$snap/.diff" 2>&1; then
			echo "stale generated files under $p/ (run: make $targets, then commit):"
			head -n 60 "$snap/.diff"
			status=1
		fi
	fi
done
[[ $status -eq 0 ]] && echo "generated files are current ($targets)"
exit $status
