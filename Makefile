# Admin Kernel — make help lists the targets.
SHELL := bash
.DEFAULT_GOAL := help

GO            ?= go
BIN           := bin
VERSION       ?= $(shell bash scripts/version.sh 2>/dev/null || echo dev)
LDFLAGS       := -s -w -X main.version=$(VERSION)
GOLANGCI_VER  := v2.15.0
GOLANGCI      := $(shell $(GO) env GOPATH)/bin/golangci-lint
TEST_FLAGS    ?= -race -shuffle=on -count=1 -timeout 15m
# pluginsdk is its own Go module (docs/vendors/plugins.md, "The SDK module"): ./...
# at the root no longer includes it, so test, vet, lint and verify run
# there too. go.work joins both modules for development.
SDK_DIR       := pluginsdk

.PHONY: docs dist dist-check docker-replay help build run test test-unit test-matrix test-ha test-upgrade test-browser console test-console test-providers-cli fuzz lint generate verify fmt vet clean

include proto.mk
include bench.mk

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-12s %s\n", $$1, $$2}'

build: ## build the host at bin/adminkernel and the provider plugins into bin/plugins/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/adminkernel ./host/cmd/adminkernel
	@mkdir -p $(BIN)/plugins
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/plugins/ ./plugins/...

run: build ## run the service on the embedded SQLite default (Development, http://localhost:5100)
	$(BIN)/adminkernel serve --environment Development

# Allocation checks (testing.AllocsPerRun) skip themselves under -race,
# whose instrumentation allocates; make test runs them again without it.
ALLOC_TESTS := -run 'NotAllocate' ./host/sysconfig ./host/internal/cors

test: ## run every test with -race (SQLite, PostgreSQL, MariaDB and Redis must answer; see README), then the allocation checks without it
	$(GO) test $(TEST_FLAGS) ./...
	cd $(SDK_DIR) && $(GO) test $(TEST_FLAGS) ./...
	bash scripts/gotest-count.sh -q 2 -count=1 $(ALLOC_TESTS)

# Tests that need a server (PostgreSQL, MariaDB, Redis, a redis-server binary)
# are in files built without the `unit` tag; with it, and with the database
# and cache selection pinned to SQLite and the in-process cache, what is left
# runs anywhere. A test that cannot reach its server fails in make test.
UNIT_ENV := ADMINKERNEL_TEST_DB=Sqlite ADMINKERNEL_TEST_CACHE=memory ADMINKERNEL_TEST_DIALECTS=sqlite

test-unit: ## run the tests that need no external server (SQLite, in-process cache; -tags unit, with -race)
	$(UNIT_ENV) $(GO) test $(TEST_FLAGS) -tags unit ./...
	cd $(SDK_DIR) && $(UNIT_ENV) $(GO) test $(TEST_FLAGS) -tags unit ./...

# The API and SSO suites (every package driving a real kernel through
# kerneltest), run again on each database x cache backend. `make test` runs
# them on SQLite with the in-process cache (and with -race).
API_PKGS := ./host ./host/user ./host/role ./host/menu ./host/org ./host/configcenter ./host/dict \
	./host/externalauth ./host/cacheadmin ./host/oplog ./host/monitor ./host/kerneltest ./host/datascope \
	./host/notice ./host/hub ./host/job ./host/file ./host/recycle ./host/dashboard ./host/compat \
	./host/resource ./examples/inventory

# MATRIX picks combinations (CI splits them across its two lanes).
MATRIX ?= Sqlite:redis PostgreSQL:memory PostgreSQL:redis MySql:memory MySql:redis

