# authkit's build. Every target walks the list of Go modules (the folders that
# hold a go.mod), so a new module is picked up without editing this file.
# bench/ (peer comparisons) stays out of the list and out of go.work.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

MODULES := $(shell find . -name go.mod -not -path './bench/*' -not -path './.*' -not -path '*/testdata/*' -exec dirname {} \; | sed 's|^\./||' | sort)
# Modules of tools, never published, outside go.work: linted with GOWORK=off.
TOOL_MODULES := bench .ci/release .ci/doccheck social/testdata/oidcprovider

# Pinned tool versions; `make tools` installs them into .bin (git-ignored).
STATICCHECK_VERSION := v0.8.2
GOVULNCHECK_VERSION := v1.1.4
# benchstat: a golang.org/x/perf commit whose go.mod says go 1.25.0.
BENCHSTAT_VERSION := v0.0.0-20260709024250-82a0b07e230d
BIN := $(CURDIR)/.bin
export PATH := $(BIN):$(PATH)

# make test: every module but e2e, the end-to-end module (make test-e2e).
E2E_MODULE := e2e
TEST_MODULES := $(filter-out $(E2E_MODULE),$(MODULES))
# make test-e2e runs two go tests side by side (timed on the 2-core CI
# machine, each package alone, CPU seconds user+sys; -race multiplies them):
# - without -race, E2E_PLAIN: the packages that drive example servers as
#   processes (attack browsertest scaleout servers: the servers are built
#   without the detector, the test process holds only an HTTP client or a
#   browser driver), and those that re-run flow suites for what their
#   assertions check, not for data races: matrix (the whole suite on every
#   store: the detector multiplies its CPU by about seven), openapi (the
#   drift test's validating proxy), passkeysflow (9 s against 38 s) and
#   socialflow (22 s against 37 s). Every line they run ran under -race in
#   make test: the flow suite, its Races topic among them, on memory on each
#   framework, each store's conformance suite with its concurrent cases,
#   the passkey and social flow suites;
# - with -race, every other package (mount, one added later), and matrix
#   once more: built with -race it runs the suite's Races topic only (its
#   TestMain), so authkit racing itself on the real stores stays under the
#   detector.
# Evaluated when used.
E2E_PROCESS := attack browsertest scaleout servers
E2E_PLAIN := $(E2E_PROCESS) matrix openapi passkeysflow socialflow
empty :=
space := $(empty) $(empty)
E2E_PLAIN_PKGS := $(foreach p,$(E2E_PLAIN),./$(p)/...)
E2E_RACE_PKGS = $(shell cd $(E2E_MODULE) && go list ./... | grep -Ev '/$(E2E_MODULE)/($(subst $(space),|,$(filter-out matrix,$(E2E_PLAIN))))(/|$$)')

# -timeout: the store matrix (make test-e2e) runs the whole flow suite on
# every store; on a loaded machine it can pass go test's default 10 minutes.
# -vet=off: make lint runs go vet, every analyzer, once; go test would run
# a subset of them again on every package it tests.
GOTEST_FLAGS ?= -race -count=1 -timeout 25m -vet=off
BENCH ?= .
BENCHTIME ?= 1s
FUZZTIME ?= 20s

.PHONY: all run test test-e2e test-standalone release-check proxy lint fmt vet staticcheck doccheck vulncheck bench bench-timing bench-compare bench-scale fuzz tools tidy-check list

all: lint test

# make run [FRAMEWORK=nethttp|gin|fiber]: the reference server on its embedded
# defaults (development mode, :8080). Environment variables configure it (README).
FRAMEWORK ?= nethttp
run:
	go run ./examples/$(FRAMEWORK)

list: ## print the modules every target walks
	@printf '%s\n' $(MODULES)

