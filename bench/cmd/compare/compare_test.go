package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseGoBench(t *testing.T) {
	const out = `goos: linux
pkg: github.com/adminkernel/kernel/bench
BenchmarkPing/bare-2         	  100	      3000 ns/op	     256 B/op	       3 allocs/op
BenchmarkPing/bare-2         	  100	      1000 ns/op	     256 B/op	       3 allocs/op
BenchmarkPing/bare-2         	  100	      2000 ns/op	     256 B/op	       3 allocs/op
BenchmarkTokenSessionCheck/memcache/Verify+Active-2 	 10	 4500 ns/op	 3000 cpu-ns/op	 400 B/op	 10 allocs/op
BenchmarkPermissionHas/redis-2 	 10	 40000 ns/op	    81.00 codes	 2600 B/op	 10 allocs/op
PASS
pkg: github.com/adminkernel/kernel/host/idp/pluginhost
BenchmarkAuthorizeRoundTrip/in-process-2 	 10	 1500 ns/op	 100 B/op	 2 allocs/op
BenchmarkAuthorizeRoundTrip/plugin-2 	 10	 90000 ns/op	 9000 B/op	 150 allocs/op
`
	path := filepath.Join(t.TempDir(), "go-bench.txt")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	bs, _, err := parseGoBench(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 5 {
		t.Fatalf("got %d benchmarks: %+v", len(bs), bs)
	}
	b, ok := findBench(bs, "BenchmarkPing/bare")
	if !ok || b.Runs != 3 || b.NsPerOp != 2000 || b.AllocsPerOp != 3 || !strings.HasSuffix(b.Pkg, "/bench") {
		t.Fatalf("BenchmarkPing/bare = %+v", b)
	}
	if b, _ := findBench(bs, "BenchmarkPermissionHas/redis"); b.BytesPerOp != 2600 || b.NsPerOp != 40000 {
		t.Fatalf("custom metric confused the parser: %+v", b)
	}
	r := &results{GoBench: bs}
	md := r.markdown()
	for _, want := range []string{"| token + session check on a cache hit | 3.00 µs CPU (4.50 µs wall), 10 allocs | ≤ 2 µs, ≤ 2 allocs | **not met**",
		"+88 µs (90 vs 1.5 µs)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestMedianRun(t *testing.T) {
	runs := []httpRun{{Cache: "memcache", Target: "bare"}, {Cache: "memcache", Target: "bare"}, {Cache: "memcache", Target: "bare"}, {Cache: "redis", Target: "bare"}}
	for i, v := range []float64{300, 100, 200, 900} {
		runs[i].RPS = v
	}
	if m := medianRun(runs, "memcache", "bare"); m == nil || m.RPS != 200 {
		t.Fatalf("median = %+v", m)
	}
	if medianRun(runs, "memcache", "user") != nil {
		t.Fatal("median of nothing is not nil")
	}
}
