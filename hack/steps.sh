#!/usr/bin/env bash
# steps.sh STEP... runs `make STEP` for each step in turn, stops at the
# first that fails, and prints the wall time of each step (and the total)
# to stderr: what make ci (and so .ci/run) runs.
set -Euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
times=() total=$SECONDS rc=0
for step in "$@"; do
  echo "=== make $step" >&2
  t0=$SECONDS
  ${MAKE:-make} --no-print-directory "$step"
  rc=$?
  times+=("$(printf '%-12s %5d s%s' "$step" $((SECONDS - t0)) "$( ((rc)) && echo "  FAILED (exit $rc)")")")
  ((rc == 0)) || break
done
{
  echo "=== step times (wall)"
  printf '  %s\n' "${times[@]}"
  printf '  %-12s %5d s\n' total $((SECONDS - total))
} >&2
exit "$rc"
