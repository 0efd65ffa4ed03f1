package password_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/kerneltest"
)

// BenchmarkLoginUnderFlood (Security III, item 6; docs/design/benchmarks.md
// "Fair login"): one client logs in one login at a time while another
// address floods the login at 10 per second (each request on its own, as
// a script that does not wait for answers), on one hashing slot (the
// default of a 2-CPU machine) at the default 600 000 iterations. Reports
// the other client's p50 and p99 (ms) without and with the flood. It uses
// only HTTP, so it runs unchanged on the code before the fair scheduler.
func BenchmarkLoginUnderFlood(b *testing.B) {
	for _, flood := range []bool{false, true} {
		name := "idle"
		if flood {
			name = "flood10ps"
		}
		b.Run(name, func(b *testing.B) {
			k := kerneltest.Start(b, []string{
				"Service__Security__Password__Pbkdf2Iterations=600000",
				"Service__Security__Password__HashConcurrency=1",
				"Service__Http__TrustedProxies__0=0.0.0.0/0",
			})
			k.User("victim", "Victim#Pass12")
			k.User("flooder", "Flood#Pass12")
			send := func(ip, body string) int {
				req := httptest.NewRequest("POST", "/api/v1/auth/login", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Forwarded-For", ip)
				resp, err := k.App().Test(req, fiber.TestConfig{Timeout: time.Minute})
				if err != nil {
					return 0
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}
			victim := `{"account":"victim","password":"Victim#Pass12"}`
			flooder := `{"account":"flooder","password":"Flood#Pass12"}`
			send("198.51.100.9", victim) // rehash to the configured count
			send("203.0.113.7", flooder)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			if flood {
				wg.Go(func() {
					t := time.NewTicker(100 * time.Millisecond)
					defer t.Stop()
					for {
						select {
						case <-stop:
							return
						case <-t.C:
							wg.Go(func() { send("203.0.113.7", flooder) })
						}
					}
				})
				time.Sleep(2 * time.Second) // let the queue build up
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if s := send("198.51.100.9", victim); s != http.StatusOK {
					b.Errorf("victim login: HTTP %d", s)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
		})
	}
}
