#!/usr/bin/env bash
# Fails when the committed generated files are stale: it regenerates them in a copy of the working tree and
# compares the two. The copy is a git worktree of HEAD with the tree's uncommitted changes and untracked files,
# so it checks what is in the working tree, and it never writes the tree itself: make ci runs it beside the
# e2e, which reads config/ and bundle/ meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

paths=(api config docs/reference bundle catalog)
targets=${VERIFY_TARGETS:-generate manifests docs bundle catalog}

# What it runs only generates (go run, controller-gen, operator-sdk, opm): the compiler and they with the
# collector off below 3 GiB, as hack/tools/install.sh's builds.
export GOGC=off GOMEMLIMIT=3GiB

work=$(mktemp -d)
copy=$work/tree
trap 'git -C "$root" worktree remove --force "$copy" 2>/dev/null || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$copy" HEAD
if ! git diff --quiet HEAD; then
	git diff HEAD --binary | git -C "$copy" apply --whitespace=nowarn
fi
git ls-files -z --others --exclude-standard | (cd "$root" && xargs -0 -r cp --parents -t "$copy")

# The copy's own bin/ and bundle/, whatever the caller's environment names.
env -u LOCALBIN -u ENVTEST_ASSETS -u BUNDLE_DIR -u CLUSTER_DIR make -C "$copy" --no-print-directory $targets >"$work/make.log" 2>&1 || { cat "$work/make.log"; exit 1; }

status=0
for p in "${paths[@]}"; do
	if [[ -e $p || -e $copy/$p ]]; then
		if ! diff -r -u "$p" "$copy/$p" >"$work/diff" 2>&1; then
			echo "stale generated files under $p/ (run: make $targets, then commit):"
			head -n 60 "$work/diff"
			status=1
		fi
	fi
done
[[ $status -eq 0 ]] && echo "generated files are current ($targets)"
exit $status
