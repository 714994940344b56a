#!/usr/bin/env bash
# build.sh TOOL... builds developer tools pinned in hack/tools/go.mod into a
# cache outside the clone and prints each binary's path:
#   ${KUBEDRA_TOOLS_CACHE:-~/.cache/kubedra-tools}/<tool>/<version>/<tool>
# The tools module keeps their dependencies out of kubedra's go.sum (as kind
# does in hack/tools). Builds are cached by version and serialised with flock.
# helm3 and helm4 have a module each (helm3/, helm4/): both binaries are
# named helm and built with exactly the dependencies of their own go.mod, as
# `go install helm.sh/helm/vN/cmd/helm@version` would; they land in
#   <cache>/helm/<version>/helm
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=-mod=mod
cache=${KUBEDRA_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubedra-tools}
declare -A pkgs=(
  [kustomize]=sigs.k8s.io/kustomize/kustomize/v5
  [goreleaser]=github.com/goreleaser/goreleaser/v2
  [helm3]=helm.sh/helm/v3/cmd/helm
  [helm4]=helm.sh/helm/v4/cmd/helm
)
# Tools whose pins live in a module of their own (a folder beside this script)
# and whose binary has another name than the tool.
declare -A moddirs=([helm3]=helm3 [helm4]=helm4)
declare -A mods=([helm3]=helm.sh/helm/v3 [helm4]=helm.sh/helm/v4)
declare -A names=([helm3]=helm [helm4]=helm)
# The version stamp helm's Makefile sets (without it `helm version` says v3.22).
declare -A stamps=([helm3]=helm.sh/helm/v3/internal/version.version [helm4]=helm.sh/helm/v4/internal/version.version)
# --cached prints the path of tools already built and fails (exit 3) for the
# first one that is not, building nothing.
cached=
if [[ ${1:-} == --cached ]]; then cached=1; shift; fi
for tool in "$@"; do
  pkg=${pkgs[$tool]:?unknown tool $tool: know ${!pkgs[*]}}
  mod=${mods[$tool]:-$pkg} moddir=${moddirs[$tool]:-.} name=${names[$tool]:-$tool}
  version=$(cd "$moddir" && go list -m -f '{{.Version}}' "$mod")
  dir=$cache/$name/$version
  if [[ ! -x $dir/$name && -n $cached ]]; then
    exit 3
  fi
  if [[ ! -x $dir/$name ]]; then
    mkdir -p "$dir"
    (
      flock 9
      if [[ ! -x $dir/$name ]]; then
        echo "building $tool $version into $dir (first time only)" >&2
        start=$SECONDS
        (cd "$moddir" && CGO_ENABLED=0 go build -trimpath ${stamps[$tool]:+-ldflags "-X ${stamps[$tool]}=$version"} -o "$dir/$name.tmp" "$pkg")
        mv "$dir/$name.tmp" "$dir/$name"
        echo "built $tool $version in $((SECONDS - start)) s" >&2
      fi
    ) 9>"$dir/.lock"
  fi
  echo "$dir/$name"
done
