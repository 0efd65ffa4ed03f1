// Package bench holds the kernel's performance suite: Go benchmarks of the
// hot paths (package bench_test, next to this file), a bare Fiber server
// (cmd/bare), an HTTP load generator (cmd/load) and the runner that
// compares the kernel with bare Fiber over loopback and writes the report
// (cmd/compare). `make bench` (bench.mk) runs all of it; docs/design/benchmarks.md
// holds the figures and how to reproduce them.
package bench
