#!/usr/bin/env bash
# make ci's steps, one after the other, each timed: prints each step's time as it ends and, at the end, a table
# of them with the run's total. CI refuses a run past 90 minutes; the budget (docs/contributing/development.md)
# is 35 minutes warm, so a total past CI_WARN_SECONDS (default 2100) prints a warning that the suite grew.
# Usage: hack/ci.sh STEP... (make targets).
set -euo pipefail
cd "$(dirname "$0")/.."

warn=${CI_WARN_SECONDS:-2100}
start=$SECONDS
times=()
for step in "$@"; do
	t0=$SECONDS
	echo "==> make $step"
	rc=0
	make --no-print-directory "$step" || rc=$?
	times+=("$(printf '%-18s %5ds%s' "$step" $((SECONDS - t0)) "$([ $rc -eq 0 ] || echo "  (exit $rc)")")")
	echo "==> make $step: $((SECONDS - t0))s (exit $rc)"
	if [ $rc -ne 0 ]; then
		break
	fi
done
total=$((SECONDS - start))
echo "==> make ci, each step's time:"
printf '    %s\n' "${times[@]}"
printf '    %-18s %5ds (%dm%02ds)\n' total "$total" $((total / 60)) $((total % 60))
if [ "$total" -gt "$warn" ]; then
	echo "==> WARNING: make ci took ${total}s, past the ${warn}s budget of a warm run; the limit is 5400s"
fi
exit "${rc:-0}"