test-matrix: ## API+SSO suites on SQLite/PostgreSQL/MariaDB x in-process/Redis cache (no -race; MATRIX="Db:cache ..." picks some)
	@set -e; for combo in $(MATRIX); do \
	  db=$${combo%%:*}; cache=$${combo##*:}; echo "== $$db / $$cache"; \
	  ADMINKERNEL_TEST_DB=$$db ADMINKERNEL_TEST_CACHE=$$cache $(GO) test -count=1 -timeout 20m $(API_PKGS); done

# The high-availability suites (issue 30): two replicas under login and ping
# load while a Redis Sentinel master, then a Redis Cluster master, is killed;
# each prints its failover and error windows (FAILOVER lines). The hatest
# build tag keeps them out of make test. Needs PostgreSQL, redis-server and
# redis-cli.
# Each suite must run and pass (scripts/gotest-count.sh: a renamed or skipped
# suite fails instead of passing with "no tests to run").
test-ha: ## Redis Sentinel and Cluster failover under load (two replicas; prints the failover windows) and Redis memory per session, authorize state, replica
	@set -e; for suite in TestHASentinel TestHACluster TestHAMemory; do echo "== $$suite"; \
	  GREP='FAILOVER|MEMORY' bash scripts/gotest-count.sh -q 1 -count=1 -tags hatest -timeout 3m -run "^$$suite$$" ./host/replicatest/; done

# node --test passes when it finds no test (no file, or a file declaring
# none): scripts/node-test.sh counts each file's tests and fails on zero
# and on a skip.
# The real-browser suite (e2e/browser, issue 18): Debian's chromium driven
# by playwright-core (pinned in e2e/browser/package-lock.json, installed
# with npm ci when node_modules is missing or older than the lock file)
# against the kernel binary and the test OpenID provider process.
BROWSER_DIR := e2e/browser
CHROMIUM    ?= /usr/bin/chromium

# The rolling-upgrade test (issue 30): builds the previous release (the
# newest v* tag before HEAD, or ADMINKERNEL_PREVIOUS_RELEASE) from git and
# runs it next to this tree's binary on one PostgreSQL database and Redis,
# across this tree's migrations. Needs the git history with tags.
test-upgrade: ## the previous release and this one side by side on one PostgreSQL database across a schema change (needs git history with tags, PostgreSQL, Redis)
	bash scripts/gotest-count.sh 1 -tags upgradetest -count=1 -timeout 20m -run '^TestRollingUpgrade$$' ./host/replicatest/

test-browser: ## real-browser SSO, session, passkey and realtime suite: chromium + playwright-core against bin/adminkernel and bin/testissuer (needs chromium, node, npm; realtime.test.js and signalr.test.js also PostgreSQL, Redis and psql)
	@test -x $(CHROMIUM) || { echo "test-browser: $(CHROMIUM) is missing: apt-get install chromium (.ci/run does)"; exit 1; }
	@command -v npm >/dev/null || { echo "test-browser: node and npm are missing: apt-get install nodejs npm (.ci/run does)"; exit 1; }
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/adminkernel ./host/cmd/adminkernel
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/testissuer ./e2e/browser/testissuer
	@cd $(BROWSER_DIR) && lock=$$(sha256sum package-lock.json | cut -d' ' -f1); \
	  if [ "$$(cat node_modules/.lock-sha256 2>/dev/null)" != "$$lock" ]; then \
	    echo "npm ci ($(BROWSER_DIR))"; npm ci --no-audit --no-fund && echo "$$lock" > node_modules/.lock-sha256; fi
	cd $(BROWSER_DIR) && CHROMIUM=$(CHROMIUM) AK_KERNEL_BIN=$(abspath $(BIN)/adminkernel) AK_INVENTORY_BIN=$(abspath $(BIN)/inventory) AK_ISSUER_BIN=$(abspath $(BIN)/testissuer) \
	  bash $(CURDIR)/scripts/node-test.sh --test-concurrency=1 suite.test.js passkey.test.js realtime.test.js signalr.test.js

# The embedded web console (issue 20): Vue sources in console/, the built
# console/dist is committed (go build and make run need no Node). npm ci
# runs when node_modules is missing or older than the lock file.
CONSOLE_DIR := console

console-deps:
	@command -v npm >/dev/null || { echo "console: node and npm are missing: apt-get install nodejs npm"; exit 1; }
	@cd $(CONSOLE_DIR) && lock=$$(sha256sum package-lock.json | cut -d' ' -f1); \
	  if [ "$$(cat node_modules/.lock-sha256 2>/dev/null)" != "$$lock" ]; then \
	    echo "npm ci ($(CONSOLE_DIR))"; npm ci --no-audit --no-fund && echo "$$lock" > node_modules/.lock-sha256; fi

console: console-deps ## rebuild the embedded web console into console/dist (Vitest first; needs node and npm)
	cd $(CONSOLE_DIR) && npx vitest run && npm run build

# Each console e2e file starts its own kernel (a free port, its own temporary
# directory) and its own chromium (a temporary profile), so files run in
# parallel; 2 keeps the suite under 8 minutes on a 2-core runner.
CONSOLE_E2E_JOBS ?= 2

test-console: console-deps ## the console's end-to-end suite in chromium against bin/adminkernel and bin/testissuer, CONSOLE_E2E_JOBS files at a time (needs chromium, node, npm)
	@test -x $(CHROMIUM) || { echo "test-console: $(CHROMIUM) is missing: apt-get install chromium (.ci/run does)"; exit 1; }
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/adminkernel ./host/cmd/adminkernel
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/testissuer ./e2e/browser/testissuer
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/inventory ./examples/inventory/cmd/inventory
	@# VITEST=0 skips the unit tests (CI: make verify ran them when it built the console)
	if [ "$(VITEST)" != 0 ]; then cd $(CONSOLE_DIR) && npx vitest run; fi
	cd $(CONSOLE_DIR) && rm -f e2e/output/*.timing.json && CHROMIUM=$(CHROMIUM) AK_KERNEL_BIN=$(abspath $(BIN)/adminkernel) AK_INVENTORY_BIN=$(abspath $(BIN)/inventory) AK_ISSUER_BIN=$(abspath $(BIN)/testissuer) \
	  bash $(CURDIR)/scripts/node-test.sh --test-concurrency=$(CONSOLE_E2E_JOBS) e2e/
	@cd $(CONSOLE_DIR) && node -e 'const fs=require("fs");let t=0;for(const f of fs.readdirSync("e2e/output").filter(f=>f.endsWith(".timing.json"))){const j=JSON.parse(fs.readFileSync("e2e/output/"+f));t+=j.ms;console.log(`  $${j.file}: $${(j.ms/1000).toFixed(1)} s`)}console.log(`  sum of the files: $${(t/1000).toFixed(1)} s`)'

# The built `adminkernel providers test` (issue: a check that cannot fail):
# bin/adminkernel, not a test binary, against the bundled code_host plugin
# (must pass, with at least 8 checks run), the same with empty settings, a
# binary that exits at once and a code_host that leaks its client secret
# into the login URL (e2e/providerscli; all three must fail).
test-providers-cli: ## the built adminkernel providers test against a good plugin (pass), empty settings, a plugin that exits at once and one leaking its secret (fail); prints each report and a summary
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/adminkernel ./host/cmd/adminkernel
	AK_KERNEL_BIN=$(BIN)/adminkernel bash scripts/providers-cli.sh

dist: ## versioned release archives for linux/amd64 and linux/arm64 with SHA256SUMS in dist/ (docs/operators/install.md)
	bash scripts/dist.sh

docker-replay: ## replay deploy/Dockerfile's build stage on a clean git archive of HEAD without a container daemon (COPY and RUN steps in order), then check the final stage's sources and the built version
	python3 scripts/docker-replay.py

dist-check: ## extract the linux/amd64 archive of make dist and check it: sums, version, config, serve to ready, metrics the dashboard uses, SIGTERM, the systemd unit
	bash scripts/dist-check.sh

fuzz: ## run every fuzz target briefly (FUZZTIME, default 5s each); seeds also run in make test
	bash scripts/fuzz.sh

lint: $(GOLANGCI) ## run golangci-lint with .golangci.yml
	$(GOLANGCI) run ./...
	cd $(SDK_DIR) && $(GOLANGCI) run --config $(CURDIR)/.golangci.yml ./...

$(GOLANGCI):
	GOBIN=$(dir $(GOLANGCI)) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VER)

generate: ## regenerate the ent client from ent/schema (the protocol code: make proto)
	$(GO) generate ./ent/...

vet: ## run go vet on every package (and on the -tags unit build of the tests)
	$(GO) vet ./...
	$(GO) vet -tags unit ./...
	cd $(SDK_DIR) && $(GO) vet ./... && $(GO) vet -tags unit ./...

# The reference pages generated from the code's registries: every settings
# file key (config.Config, its defaults and doc comments), every runtime key
# (the sysconfig registry and its seeded rows) and the command tree.
docs: ## regenerate docs/reference/settings.md and cli.md from the code
	$(GO) run ./host/cmd/refdocs -out docs/reference

verify: proto generate docs ## regenerate ent, the protocol code (protoc) and the reference pages, tidy modules, rebuild the console (needs npm; VERIFY_SKIP_CONSOLE=1 skips it); fail on drift, a schema change without migration file, gofmt or vet findings
	@git diff --exit-code --stat -- docs/reference >/dev/null && test -z "$$(git status --porcelain --untracked-files=all -- docs/reference)" || \
	  { echo "docs/reference drifted from the code: run make docs and commit"; git status --porcelain -- docs/reference; exit 1; }
	GOWORK=off $(GO) mod tidy
	cd $(SDK_DIR) && GOWORK=off $(GO) mod tidy
	@if [ -n "$$(git status --porcelain -- ent pluginsdk/internal/proto go.mod go.sum go.work go.work.sum $(SDK_DIR)/go.mod $(SDK_DIR)/go.sum)" ]; then \
		echo "generated code or go.mod/go.sum drifted from the committed state:"; \
		git status --porcelain -- ent pluginsdk/internal/proto go.mod go.sum go.work go.work.sum $(SDK_DIR)/go.mod $(SDK_DIR)/go.sum; \
		git --no-pager diff --stat -- ent pluginsdk/internal/proto go.mod go.sum go.work go.work.sum $(SDK_DIR)/go.mod $(SDK_DIR)/go.sum; exit 1; fi
	@# every SQLite migration applied to an in-memory database leaves nothing for ent to change
	$(UNIT_ENV) bash scripts/gotest-count.sh -q 1 -count=1 -tags unit -run '^TestMigrationFilesMatchEntSchema$$' ./host/database/
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(MAKE) --no-print-directory vet
	@# the committed console build matches its sources (npm is needed)
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory console && \
	  { git diff --exit-code --stat -- console/dist console/src/icons.generated.json console/src/codes.generated.json && \
	    test -z "$$(git status --porcelain --untracked-files=all -- console/dist)" || \
	    { echo "console/dist drifted from its sources: run make console and commit"; exit 1; }; }; \
	  elif [ "$(VERIFY_SKIP_CONSOLE)" = 1 ]; then echo "verify: npm missing, the console build is NOT checked (VERIFY_SKIP_CONSOLE=1)"; \
	  else echo "verify: npm is missing, so the committed console build cannot be checked against its sources: install node and npm, or set VERIFY_SKIP_CONSOLE=1 to skip that check knowingly"; exit 1; fi

fmt: ## format the code
	gofmt -w $$(git ls-files '*.go')

clean: ## remove build output
	rm -rf $(BIN)
