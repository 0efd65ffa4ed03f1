//go:build !unit

package replicatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// readyProxy is a tiny load balancer: it polls every backend's
// /health/ready every 50 ms and spreads requests round-robin over those
// that answered 200 last.
type readyProxy struct {
	srv      *httptest.Server
	backends []*url.URL
	proxies  []*httputil.ReverseProxy
	ready    []atomic.Bool
	served   []atomic.Int64
	sawDrain []atomic.Bool
	next     atomic.Uint64
	stop     chan struct{}
	wg       sync.WaitGroup
}

func startReadyProxy(t *testing.T, bases ...string) *readyProxy {
	t.Helper()
	p := &readyProxy{ready: make([]atomic.Bool, len(bases)), served: make([]atomic.Int64, len(bases)),
		sawDrain: make([]atomic.Bool, len(bases)), stop: make(chan struct{})}
	for _, b := range bases {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		p.backends = append(p.backends, u)
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.Transport = &http.Transport{MaxIdleConnsPerHost: 16}
		p.proxies = append(p.proxies, rp)
	}
	probe := &http.Client{Timeout: time.Second}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			for i, u := range p.backends {
				resp, err := probe.Get(u.String() + "/health/ready")
				ok := err == nil && resp.StatusCode == 200
				if err == nil {
					var h health
					if resp.StatusCode == 503 && json.NewDecoder(resp.Body).Decode(&h) == nil && h.check("shutdown") == "Unhealthy" {
						p.sawDrain[i].Store(true)
					}
					resp.Body.Close()
				}
				p.ready[i].Store(ok)
			}
			select {
			case <-p.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := len(p.backends)
		start := int(p.next.Add(1) % uint64(n)) //nolint:gosec // n is tiny
		for k := range n {
			i := (start + k) % n
			if p.ready[i].Load() {
				p.served[i].Add(1)
				p.proxies[i].ServeHTTP(w, r)
				return
			}
		}
		http.Error(w, "no ready backend", http.StatusBadGateway)
	}))
	t.Cleanup(func() {
		close(p.stop)
		p.wg.Wait()
		p.srv.Close()
	})
	return p
}

// TestDrainOnShutdown: two replicas behind a proxy that follows readiness,
// under login and ping load; replica A gets SIGTERM. Its readiness answers
// 503 "draining" for the drain delay while it still serves, then it stops
// accepting, finishes what is in flight and exits 0; not one request
// fails, B takes everything over.
func TestDrainOnShutdown(t *testing.T) {
	bin := binary(t)
	portA, portB := freePort(t), freePort(t)
	settings := sharedSettings(t, "drain", "Service__Shutdown__ReadyDrainDelaySeconds=2")
	run(t, bin, settings, "migrate", "--environment", "Development")
	a := startReplica(t, bin, "A", portA, settings)
	b := startReplica(t, bin, "B", portB, settings)
	c := newBrowser(t)
	a.waitReady(c)
	b.waitReady(c)
	admin := c.login(a.base, "superAdmin", adminPassword).AccessToken
	c.do("PUT", a.base+"/api/v1/sys/config/batch", admin, []map[string]any{
		{"configKey": "sys.security.rateLimit.enabled", "configValue": "false"},
	}).expect(t, "rate limit off", 200, 0)

	p := startReadyProxy(t, a.base, b.base)
	poll.Until(t, 5*time.Second, "both backends ready in the proxy", func() bool { return p.ready[0].Load() && p.ready[1].Load() })

	var ok, failed atomic.Int64
	var mu sync.Mutex
	var failures []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newBrowser(t)
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := w.try("POST", p.srv.URL+"/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": adminPassword})
				if err == nil && (r.Status != 200 || r.Code != 0) {
					err = fmt.Errorf("login: HTTP %d %s", r.Status, r.Raw)
				}
				if err == nil {
					var tk tokens
					r.decode(t, &tk)
					for range 5 {
						pr, perr := w.try("GET", p.srv.URL+"/api/v1/ping", tk.AccessToken, nil)
						if perr == nil && (pr.Status != 200 || pr.Code != 0) {
							perr = fmt.Errorf("ping: HTTP %d %s", pr.Status, pr.Raw)
						}
						if perr != nil {
							err = perr
							break
						}
						ok.Add(1)
					}
				}
				if err != nil {
					failed.Add(1)
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				} else {
					ok.Add(1)
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	servedA := p.served[0].Load()
	if servedA == 0 {
		t.Fatal("replica A served nothing before the SIGTERM")
	}
	term := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.exited:
	case <-time.After(stopWithin):
		t.Fatalf("replica A did not exit within %s of SIGTERM", stopWithin)
	}
	exitedAfter := time.Since(term)
	if a.err != nil {
		t.Errorf("replica A exited with %v", a.err)
	}
	time.Sleep(2 * time.Second) // B alone
	okBefore := ok.Load()
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()

	if ok.Load() <= okBefore {
		t.Error("no request succeeded through B after A left")
	}
	if !p.sawDrain[0].Load() {
		t.Error(`the proxy never saw A's readiness answer 503 with the check "shutdown"`)
	}
	if exitedAfter < 2*time.Second {
		t.Errorf("A exited %s after SIGTERM, before its 2 s drain delay", exitedAfter)
	}
	if !a.logged("draining before closing the listener") {
		t.Errorf("A did not log the drain:\n%s", a.log)
	}
	t.Logf("drain: A exited %s after SIGTERM (drain delay 2 s); %d requests ok, %d failed; A served %d, B %d",
		exitedAfter.Round(time.Millisecond), ok.Load(), failed.Load(), p.served[0].Load(), p.served[1].Load())
	if failed.Load() != 0 {
		t.Fatalf("%d requests failed across the shutdown: %s", failed.Load(), strings.Join(failures[:min(len(failures), 5)], "; "))
	}
}
