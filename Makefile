# kubedra developer targets. Each is one command where possible; see README.md.
SHELL := /usr/bin/env bash
GO ?= go
export GOTOOLCHAIN ?= local
BIN := bin/kubedra
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE ?= $(shell git log -1 --format=%cI 2>/dev/null)
PKG := github.com/kubedra/kubedra/cmd/kubedra/app
LDFLAGS := -s -w -X $(PKG).version=$(VERSION) -X $(PKG).commit=$(COMMIT) -X $(PKG).date=$(DATE)
K8S_VERSION ?= 1.37.2

.PHONY: all build run test e2e ci bench bench-e2e fuzz fuzz-short dist-check lint verify update-golden docs snapshot clean

all: build

build: ## build bin/kubedra with the version stamped in
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/kubedra

run: build ## run kubedra on the embedded example
	./$(BIN) scan --example && ./$(BIN) migrate --example

test: ## unit, golden and CLI script tests (reads ../shared/corpus when present)
	$(GO) test ./...

e2e: build ## tests against a real control plane built from Go modules (first build 15-40 min, cached)
	cd test/e2e && { test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }; } && $(GO) vet ./... && $(GO) mod tidy -diff
	cd test/e2e && K8S_VERSION=$(K8S_VERSION) $(GO) run ./cmd/lcp build >/dev/null
	cd test/e2e && K8S_VERSION=$(K8S_VERSION) KUBEDRA_BIN=$(CURDIR)/$(BIN) KUBEDRA_BROWSER=$${KUBEDRA_BROWSER:-1} $(GO) test -count=1 -timeout 30m -parallel 4 ./...

ci: verify test fuzz-short dist-check e2e ## what .ci/run runs

bench: ## benchmarks with ratios against an in-run baseline
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./bench/...

bench-e2e: build ## audit at scale (2,000 nodes, 50,000 pods) against kubectl on a real control plane (~15 min seeding)
	cd test/e2e && KUBEDRA_SCALE=1 KUBEDRA_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -run TestAuditScale -v -timeout 60m ./audit/

# Fuzz targets as package:Target; each reaches 1,000+ runs a second.
FUZZ_TARGETS = ./inventory/files:FuzzRead ./inventory/detect:FuzzDetect ./rewrite:FuzzRewrite ./rules:FuzzSelectors
FUZZTIME ?= 30s

fuzz: ## run every fuzz target for FUZZTIME (30s) in turn (crashers land in the package's testdata/fuzz, which go test replays)
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg)"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -parallel 1; \
	done

fuzz-short: ## the brief fuzz run CI does: each target for 6s (about a minute with the builds)
	@$(MAKE) --no-print-directory fuzz FUZZTIME=6s

dist-check: build ## goreleaser check, the GitHub Action's steps, kustomize exec function, helm 3/4 post-renderer, Argo CD plugin and Flux patches (tools cached in ~/.cache/kubedra-tools)
	KUBEDRA_TOOLS=1 KUBEDRA_TEST_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -run 'TestGoreleaser|TestKrew|TestPreCommit|TestAction|TestKustomize|TestHelmPostRenderer|TestArgoCDPlugin|TestFluxPatches' .

lint: ## gofmt + go vet (golangci-lint when installed)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	@if command -v golangci-lint >/dev/null; then golangci-lint run ./...; fi

verify: lint ## lint + go mod tidy check
	$(GO) mod tidy -diff

update-golden: ## rewrite golden files; review the diff before committing
	KUBEDRA_UPDATE_GOLDEN=1 $(GO) test ./...

docs: ## regenerate docs/cli (one page per command) from the cobra tree; TestCLIDocs fails when it is stale
	KUBEDRA_UPDATE_GOLDEN=1 $(GO) test ./cmd/kubedra/app -run '^TestCLIDocs$$' -count=1

snapshot: ## goreleaser snapshot build (needs goreleaser)
	goreleaser release --snapshot --clean

clean:
	rm -rf bin dist
