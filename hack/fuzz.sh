#!/usr/bin/env bash
# fuzz.sh TIME MINIMIZE PKG:TARGET... runs each fuzz target for TIME with
# one worker and prints what it ran: executions, seconds and executions a
# second, counted inside the target (internal/fuzzstat: go test's own
# figure stops at the seed count while a worker finds nothing new).
# MINIMIZE is -fuzzminimizetime: Go minimizes every input that finds new
# coverage, for up to 60 s each by default, and runs nothing else meanwhile
# (a short run then spends its time minimizing one input); 0 turns it off
# (make fuzz-short), make fuzz bounds it. Crashers land in the package's
# testdata/fuzz, which go test replays.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
time=${1:?usage: fuzz.sh TIME MINIMIZE PKG:TARGET...} minimize=${2:?} && shift 2
summary=()
for t in "$@"; do
  pkg=${t%%:*} name=${t##*:}
  stats=$(mktemp)
  echo "fuzz $name ($pkg) for $time" >&2
  KUBEDRA_FUZZ_STATS=$stats ${GO:-go} test "$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "$time" \
    -fuzzminimizetime "$minimize" -parallel 1 -timeout 20m
  # Each worker appends "pid count seconds cpu" every second: the last line
  # of each pid is its total. exec/s is over the wall time; "a CPU second"
  # over the workers' CPU time, the rate on a core of their own (the two
  # differ when the machine is shared).
  line=$(awk '{n[$1]=$2; c[$1]=$4; if ($3>s) s=$3} END {t=0; u=0; for (p in n) {t+=n[p]; u+=c[p]}; if (s<1) s=1; if (u<0.01) u=0.01; printf "%d execs in %d s: %d exec/s, %d a CPU second (%.1f CPU s)", t, s, t/s, t/u, u}' "$stats")
  rm -f "$stats"
  echo "fuzz $name: $line" >&2
  summary+=("$(printf '%-14s %s' "$name" "$line")")
done
printf 'fuzz summary:\n' >&2
printf '  %s\n' "${summary[@]}" >&2
