# Benchmarks (docs/design/benchmarks.md). Included by the Makefile:
#
#     include bench.mk
#
# `make bench` runs the Go benchmarks of the hot paths (-benchmem, several
# counts) into bench/out/go-bench.txt, summarises them with benchstat (a
# tool of go.mod, `go tool benchstat`: nothing is fetched at run time once
# the module cache is warm), then runs the HTTP comparison
# (bench/cmd/compare: bare Fiber vs the kernel on loopback, login vs PBKDF2, authorize redirects, start time,
# idle RSS, and the login storm), which writes bench/out/report.md and
# bench/out/results.json. `make bench-storm` runs the login storm alone
# (bench/out/storm.md, storm.json).
# Needs Redis on 127.0.0.1:6379 (or ADMINKERNEL_TEST_REDIS); bash (the
# Makefile's SHELL) for pipefail.

GO            ?= go
BENCH_OUT     ?= bench/out
BENCH_COUNT   ?= 6
BENCH_TIME    ?= 1s
# The plugin round trip benchmark lives in host/idp/pluginhost once it exists.
BENCH_PKGS    ?= ./bench ./host/authn ./host/token ./host ./host/password ./host/oplog ./host/user ./host/spreadsheet $(patsubst %,./%,$(wildcard host/idp/pluginhost))
# benchstat is pinned in go.mod as a tool (go get -tool golang.org/x/perf/cmd/benchstat@<version>).
BENCHSTAT     ?= $(GO) tool benchstat
# Extra flags for the comparison, e.g. COMPARE_FLAGS='-d 8s -rounds 3'.
COMPARE_FLAGS ?=
# Extra flags for the login storm, e.g. STORM_FLAGS='-storm-pools 1,2 -d 8s'.
STORM_FLAGS ?=

# Extra flags for the million-user run, e.g. SCALE_FLAGS='-measure-only -d 10s'.
SCALE_FLAGS ?=

.PHONY: bench bench-go bench-http bench-storm bench-scale

bench: bench-go bench-http ## Go benchmarks and the HTTP comparison; report in bench/out/report.md

bench-go: ## Go benchmarks only (bench/out/go-bench.txt, benchstat.txt)
	@mkdir -p $(BENCH_OUT)
	set -o pipefail; $(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) -benchtime $(BENCH_TIME) \
		-timeout 30m $(BENCH_PKGS) | tee $(BENCH_OUT)/go-bench.txt
	@# go test -bench passes a package without benchmarks, or a pattern that
	@# matches none: every package of BENCH_PKGS must report one.
	@n=$$(grep -cE '^Benchmark' $(BENCH_OUT)/go-bench.txt); echo "bench-go: $$n benchmark results"; \
	  for p in $(BENCH_PKGS); do mod=github.com/adminkernel/kernel/$${p#./}; \
	    grep -qx "pkg: $$mod" $(BENCH_OUT)/go-bench.txt || { echo "bench-go: $$p reported no benchmark"; exit 1; }; done; \
	  [ "$$n" -gt 0 ] || { echo "bench-go: no benchmark ran"; exit 1; }
	@if $(BENCHSTAT) $(BENCH_OUT)/go-bench.txt > $(BENCH_OUT)/benchstat.txt 2>&1; then \
		cat $(BENCH_OUT)/benchstat.txt; \
	else \
		echo "benchstat unavailable (see $(BENCH_OUT)/benchstat.txt); raw figures in $(BENCH_OUT)/go-bench.txt"; \
	fi

bench-http: ## HTTP comparison and the login storm (bench/out/report.md)
	$(GO) run ./bench/cmd/compare -out $(BENCH_OUT) $(COMPARE_FLAGS)

bench-storm: ## Login storm alone: pings while 200 clients log in (bench/out/storm.md)
	$(GO) run ./bench/cmd/compare -out $(BENCH_OUT) -only storm $(STORM_FLAGS)

bench-scale: ## A million users and sessions on PostgreSQL and MariaDB (fills the database ak_scale once, ~5 min each; bench/out/scale-*.md)
	$(GO) run ./bench/cmd/scale -db postgres -out $(BENCH_OUT) $(SCALE_FLAGS)
	$(GO) run ./bench/cmd/scale -db mysql -out $(BENCH_OUT) $(SCALE_FLAGS)
