package job_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/job"
	"github.com/adminkernel/kernel/host/outbound"
	"github.com/adminkernel/kernel/host/outbound/outboundtest"
)

func TestHTTPGuardCheckURL(t *testing.T) {
	g := job.HTTPGuard{Allowed: []string{"api.example.com", "*.hooks.example.org", "ops.example.net:8443", "127.0.0.1", "169.254.169.254", "10.1.2.3", "[::1]", "[::ffff:127.0.0.1]", "0.0.0.0", "100.64.1.1", "[fe80::1]",
		"[::127.0.0.1]", "[::ffff:7f00:1]", "0x7f.1", "2130706433", "0177.0.0.1", "127.1", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "[2001::7f00:1]",
		"[64:ff9b:1::1]", "198.18.0.1", "192.0.0.170", "240.0.0.1", "255.255.255.255", "224.0.0.1", "[ff02::1]", "[2001:db8::1]", "[100::1]", "[fd00::1]", "8.8.8.8"}}
	for _, tc := range []struct {
		url     string
		allowed bool
	}{
		{"https://api.example.com/run", true},
		{"http://API.Example.com./run", true},
		{"https://a.hooks.example.org/x", true},
		{"https://hooks.example.org/x", false}, // *. is subdomains only
		{"https://evil.com/?https://api.example.com", false},
		{"https://api.example.com.evil.com/", false},
		{"https://ops.example.net:8443/", true},
		{"https://ops.example.net/", false}, // other port
		{"ftp://api.example.com/", false},
		{"file:///etc/passwd", false},
		{"https://user:pw@api.example.com/", false},
		{"/relative", false},
		{"http://127.0.0.1/", false},       // loopback
		{"http://169.254.169.254/", false}, // link-local: cloud metadata
		{"http://10.1.2.3/", false},        // private
		{"http://[::1]/", false},
		{"http://[::ffff:127.0.0.1]/", false}, // IPv4-mapped loopback
		{"http://0.0.0.0/", false},
		{"http://100.64.1.1/", false}, // CGNAT
		{"http://[fe80::1]/", false},
		{"http://[::127.0.0.1]/", false},     // IPv4-compatible loopback
		{"http://[::ffff:7f00:1]/", false},   // IPv4-mapped, hex
		{"http://0x7f.1/", false},            // inet_aton forms
		{"http://2130706433/", false},        //
		{"http://0177.0.0.1/", false},        //
		{"http://127.1/", false},             //
		{"http://[64:ff9b::7f00:1]/", false}, // NAT64 of loopback
		{"http://[2002:7f00:1::1]/", false},  // 6to4
		{"http://[2001::7f00:1]/", false},    // Teredo
		{"http://[64:ff9b:1::1]/", false},    // local-use NAT64
		{"http://198.18.0.1/", false},        // benchmarking
		{"http://192.0.0.170/", false},       // IETF assignments
		{"http://240.0.0.1/", false},         // reserved
		{"http://255.255.255.255/", false},   // broadcast
		{"http://224.0.0.1/", false},         // multicast
		{"http://[ff02::1]/", false},         //
		{"http://[2001:db8::1]/", false},     // documentation
		{"http://[100::1]/", false},          // discard
		{"http://[fd00::1]/", false},         // unique local
		{"http://8.8.8.8/", true},            // public
	} {
		_, err := g.CheckURL(tc.url)
		if (err == nil) != tc.allowed {
			t.Errorf("CheckURL(%q) = %v, want allowed %v", tc.url, err, tc.allowed)
		}
		if err != nil && !errors.Is(err, job.ErrBlocked) {
			t.Errorf("CheckURL(%q) = %v, not ErrBlocked", tc.url, err)
		}
	}
	if _, err := (job.HTTPGuard{}).CheckURL("https://api.example.com/"); err == nil {
		t.Error("an empty allow-list allowed a host")
	}
	open := job.HTTPGuard{Allowed: []string{"127.0.0.1"}, Policy: outbound.Policy{AllowAll: true}}
	if _, err := open.CheckURL("http://127.0.0.1:8080/"); err != nil {
		t.Errorf("AllowPrivate refused loopback: %v", err)
	}
}

