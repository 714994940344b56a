#!/usr/bin/env bash
# cold-ci.sh [--keep] [--warm DIR] [--make TARGET] runs .ci/run as CI does
# on a new machine:
# in a fresh clone of this repository's HEAD, with ../shared beside it, an
# empty Go module cache (GOMODCACHE), an empty Go build cache (GOCACHE), an
# empty XDG_CACHE_HOME and a new HOME, so nothing an earlier run built
# (~/.cache/kubedra-tools, ~/.cache/kubedra-lcp, compiled packages, fuzz
# corpora) is reused. It prints the wall time of each step (hack/steps.sh)
# and of the whole run, and leaves the log in the work folder.
#
#   --warm DIR  reuse DIR's caches from an earlier cold run: the warm figure
#               (a second run on the same machine, caches kept, a new clone)
#   --keep      keep the work folder (caches included) for a --warm run
#   --make T    run `make T` instead of .ci/run (--make run: the README's
#               first command on a new machine)
#
# Machine packages (make, git, chromium...) are what .ci/run installs with
# apt-get when absent; they are not removed here, so a machine without
# chromium adds its install (about a minute) to the first run.
set -Eeuo pipefail
# The whole script is one function, read before it runs: editing this file
# while a run is under way does not change that run.
main() {
local here; here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
keep= warm= target=
while (($#)); do
  case $1 in
  --keep) keep=1 ;;
  --warm) warm=${2:?--warm DIR}; shift ;;
  --make) target=${2:?--make TARGET}; shift ;;
  *) echo "usage: cold-ci.sh [--keep] [--warm DIR] [--make TARGET]" >&2; exit 2 ;;
  esac
  shift
done
shared=$here/../shared
[[ -d $shared ]] || { echo "cold-ci.sh: no ../shared beside $here (CI has one)" >&2; exit 2; }
if [[ -n $warm ]]; then
  work=$warm
  rm -rf "$work/main"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/kubedra-cold-ci.XXXXXX")
fi
mkdir -p "$work"/{home,gomodcache,gocache,gopath,tmp}
cleanup() {
  if [[ -z $keep && -z $warm ]]; then
    chmod -R u+w "$work" 2>/dev/null || true # the module cache is read-only
    rm -rf "$work"
  fi
}
trap cleanup EXIT
log=$work/ci.log
start=$SECONDS
git clone -q --no-hardlinks "$here" "$work/main"
ln -sfn "$shared" "$work/shared"
echo "cold-ci: $(cd "$work/main" && git log -1 --format='%h %s' | cut -c1-72)" >&2
echo "cold-ci: work folder $work (log: $log)" >&2
rc=0
(
  cd "$work/main"
  env HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache" GOMODCACHE="$work/gomodcache" \
    GOCACHE="$work/gocache" GOPATH="$work/gopath" TMPDIR="$work/tmp" CI=true \
    bash -c 'if [[ -n $1 ]]; then export PATH=$PATH:/usr/local/go/bin GOTOOLCHAIN=local; exec make "$1"; fi; exec bash .ci/run' _ "$target" </dev/null
) >"$log" 2>&1 || rc=$?
# The step table hack/steps.sh printed, then the whole run.
sed -n '/^=== step times/,$p' "$log" >&2
what=.ci/run
[[ -z $target ]] || what="make $target"
printf 'cold-ci: %s exit %d, %d s wall in all (clone included)\n' "$what" "$rc" $((SECONDS - start)) >&2
if ((rc)); then
  echo "cold-ci: last lines of the log:" >&2
  tail -40 "$log" >&2
  keep=1
fi
exit "$rc"
}
main "$@"
