#!/usr/bin/env bash
# build.sh TOOL... builds developer tools pinned in hack/tools/go.mod into a
# cache outside the clone and prints each binary's path:
#   ${KUBEDRA_TOOLS_CACHE:-~/.cache/kubedra-tools}/<tool>/<version>/<tool>
# The tools module keeps their dependencies out of kubedra's go.sum (as kind
# does in hack/tools). Builds are cached by version and serialised with flock.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=-mod=mod
cache=${KUBEDRA_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubedra-tools}
declare -A pkgs=(
  [kustomize]=sigs.k8s.io/kustomize/kustomize/v5
  [goreleaser]=github.com/goreleaser/goreleaser/v2
)
for tool in "$@"; do
  pkg=${pkgs[$tool]:?unknown tool $tool: know ${!pkgs[*]}}
  mod=$pkg
  version=$(go list -m -f '{{.Version}}' "$mod")
  dir=$cache/$tool/$version
  if [[ ! -x $dir/$tool ]]; then
    mkdir -p "$dir"
    (
      flock 9
      if [[ ! -x $dir/$tool ]]; then
        echo "building $tool $version into $dir (first time only)" >&2
        CGO_ENABLED=0 go build -trimpath -o "$dir/$tool.tmp" "$pkg"
        mv "$dir/$tool.tmp" "$dir/$tool"
      fi
    ) 9>"$dir/.lock"
  fi
  echo "$dir/$tool"
done
