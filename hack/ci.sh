#!/usr/bin/env bash
# make ci's steps, each timed: prints each step's time as it ends and, at the end, a table of them with the run's
# total. CI refuses a run past 90 minutes; the budget (docs/contributing/development.md) is 35 minutes warm, so a
# total past CI_WARN_SECONDS (default 2100) prints a warning that the suite grew.
# Usage: hack/ci.sh STEP... (make targets). A step A+B runs A with its output shown as it comes and, beside it,
# B with its output kept and shown when B ends: for steps that share nothing (a port, a directory, an image
# store, a cluster) and spend most of their time waiting, such as the end-to-end tests on the cluster and the
# fault injection on envtest's API servers. B starts when A creates the file CI_START_BESIDE names (A's own
# choice of moment: the e2e creates it once its quick start is done, so that its setup and the quick start's
# builds have both cores), or when A ends, whichever comes first.
set -euo pipefail
cd "$(dirname "$0")/.."

warn=${CI_WARN_SECONDS:-2100}
start=$SECONDS
times=()
logs=$(mktemp -d "${TMPDIR:-/tmp}/operator101-ci.XXXXXX")
pids=()
trap 'kill ${pids[@]+"${pids[@]}"} 2>/dev/null || true; rm -rf "$logs"' EXIT

# record STEP SECONDS RC: one row of the table, and the line that says the step ended.
record() {
	times+=("$(printf '%-24s %5ds%s' "$1" "$2" "$([ "$3" -eq 0 ] || echo "  (exit $3)")")")
	echo "==> make $1: $2s (exit $3)"
}

rc=0
for step in "$@"; do
	IFS=+ read -r -a group <<<"$step"
	t0=$SECONDS
	pids=()
	gate=$logs/start-beside-${group[0]}
	for side in "${group[@]:1}"; do
		echo "==> make $side (beside ${group[0]}, once it says so; its output when it ends: $logs/$side.log)"
		(
			while [ ! -e "$gate" ]; do sleep 2; done
			echo "==> make $side: starting beside ${group[0]}, $((SECONDS - t0))s into it"
			s0=$SECONDS
			src=0
			make --no-print-directory "$side" >"$logs/$side.log" 2>&1 || src=$?
			echo "$src $((SECONDS - s0))" >"$logs/$side.rc"
		) &
		pids+=($!)
	done
	echo "==> make ${group[0]}"
	src=0
	CI_START_BESIDE=$gate make --no-print-directory "${group[0]}" || src=$?
	touch "$gate"
	record "${group[0]}" $((SECONDS - t0)) "$src"
	[ "$src" -eq 0 ] || rc=$src
	for i in "${!pids[@]}"; do
		side=${group[$((i + 1))]}
		wait "${pids[$i]}" || true
		pids[i]=
		read -r src secs <"$logs/$side.rc" || { src=1 secs=$((SECONDS - t0)); }
		echo "==> make $side: its output"
		cat "$logs/$side.log"
		record "$side" "$secs" "$src"
		[ "$src" -eq 0 ] || rc=$src
	done
	if [ $rc -ne 0 ]; then
		break
	fi
	[ ${#group[@]} -eq 1 ] || record "$step" $((SECONDS - t0)) 0 >/dev/null
done
total=$((SECONDS - start))
echo "==> make ci, each step's time:"
printf '    %s\n' "${times[@]}"
printf '    %-24s %5ds (%dm%02ds)\n' total "$total" $((total / 60)) $((total % 60))
if [ "$total" -gt "$warn" ]; then
	echo "==> WARNING: make ci took ${total}s, past the ${warn}s budget of a warm run; the limit is 5400s"
fi
exit "$rc"
