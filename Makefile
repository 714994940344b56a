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

.PHONY: all build run test tools lcp e2e ci bench bench-e2e fuzz fuzz-short dist-check lint verify update-golden docs snapshot clean

# Every go test has a timeout fit for its work (well above what it takes
# here, far below go test's 10-minute default where that would not do).

all: build

build: ## build bin/kubedra with the version stamped in
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/kubedra

run: build ## run kubedra on the embedded example
	./$(BIN) scan --example && ./$(BIN) migrate --example

test: build ## unit, golden and CLI script tests (reads ../shared/corpus when present)
	KUBEDRA_TEST_BIN=$(CURDIR)/$(BIN) $(GO) test -timeout 20m ./...

tools: ## build kustomize, helm 3 and helm 4 from hack/tools into ~/.cache/kubedra-tools (cold: minutes; cached by version)
	bash hack/tools/build.sh kustomize helm3 helm4 >/dev/null

lcp: ## build the control plane for e2e from Go modules into ~/.cache/kubedra-lcp (cold: 10-40 min; cached)
	cd test/e2e && K8S_VERSION=$(K8S_VERSION) $(GO) run ./cmd/lcp build >/dev/null

e2e: build tools lcp ## tests against a real control plane built from Go modules
	cd test/e2e && { test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }; } && $(GO) vet ./... && $(GO) mod tidy -diff
	cd test/e2e && K8S_VERSION=$(K8S_VERSION) KUBEDRA_BIN=$(CURDIR)/$(BIN) KUBEDRA_TOOLS=1 KUBEDRA_BROWSER=$${KUBEDRA_BROWSER:-1} $(GO) test -count=1 -timeout 30m -parallel 4 ./...

# What .ci/run runs, one step after another with the wall time of each
# (hack/steps.sh); the tools and the control plane are built by their own
# steps, before the tests that use them.
CI_STEPS ?= verify test fuzz-short tools dist-check lcp e2e
ci: ## what .ci/run runs: verify, test, a short fuzz run, the tools, dist-check, the control plane and e2e
	@bash hack/steps.sh $(CI_STEPS)

bench: build ## benchmarks with ratios against an in-run baseline
	KUBEDRA_TEST_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 60m ./bench/...

bench-e2e: build ## audit at scale (2,000 nodes, 50,000 pods) against kubectl on a real control plane (~15 min seeding)
	cd test/e2e && KUBEDRA_SCALE=1 KUBEDRA_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -run TestAuditScale -v -timeout 60m ./audit/

# Fuzz targets as package:Target (exec/s per target: docs/development.md).
FUZZ_TARGETS = ./inventory/files/fuzz:FuzzRead ./inventory/detect/fuzz:FuzzDetect ./rewrite/fuzz:FuzzRewrite ./rules:FuzzSelectors ./rules:FuzzResolve
FUZZTIME ?= 30s
# Time Go may spend minimizing each input that finds new coverage (its
# default is 60 s, during which nothing else runs); fuzz-short turns it off.
FUZZMINIMIZE ?= 1000x

fuzz: ## run every fuzz target for FUZZTIME (30s) in turn and print exec/s (crashers land in the package's testdata/fuzz, which go test replays)
	GO=$(GO) bash hack/fuzz.sh $(FUZZTIME) $(FUZZMINIMIZE) $(FUZZ_TARGETS)

fuzz-short: ## the brief fuzz run CI does: each target for 5s, no minimizing
	@$(MAKE) --no-print-directory fuzz FUZZTIME=5s FUZZMINIMIZE=0

dist-check: build tools ## the goreleaser config check, the GitHub Action's steps, kustomize exec function, helm 3/4 post-renderer, Argo CD plugin and Flux patches
	cd hack/tools && $(GO) test -count=1 -timeout 5m ./...
	KUBEDRA_TOOLS=1 KUBEDRA_TEST_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 10m -run 'TestGoreleaser|TestKrew|TestPreCommit|TestAction|TestKustomize|TestHelmPostRenderer|TestArgoCDPlugin|TestFluxPatches|TestModulesAligned' .

lint: ## gofmt + go vet (golangci-lint when installed)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	@if command -v golangci-lint >/dev/null; then golangci-lint run ./...; fi

verify: lint ## lint + go mod tidy check (kubedra's module and the tools module)
	$(GO) mod tidy -diff
	cd hack/tools && { test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }; } && $(GO) vet ./... && $(GO) mod tidy -diff

update-golden: ## rewrite golden files; review the diff before committing
	KUBEDRA_UPDATE_GOLDEN=1 $(GO) test -timeout 20m ./...

docs: ## regenerate docs/cli (one page per command) from the cobra tree; TestCLIDocs fails when it is stale
	KUBEDRA_UPDATE_GOLDEN=1 $(GO) test ./cmd/kubedra/app -run '^TestCLIDocs$$' -count=1 -timeout 5m

snapshot: ## goreleaser snapshot build (needs goreleaser)
	goreleaser release --snapshot --clean

clean:
	rm -rf bin dist