# gotest DIR PACKAGES...: go test $(GOTEST_FLAGS) on the packages, run
# from DIR; then one line naming what was skipped for a missing service or
# program (storetest.SkipMissing writes each skip to $AUTHKIT_SKIPPED).
# Tests find PostgreSQL, MariaDB and Redis through AUTHKIT_TEST_POSTGRES,
# AUTHKIT_TEST_MYSQL and AUTHKIT_TEST_REDIS, or at their usual local
# addresses when those are unset (storetest.ServiceURL).
# gotest DIR PACKAGES [PACKAGES2]: PACKAGES2, if given, run at the same
# time in a second go test, without -race.
define gotest
	@skipped=$$(mktemp); trap 'rm -f "$$skipped"' EXIT; \
	status=0; other=; \
	if [ -n "$(strip $(3))" ]; then \
		(cd $(1) && AUTHKIT_SKIPPED="$$skipped" go test $(filter-out -race,$(GOTEST_FLAGS)) $(3)) & other=$$!; \
	fi; \
	(cd $(1) && AUTHKIT_SKIPPED="$$skipped" go test $(GOTEST_FLAGS) $(2)) || status=$$?; \
	if [ -n "$$other" ]; then wait $$other || status=$$?; fi; \
	if [ -s "$$skipped" ]; then \
		echo "!! skipped for a missing service: $$(cut -f1 "$$skipped" | sort | uniq -c | awk '{printf "%s%s (%d test%s)", sep, $$2, $$1, ($$1 == 1 ? "" : "s"); sep=", "}'); set the AUTHKIT_TEST_* variables or start the services (README, Tests)"; \
	else \
		echo "== nothing skipped for a missing service"; \
	fi; \
	exit $$status
endef

# make test: what a change needs to be trusted, in one go test run over
# every module but e2e (packages of all modules share the machine's cores):
# the unit tests with the race detector, the flow suite on memory on each
# framework, every store's conformance suite on the services that answer.
# No browser. go vet runs in make lint.
# -p 4: four test binaries at a time, not one per core. Many of these
# packages spend their time waiting on PostgreSQL, MariaDB, Redis or a
# server of their own; on the 2-core machine, with a warm build cache, the
# run took 145 s with -p 4 against 179 s with go test's default (-p 2).
test: GOTEST_FLAGS += -p 4
test: ## go test -race in every module but e2e; names what it skipped
	$(call gotest,.,$(addprefix ./,$(addsuffix /...,$(TEST_MODULES))))

# make test-e2e: the e2e module (e2e/README.md): the example servers as
# processes, the pages in headless Chromium, the flow suite over every store
# (matrix), the OpenAPI drift test, scale-out, backend faults, passkeys on
# every framework, the pages mounted under a prefix. Two go test runs side
# by side: E2E_PLAIN without -race, the rest and matrix's Races topic with
# it (see E2E_PLAIN). About eight minutes on the slower of the 2-core
# machines (473 s, warm build cache), CPU-bound: browsertest (358 s there)
# beside the other packages without -race. Its flows wait for the next
# 30-second TOTP step (the server refuses every code while its step is the
# one last used), so its six flows run at once. The example servers hash
# at bcrypt's least cost (servertest.Start).
test-e2e: ## the end-to-end tests (browsers, the store matrix, OpenAPI drift)
	$(call gotest,$(E2E_MODULE),$(E2E_RACE_PKGS),$(E2E_PLAIN_PKGS))

# vet and staticcheck: one process over every go.work module's packages
# (go.work resolves them from the root), which loads the dependencies they
# share once instead of once per module; the tool modules, outside go.work,
# one by one with GOWORK=off.
WORK_PKGS := $(addprefix ./,$(addsuffix /...,$(MODULES)))
vet:
	@go vet $(WORK_PKGS)
	@for m in $(TOOL_MODULES); do (cd $$m && GOWORK=off go vet ./...); done

fmt:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

staticcheck:
	@command -v staticcheck >/dev/null || { echo "staticcheck missing: run 'make tools'"; exit 1; }
	@staticcheck $(WORK_PKGS)
	@for m in $(TOOL_MODULES); do (cd $$m && GOWORK=off staticcheck ./...); done

# govulncheck needs its database (vuln.go.dev). Where it cannot be reached the
# check says so loudly and is skipped, unless AUTHKIT_REQUIRE_VULNCHECK=1.
VULNDB_REACHABLE := curl -fsS -m 10 -o /dev/null https://vuln.go.dev/index/db.json 2>/dev/null
vulncheck:
	@if ! $(VULNDB_REACHABLE); then \
		echo "!! govulncheck SKIPPED: the vulnerability database (vuln.go.dev) is unreachable from this machine"; \
		[ "$${AUTHKIT_REQUIRE_VULNCHECK:-0}" != 1 ] || exit 1; \
	else \
		command -v govulncheck >/dev/null || { echo "govulncheck missing: run 'make tools'"; exit 1; }; \
		for m in $(MODULES); do (cd $$m && govulncheck ./...); done; \
	fi

# Every exported name and package has a doc comment, and no Go comment or
# Markdown file refers to a file that is not in the repository
# (.ci/doccheck, a tool module: its own test runs first).
doccheck:
	@cd .ci/doccheck && GOWORK=off go test -count=1 ./...
	@GOWORK=off go run .ci/doccheck/main.go $(MODULES)

