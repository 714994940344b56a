#!/usr/bin/env bash
# build.sh [--cached] TOOL... builds the developer tools pinned in this
# module (hack/tools/go.mod: kustomize, helm3, helm4) into a cache outside
# the clone and prints each binary's path:
#   ${KUBEDRA_TOOLS_CACHE:-${XDG_CACHE_HOME:-~/.cache}/kubedra-tools}/<tool>/<version>-<deps>/<binary>
# where <deps> is a hash of go.sum, so that a change of any dependency
# builds anew. make tools runs it before any test; tests only look tools up
# (--cached) and never build them.
#
# One module holds every tool, with the dependencies they share at the
# versions kubedra's own module uses (hack/align-modules.sh), so client-go,
# the Helm SDK and kustomize are compiled once, and reused from the Go
# build cache that `make build` and `make test` filled. Both helms are
# named helm, so they take two `go build` invocations; everything else is
# built in the first. Progress (packages compiled, seconds) goes to stderr.
#
# --cached prints the path of tools already built and exits 3 at the first
# that is not, building nothing.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=-mod=mod
cache=${KUBEDRA_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubedra-tools}
declare -A pkgs=(
  [kustomize]=sigs.k8s.io/kustomize/kustomize/v5
  [helm3]=helm.sh/helm/v3/cmd/helm
  [helm4]=helm.sh/helm/v4/cmd/helm
)
declare -A mods=([kustomize]=sigs.k8s.io/kustomize/kustomize/v5 [helm3]=helm.sh/helm/v3 [helm4]=helm.sh/helm/v4)
declare -A names=([kustomize]=kustomize [helm3]=helm [helm4]=helm)
cached=
if [[ ${1:-} == --cached ]]; then cached=1; shift; fi
(($#)) || set -- kustomize helm3 helm4
deps=$(sha256sum go.sum | cut -c1-12)
# Every tool's module version, in one go list.
declare -A modversion version dir
while read -r mod v; do modversion[$mod]=$v; done < <(go list -m -f '{{.Path}} {{.Version}}' "${mods[@]}")
for tool in "$@"; do
  [[ -n ${pkgs[$tool]:-} ]] || { echo "build.sh: unknown tool $tool: know ${!pkgs[*]}" >&2; exit 2; }
  version[$tool]=${modversion[${mods[$tool]}]}
  dir[$tool]=$cache/$tool/${version[$tool]}-$deps
done
# The version stamps helm's Makefile sets (without them `helm version` says
# v3.22 whatever was built); -X of a package a binary lacks is ignored.
stamps=(-X "helm.sh/helm/v3/internal/version.version=${modversion[helm.sh/helm/v3]}"
  -X "helm.sh/helm/v4/internal/version.version=${modversion[helm.sh/helm/v4]}")

missing=()
for tool in "$@"; do
  [[ -x ${dir[$tool]}/${names[$tool]} ]] || missing+=("$tool")
done
if ((${#missing[@]})); then
  [[ -z $cached ]] || exit 3
  mkdir -p "$cache"
  exec 9>"$cache/.lock"
  if ! flock -n 9; then
    echo "[tools] another build holds $cache/.lock; waiting for it" >&2
    flock 9
  fi
  # Invocations: every tool with a binary name of its own in the first,
  # one more for each further tool of a name already taken (helm4).
  declare -A taken
  first=() rest=()
  for tool in "${missing[@]}"; do
    [[ -x ${dir[$tool]}/${names[$tool]} ]] && continue # built while we waited
    if [[ -n ${taken[${names[$tool]}]:-} ]]; then rest+=("$tool"); else first+=("$tool"); taken[${names[$tool]}]=1; fi
  done
  start=$SECONDS
  for group in "${first[*]:-}" "${rest[*]:-}"; do
    [[ -n $group ]] || continue
    read -ra tools <<<"$group"
    tmp=$(mktemp -d "$cache/.build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    list=() targets=()
    for tool in "${tools[@]}"; do list+=("${pkgs[$tool]}"); targets+=("$tool ${version[$tool]}"); done
    echo "[tools] building ${targets[*]} (a cold build takes minutes; later runs reuse the binaries)" >&2
    t0=$SECONDS
    # -v names each package as it is compiled: a line every 200 of them.
    CGO_ENABLED=0 go build -v -trimpath -ldflags "${stamps[*]}" -o "$tmp/" "${list[@]}" 2>&1 | {
      n=0
      while IFS= read -r line; do
        case $line in
        *.go:* | go:* | "#"* | *" error"* | *"error:"*) echo "$line" ;;
        *) ((++n % 200)) || echo "[tools] $n packages compiled ($((SECONDS - t0)) s)" ;;
        esac
      done
    } >&2
    for tool in "${tools[@]}"; do
      mkdir -p "${dir[$tool]}"
      mv "$tmp/${names[$tool]}" "${dir[$tool]}/${names[$tool]}"
    done
    rm -rf "$tmp"
    echo "[tools] built ${targets[*]} in $((SECONDS - t0)) s" >&2
  done
  echo "[tools] done in $((SECONDS - start)) s" >&2
fi
for tool in "$@"; do
  echo "${dir[$tool]}/${names[$tool]}"
done
