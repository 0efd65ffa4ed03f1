package user_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/gofiber/fiber/v3"
)

// onPostgres runs a benchmark on PostgreSQL unless ADMINKERNEL_TEST_DB
// names another database.
func onPostgres(b *testing.B) {
	if os.Getenv(kerneltest.EnvDB) == "" {
		b.Setenv(kerneltest.EnvDB, "PostgreSQL")
	}
}

// listen serves the kernel on a loopback listener and returns its URL.
func listen(b *testing.B, k *kerneltest.Kernel) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = k.App().Listener(ln, fiber.ListenConfig{DisableStartupMessage: true}) }()
	b.Cleanup(func() { _ = k.App().Shutdown() })
	return "http://" + ln.Addr().String()
}

// peakHeap samples the live heap until stop is called and returns the
// highest growth over the heap at the start (after a GC), in bytes.
func peakHeap() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > peak.Load() {
				peak.Store(m.HeapAlloc - base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// BenchmarkUserImport10k: preview (upload and validate) and commit of a
// 10 000-row file, through HTTP, on PostgreSQL.
func BenchmarkUserImport10k(b *testing.B) {
	onPostgres(b)
	const n = 10000
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		k := kerneltest.Start(b, nil)
		admin := k.Admin()
		rows := make([][]string, n)
		for j := range rows {
			rows[j] = []string{fmt.Sprintf("b%d_%05d", i, j), "Bench", "", "13800000000", "", "男", "技术部", "专员", "启用", "scope_all"}
		}
		file := workbook(b, importHeaders, rows)
		b.StartTimer()
		stop := peakHeap()
		p := benchPreview(b, k, admin, file)
		r := k.Do("POST", base+"/import/commit", admin, map[string]any{"rows": p.Rows, "strategy": 0}).Expect(b, "commit", 200, 0)
		peak := stop()
		var res commitResult
		r.Decode(b, &res)
		if res.Inserted != n {
			b.Fatalf("inserted %d", res.Inserted)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.StopTimer()
		_ = k.Close()
		b.StartTimer()
	}
}

func benchPreview(b *testing.B, k *kerneltest.Kernel, tok string, file []byte) preview {
	b.Helper()
	r := uploadTo(b, k, tok, "users.xlsx", file, "").Expect(b, "preview", 200, 0)
	var p preview
	r.Decode(b, &p)
	if p.ErrorRows != 0 {
		b.Fatalf("preview errors: %d", p.ErrorRows)
	}
	return p
}

// BenchmarkUserExport: export of 10 000, 100 000 and 200 000 users through
// HTTP on PostgreSQL; peak-heap-MiB is the highest heap growth during the
// request with GOGC 10 (the test client buffers the whole answer, a few
// MiB, which a real connection streams).
func BenchmarkUserExport(b *testing.B) {
	onPostgres(b)
	for _, n := range []int{10000, 100000, 200000} {
		b.Run(fmt.Sprintf("users=%d", n), func(b *testing.B) {
			k := kerneltest.Start(b, []string{})
			ctx := context.Background()
			if err := k.Settings().Set(ctx, "sys.export.maxRows", "1000000"); err != nil {
				b.Fatal(err)
			}
			for start := 0; start < n; start += 1000 {
				k.Ent().SysUser.MapCreateBulk(make([]struct{}, min(1000, n-start)), func(c *ent.SysUserCreate, i int) {
					c.SetAccount(fmt.Sprintf("x%07d", start+i)).SetName("导出用户").SetPhone("13800000000").
						SetEmail("x@example.com").SetGender("1").SetOrgID(4).SetPositionID(6).SetPasswordHash("x")
				}).ExecX(ctx)
			}
			admin := k.Admin()
			url := listen(b, k)
			b.ResetTimer()
			for b.Loop() {
				// GOGC 10 while measuring: the peak then tracks the live
				// heap rather than garbage the collector has not reached yet.
				old := debug.SetGCPercent(10)
				stop := peakHeap()
				// Over a real connection, the answer read into io.Discard:
				// App().Test would buffer the whole workbook (twice) in this
				// process and count it as the export's memory.
				req, err := http.NewRequestWithContext(b.Context(), "GET", url+base+"/export", nil)
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+admin)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				size, err := io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				peak := stop()
				debug.SetGCPercent(old)
				if err != nil || resp.StatusCode != 200 || size < int64(n) {
					b.Fatalf("export = %d, %d bytes, %v", resp.StatusCode, size, err)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(size)/(1<<20), "xlsx-MiB")
			}
		})
	}
}