lint: fmt vet staticcheck doccheck vulncheck ## gofmt, go vet, staticcheck, doc comments, govulncheck

bench: ## every module's benchmarks with -benchmem
	@for m in $(MODULES); do \
		echo "== bench $$m"; \
		(cd $$m && go test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) ./...); \
	done

# make fuzz [FUZZTIME=20s]: every fuzz target of every module, one after the
# other (go test -fuzz takes one target per run), FUZZTIME each. Targets are
# found by grepping the test files for "func Fuzz", so a new one is picked up
# without editing this file. The seed corpus of each target is its f.Add
# calls plus testdata/fuzz/<Target>/ in its package; make test runs those
# seeds as ordinary tests. Inputs the fuzzer finds interesting stay in the Go
# cache; a failing one is written to testdata/fuzz/<Target>/: commit it with
# the fix so it stays a regression test. Every target runs; the failed ones
# are listed at the end.
fuzz:
	@targets=$$(grep -rHo --include='*_test.go' --exclude-dir=testdata '^func Fuzz[A-Za-z0-9_]*(' $(MODULES) \
		| sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($$|\1:\2|' | sort -u); \
	[ -n "$$targets" ] || { echo "no fuzz targets found"; exit 1; }; \
	failed=""; \
	for t in $$targets; do \
		dir=$${t%%:*}; name=$${t##*:}; \
		echo "== fuzz $$dir $$name ($(FUZZTIME))"; \
		(cd $$dir && go test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) .) || failed="$$failed $$dir:$$name"; \
	done; \
	if [ -n "$$failed" ]; then echo "!! fuzz failures:$$failed"; exit 1; fi

# make bench-timing: only the account-enumeration timing benchmarks
# (e2e/timing): login with an unknown email vs a wrong password,
# forgot-password for an unknown vs a known email, 100 requests each over
# loopback HTTP with the production hasher (bcrypt cost 12), rate limits and
# the lock-out off. About 400 cost-12 hashes: one to two minutes. make bench
# runs them too, as part of the e2e module. Figures: SECURITY.md.
bench-timing:
	cd e2e && go test -run '^$$' -bench 'Timing' -benchtime 1x -count 1 ./timing

# make bench-compare [BENCH_COUNT=10]: authkit against its peers (the bench/
# module, outside go.work, run with GOWORK=off so no peer reaches authkit's
# go.mod files), every benchmark -count $(BENCH_COUNT), read with benchstat
# (pinned, installed into .bin). bench/compare.sh does the work: the Redis
# runs use AUTHKIT_TEST_REDIS (default: the local server) and skip, saying
# so, when it is unreachable; the load runs need wrk, installed with apt-get
# when missing and possible, else skipped loudly. Results, benchstat's
# summary and the tables of BENCHMARKS.md go to $(BENCH_OUT). About 12
# minutes on 2 cores.
BENCH_COUNT ?= 10
BENCH_OUT ?= $(CURDIR)/bench/results
bench-compare: ## peer comparisons with benchstat (bench/, GOWORK=off)
	@command -v benchstat >/dev/null || { mkdir -p $(BIN) && GOBIN=$(BIN) go install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION); }
	COUNT=$(BENCH_COUNT) OUT=$(BENCH_OUT) bench/compare.sh

# make bench-scale [SCALE_COUNT=3 SCALE_BENCHTIME=1000x]: BenchmarkScale
# (bench/scale_test.go) on AUTHKIT_TEST_POSTGRES, not part of bench-compare:
# login, 2FA verify and RequireUser at 1,000 and at 1,000,000 users in one
# run (every iteration one call at each size: the 1k-ns/op and 1M-ns/op
# columns), every statement of those flows under EXPLAIN ANALYZE (a
# sequential scan at 1M fails the set-up), and the limit store's cleanup of
# a million expired keys. It loads the million users and keys once (INSERT
# ... SELECT generate_series, about 20 s) into tables of a prefix of their
# own, dropped at the end. About 3 minutes on 2 cores. Output:
# bench/results/scale.txt, the plans and the cleanup times in
# bench/results/scale-plans.txt; the last run's figures: BENCHMARKS.md, "Scale".
SCALE_COUNT ?= 3
SCALE_BENCHTIME ?= 1000x
bench-scale: ## 1k vs 1M users on PostgreSQL: flow latency, plans, limit cleanup (needs AUTHKIT_TEST_POSTGRES)
	@test -n "$${AUTHKIT_TEST_POSTGRES:-}" || { echo "bench-scale needs AUTHKIT_TEST_POSTGRES (a PostgreSQL URL)"; exit 1; }
	mkdir -p bench/results
	cd bench && GOWORK=off go test -run '^$$' -bench '^BenchmarkScale$$' -benchmem -benchtime $(SCALE_BENCHTIME) -count $(SCALE_COUNT) -timeout 30m . | tee results/scale.txt

# make bench-peers [PEERS_ROUNDS=5 PEERS_DURATION=5s]: authkit beside
# better-auth (TypeScript, Node.js), whole servers on the same machine,
# PostgreSQL and Redis, in one run: the session check with sessions in
# PostgreSQL and in Redis, login (scrypt at better-auth's parameters on both),
# a login flood past the limit (429s/s), RSS after 100,000 sessions. The Node
# side is installed from bench/peers/betterauth/package-lock.json (npm ci);
# cmd/peerbench starts both servers (cmd/peerserver, peers/betterauth/server.mjs)
# on loopback ports, alternates them round by round under wrk, and prints the
# table; results in bench/results/peers/. Needs node, npm, wrk,
# AUTHKIT_TEST_POSTGRES and AUTHKIT_TEST_REDIS (default: the local servers);
# schemas and keys of its own, dropped after. About 15 minutes on 2 cores.
# make bench-peers-smoke: both servers start and answer one login and one
# session check (CI runs it; under a minute).
.PHONY: bench-peers bench-peers-smoke bench-peers-install
PEERS_ROUNDS ?= 5
PEERS_DURATION ?= 5s
PEERS_OUT ?= $(CURDIR)/bench/results/peers
bench-peers-install:
	cd bench/peers/betterauth && npm ci --no-audit --no-fund --loglevel=error
	mkdir -p bench/results
	cd bench && GOWORK=off go build -o results/peerserver ./cmd/peerserver && GOWORK=off go build -o results/peerbench ./cmd/peerbench
bench-peers: bench-peers-install ## authkit beside better-auth: whole servers, same databases, one run (node, wrk)
	cd bench && results/peerbench -authkit results/peerserver -betterauth peers/betterauth -out $(PEERS_OUT) -rounds $(PEERS_ROUNDS) -duration $(PEERS_DURATION)
bench-peers-smoke: bench-peers-install ## both peer-benchmark servers start and answer a login and a session check
	cd bench && results/peerbench -authkit results/peerserver -betterauth peers/betterauth -out $(PEERS_OUT) -smoke

# The release rules (.ci/release: go.mod files, versions, licenses) and the
# quick-start test: the README's programs built outside the repository
# through a module proxy made from it, their flows driven over HTTP.
release-check: ## go.mod rules for release, and the quick-start test
	cd .ci/release && GOWORK=off go test -count=1 ./...

# Every module with GOWORK=off, each go.mod on its own: go list loads every
# package its packages and tests import from the module's own go.mod and
# go.sum (a missing requirement or checksum fails it), and every module
# they come from must resolve to the version go.work gives it, where make
# lint vetted and make test and make test-e2e built and ran them (else it
# names the go get that fixes it). Nothing is compiled or run again: same
# code, same versions. cmd/authkit, which carries no replace directive,
# gets its siblings from a module proxy made from the repository.
test-standalone: ## every module with GOWORK=off: its own go.mod and go.sum load it at go.work's versions
	cd .ci/release && GOWORK=off go run . standalone

# make proxy PROXY_OUT=dir: a file:// module proxy of every module at the
# release version, for trying authkit in an app outside the repository:
#   GOPROXY=file://$(PROXY_OUT),https://proxy.golang.org GONOSUMDB=github.com/authkit-go/authkit
PROXY_OUT ?= $(CURDIR)/.proxy
proxy: ## a file:// module proxy of the modules (PROXY_OUT)
	cd .ci/release && GOWORK=off go run . proxy -out $(PROXY_OUT)

tidy-check: ## fails when go mod tidy would change a go.mod or go.sum, or go.work.sum is stale
	cd .ci/release && GOWORK=off go run . tidy
	@for m in $(TOOL_MODULES); do (cd $$m && GOWORK=off go mod tidy -diff) || { echo "!! go mod tidy would change $$m"; exit 1; }; done

tools:
	@mkdir -p $(BIN)
	GOBIN=$(BIN) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	@# govulncheck is built only where its database answers: elsewhere make
	@# vulncheck is skipped (or fails) before it would run.
	@if $(VULNDB_REACHABLE); then \
		echo GOBIN=$(BIN) go install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION); \
		GOBIN=$(BIN) go install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION); \
	else echo "govulncheck not installed: vuln.go.dev is unreachable from this machine"; fi
