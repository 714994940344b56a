#!/usr/bin/env bash
# align-modules.sh raises, in kubedra's module (the repository root) and in
# the modules that build with it (hack/tools: kustomize, helm 3 and 4;
# test/e2e), every dependency that two of them share to the highest version
# any of them selects, then tidies each. Modules that share versions share
# compiled packages through the Go build cache: the tools and the e2e tests
# then reuse what `go build ./cmd/kubedra` and `go test ./...` compiled
# (client-go, the Helm SDK, kustomize) instead of compiling them again.
# TestModulesAligned (dist_test.go) fails when they drift apart. Versions
# are only ever raised. (test/e2e/lcp/* pins what k8s.io/kubernetes pins
# and is left alone.)
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=-mod=mod
dirs=(. hack/tools test/e2e)
# The modules whose packages a module's builds and tests compile (not the
# whole module graph: raising a module no package comes from shares nothing).
pkgs() { case $1 in hack/tools) echo tool ./... ;; *) echo ./... ;; esac; }
list() {
  (cd "$1" && go list -deps -test -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' $(pkgs "$1") | sort -u)
}
# higher A B prints the higher of two module versions as Go orders them:
# by release, a pre-release (v1.2.3-0.2026...-abc, a pseudo-version on
# v1.2.2) below its release, pseudo-versions by their timestamps.
higher() {
  local a=${1%%[-+]*} b=${2%%[-+]*}
  if [[ $a != "$b" ]]; then
    [[ $(printf '%s\n%s\n' "$a" "$b" | sort -V | tail -1) == "$a" ]] && echo "$1" || echo "$2"
  elif [[ $1 == "$a" || $2 == "$b" ]]; then
    [[ $1 == "$a" ]] && echo "$1" || echo "$2"
  else
    printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1
  fi
}
declare -A max
for dir in "${dirs[@]}"; do
  while read -r path version; do
    max[$path]=$(higher "${max[$path]:-$version}" "$version")
  done < <(list "$dir")
done
for dir in "${dirs[@]}"; do
  ups=()
  while read -r path version; do
    [[ ${max[$path]} == "$version" ]] || ups+=("$path@${max[$path]}")
  done < <(list "$dir")
  if ((${#ups[@]})); then
    echo "$dir: raising ${#ups[@]} modules: ${ups[*]}" >&2
    (cd "$dir" && go get "${ups[@]}" 2>/dev/null)
  fi
  (cd "$dir" && go mod tidy)
done