// counter is a test server that counts its requests.
func counter(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestHTTPGuardAtRunTime(t *testing.T) {
	ctx := context.Background()
	target, hits := counter(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("secret")) })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(target.URL, "http://"))

	t.Run("a name resolving to loopback is refused when dialled", func(t *testing.T) {
		g := job.HTTPGuard{Allowed: []string{"localhost"}}
		_, err := g.Do(ctx, g.Client(), job.HTTPSpec{URL: "http://localhost:" + port + "/"})
		if err == nil || !strings.Contains(err.Error(), "blocked") {
			t.Fatalf("Do = %v, want a blocked dial", err)
		}
	})
	t.Run("a redirect to a private address is refused", func(t *testing.T) {
		// The first hop is allowed (private addresses allowed for the test
		// server itself), the redirect goes to another host: refused
		// before it is followed.
		redirector, _ := counter(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://localhost:"+port+"/", http.StatusFound)
		})
		g := job.HTTPGuard{Allowed: []string{"127.0.0.1", "localhost"}, Policy: outbound.Policy{AllowAll: true}}
		_, err := g.Do(ctx, g.Client(), job.HTTPSpec{URL: redirector.URL + "/"})
		if err == nil || !strings.Contains(err.Error(), "redirect to another host") {
			t.Fatalf("Do = %v, want the redirect refused", err)
		}
	})
	t.Run("a redirect to link-local metadata is refused", func(t *testing.T) {
		redirector, _ := counter(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		})
		g := job.HTTPGuard{Allowed: []string{"127.0.0.1"}, Policy: outbound.Policy{AllowAll: true}}
		if _, err := g.Do(ctx, g.Client(), job.HTTPSpec{URL: redirector.URL + "/"}); err == nil {
			t.Fatal("a redirect to 169.254.169.254 was followed")
		}
	})
	if n := hits.Load(); n != 0 {
		t.Fatalf("the private target was reached %d times", n)
	}
	t.Run("an allowed call returns the status and the body", func(t *testing.T) {
		g := job.HTTPGuard{Allowed: []string{"127.0.0.1"}, Policy: outbound.Policy{AllowAll: true}}
		out, err := g.Do(ctx, g.Client(), job.HTTPSpec{URL: target.URL + "/", Method: "POST", Body: `{"a":1}`, Headers: map[string]string{"X-Job": "1"}})
		if err != nil || !strings.HasPrefix(out, "200 OK") || !strings.Contains(out, "secret") {
			t.Fatalf("Do = %q, %v", out, err)
		}
	})
	t.Run("an error status fails the run and the body is capped", func(t *testing.T) {
		big, _ := counter(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte(strings.Repeat("x", 200<<10)))
		})
		g := job.HTTPGuard{Allowed: []string{"127.0.0.1"}, Policy: outbound.Policy{AllowAll: true}}
		out, err := g.Do(ctx, g.Client(), job.HTTPSpec{URL: big.URL})
		if err == nil || !strings.Contains(out, "truncated") || len(out) > 70<<10 {
			t.Fatalf("Do = %d bytes, %v", len(out), err)
		}
	})
}

// TestHTTPGuardRedirectRebinding: a redirect from an allowed server (its
// address allowed by range) to the same host, whose name now resolves to
// a refused address, is refused when dialled: the redirect hop goes
// through the same dialer check, and the target accepts nothing.
func TestHTTPGuardRedirectRebinding(t *testing.T) {
	// The redirector must listen on 127.0.0.1 on the target's port, so that
	// the redirect stays on the same host and port: a few tries in case the
	// port is taken there.
	var target, l net.Listener
	for try := 0; l == nil; try++ {
		var err error
		if target, err = net.Listen("tcp", "127.0.0.2:0"); err != nil {
			t.Fatalf("listen on 127.0.0.2 (Linux answers on all of 127/8): %v", err)
		}
		_, p, _ := net.SplitHostPort(target.Addr().String())
		if l, err = net.Listen("tcp", "127.0.0.1:"+p); err != nil {
			_ = target.Close()
			if try == 5 {
				t.Fatalf("no port free on both 127.0.0.1 and 127.0.0.2: %v", err)
			}
			l = nil
		}
	}
	_, port, _ := net.SplitHostPort(target.Addr().String())
	var accepts atomic.Int32
	go func() {
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			accepts.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = target.Close() })
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/latest/meta-data/", http.StatusFound)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	answer := func(name string, n int) []netip.Addr {
		if name == "api.example.test" && n == 1 {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}
	}
	g := job.HTTPGuard{Allowed: []string{"api.example.test"}, Policy: outbound.Policy{
		Allowed:  []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Resolver: outboundtest.Resolver(t, answer),
	}}
	_, err := g.Do(context.Background(), g.Client(), job.HTTPSpec{URL: "http://api.example.test:" + port + "/"})
	if !errors.Is(err, job.ErrBlocked) || !strings.Contains(err.Error(), "127.0.0.2") {
		t.Fatalf("Do = %v, want the redirect's dial of 127.0.0.2 refused", err)
	}
	if n := accepts.Load(); n != 0 {
		t.Fatalf("the refused address accepted %d connections", n)
	}
}
