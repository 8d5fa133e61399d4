# authkit's build. Every target walks the list of Go modules (the folders that
# hold a go.mod), so a new module is picked up without editing this file.
# bench/ (peer comparisons) stays out of the list and out of go.work.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

MODULES := $(shell find . -name go.mod -not -path './bench/*' -not -path './.*' -exec dirname {} \; | sed 's|^\./||' | sort)

# Pinned tool versions; `make tools` installs them into .bin (git-ignored).
STATICCHECK_VERSION := v0.8.2
GOVULNCHECK_VERSION := v1.1.4
BIN := $(CURDIR)/.bin
export PATH := $(BIN):$(PATH)

GOTEST_FLAGS ?= -race -count=1
BENCH ?= .
BENCHTIME ?= 1s

.PHONY: all run test lint fmt vet staticcheck vulncheck bench tools tidy-check list

all: lint test

# make run [FRAMEWORK=nethttp|gin|fiber]: the reference server on its embedded
# defaults (development mode, :8080). Environment variables configure it (README).
FRAMEWORK ?= nethttp
run:
	go run ./examples/$(FRAMEWORK)

list: ## print the modules every target walks
	@printf '%s\n' $(MODULES)

test: vet ## go vet and go test -race in every module
	@for m in $(MODULES); do \
		echo "== test $$m"; \
		(cd $$m && go test $(GOTEST_FLAGS) ./...); \
	done

vet:
	@for m in $(MODULES); do (cd $$m && go vet ./...); done

fmt:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

staticcheck:
	@command -v staticcheck >/dev/null || { echo "staticcheck missing: run 'make tools'"; exit 1; }
	@for m in $(MODULES); do (cd $$m && staticcheck ./...); done

# govulncheck needs its database (vuln.go.dev). Where it cannot be reached the
# check says so loudly and is skipped, unless AUTHKIT_REQUIRE_VULNCHECK=1.
vulncheck:
	@command -v govulncheck >/dev/null || { echo "govulncheck missing: run 'make tools'"; exit 1; }
	@if ! curl -fsS -m 10 -o /dev/null https://vuln.go.dev/index/db.json 2>/dev/null; then \
		echo "!! govulncheck SKIPPED: the vulnerability database (vuln.go.dev) is unreachable from this machine"; \
		[ "$${AUTHKIT_REQUIRE_VULNCHECK:-0}" != 1 ] || exit 1; \
	else \
		for m in $(MODULES); do (cd $$m && govulncheck ./...); done; \
	fi

lint: fmt vet staticcheck vulncheck ## gofmt, go vet, staticcheck, govulncheck

bench: ## every module's benchmarks with -benchmem
	@for m in $(MODULES); do \
		echo "== bench $$m"; \
		(cd $$m && go test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) ./...); \
	done

tidy-check: ## fails when go mod tidy would change a go.mod or go.sum
	@for m in $(MODULES); do (cd $$m && go mod tidy); done
	@git diff --exit-code -- '*go.mod' '*go.sum'

tools:
	@mkdir -p $(BIN)
	GOBIN=$(BIN) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	GOBIN=$(BIN) go install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)
