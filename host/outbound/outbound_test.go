package outbound_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/outbound"
	"github.com/adminkernel/kernel/host/outbound/outboundtest"
)

// forms is every refused form the guard knows, and public addresses in
// the same notations that must pass.
var forms = []struct {
	addr    string
	blocked bool
}{
	// IPv4
	{"0.0.0.0", true}, {"0.1.2.3", true}, {"10.0.0.1", true}, {"10.255.255.255", true},
	{"100.64.0.1", true}, {"100.127.255.255", true}, {"100.63.255.255", false}, {"100.128.0.0", false},
	{"127.0.0.1", true}, {"127.255.255.254", true}, {"169.254.169.254", true}, {"169.254.0.1", true},
	{"172.16.0.1", true}, {"172.31.255.255", true}, {"172.15.255.255", false}, {"172.32.0.0", false},
	{"192.0.0.1", true}, {"192.0.0.170", true}, {"192.0.2.1", true}, {"192.88.99.1", true},
	{"192.168.1.1", true}, {"198.18.0.1", true}, {"198.19.255.255", true}, {"198.20.0.0", false},
	{"198.51.100.7", true}, {"203.0.113.9", true}, {"224.0.0.1", true}, {"239.255.255.250", true},
	{"240.0.0.1", true}, {"255.255.255.255", true}, {"8.8.8.8", false}, {"1.1.1.1", false},
	{"192.0.1.1", false}, {"192.31.196.1", false}, {"223.255.255.255", false},
	// IPv6 proper
	{"::", true}, {"::1", true}, {"fe80::1", true}, {"fe80::1%eth0", true}, {"febf::1", true},
	{"fec0::1", true}, {"fc00::1", true}, {"fd12:3456::1", true}, {"ff02::1", true}, {"ff0e::1", true},
	{"2001:db8::1", true}, {"2001:db8:ffff::1", true}, {"100::1", true}, {"100::ffff:ffff:ffff:ffff", true},
	{"3fff::1", true}, {"3fff:fff::1", true}, {"5f00::1", true}, {"4000::1", true}, {"1::1", true},
	{"2001:2::1", true}, {"2001:1ff::1", true}, {"2001:200::1", false},
	{"2606:4700:4700::1111", false}, {"2a00:1450:4001::1", false}, {"3ffe::1", false},
	// IPv4-mapped: judged by the IPv4 address
	{"::ffff:127.0.0.1", true}, {"::ffff:7f00:1", true}, {"::ffff:10.0.0.1", true},
	{"::ffff:169.254.169.254", true}, {"::ffff:0.0.0.0", true}, {"::ffff:8.8.8.8", false},
	// IPv4-compatible (deprecated): refused as a whole
	{"::127.0.0.1", true}, {"::7f00:1", true}, {"::8.8.8.8", true}, {"::10.0.0.1", true},
	// IPv4-translated: refused as a whole
	{"::ffff:0:127.0.0.1", true}, {"::ffff:0:8.8.8.8", true},
	// NAT64 well-known prefix: judged by the IPv4 address
	{"64:ff9b::127.0.0.1", true}, {"64:ff9b::7f00:1", true}, {"64:ff9b::a9fe:a9fe", true},
	{"64:ff9b::10.1.2.3", true}, {"64:ff9b::8.8.8.8", false}, {"64:ff9b::1:0:0:1", true},
	// NAT64 local-use: refused as a whole
	{"64:ff9b:1::7f00:1", true}, {"64:ff9b:1::808:808", true},
	// 6to4 and Teredo: refused as a whole
	{"2002:7f00:1::1", true}, {"2002:808:808::1", true}, {"2001:0:4136:e378:8000:63bf:3fff:fdd2", true},
	{"2001::7f00:1", true},
	// ISATAP: judged by the IPv4 address
	{"2001:4860::5efe:7f00:1", true}, {"2001:4860::200:5efe:a00:1", true},
	{"2001:4860::5efe:808:808", false}, {"fe80::5efe:808:808", true},
}

func TestClassifyForms(t *testing.T) {
	var p outbound.Policy
	for _, f := range forms {
		a := netip.MustParseAddr(f.addr)
		err := p.Check(a)
		if (err != nil) != f.blocked {
			t.Errorf("Check(%s) = %v, want blocked %v", f.addr, err, f.blocked)
		}
		if err != nil && !errors.Is(err, outbound.ErrBlocked) {
			t.Errorf("Check(%s) = %v, not ErrBlocked", f.addr, err)
		}
		if refBlocked(a.WithZone("")) != f.blocked {
			t.Errorf("the reference classification disagrees with the table on %s", f.addr)
		}
		// The same address as the dialer hands it to Control.
		if err := p.Control("tcp", netip.AddrPortFrom(a, 80).String(), nil); (err != nil) != f.blocked {
			t.Errorf("Control(%s) = %v, want blocked %v", f.addr, err, f.blocked)
		}
		if err := p.CheckHost("[" + f.addr + "]"); (err != nil) != f.blocked {
			t.Errorf("CheckHost([%s]) = %v, want blocked %v", f.addr, err, f.blocked)
		}
	}
	if err := p.Control("unix", "/run/x.sock", nil); !errors.Is(err, outbound.ErrBlocked) {
		t.Errorf("a unix socket: %v", err)
	}
	if err := p.Control("tcp", "not an address", nil); !errors.Is(err, outbound.ErrBlocked) {
		t.Errorf("an unparsable address: %v", err)
	}
	if err := (outbound.Policy{AllowAll: true}).Check(netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Errorf("AllowAll: %v", err)
	}
}

func TestCheckHostNumericForms(t *testing.T) {
	var p outbound.Policy
	for _, c := range []struct {
		host    string
		blocked bool
	}{
		{"0x7f.1", true}, {"0x7f000001", true}, {"2130706433", true}, {"0177.0.0.1", true},
		{"127.1", true}, {"127.0.1", true}, {"127.0.0.1.", true}, {"017700000001", true},
		{"0x8.0x8.0x8.0x8", true}, // a public address, but not canonical: refused all the same
		{"1.2.3.4.5", true}, {"a.b.0x", true}, {"example.123", true},
		{"127.0.0.1", true}, {"8.8.8.8", false},
		{"example.com", false}, {"api.example.com.", false}, {"1e100.net", false}, {"0x.example", false},
		{"localhost", false}, // a name: its addresses are judged when it is dialled
	} {
		err := p.CheckHost(c.host)
		if (err != nil) != c.blocked {
			t.Errorf("CheckHost(%q) = %v, want blocked %v", c.host, err, c.blocked)
		}
		if err != nil && !errors.Is(err, outbound.ErrBlocked) {
			t.Errorf("CheckHost(%q) = %v, not ErrBlocked", c.host, err)
		}
	}
}

func TestAllowedRanges(t *testing.T) {
	cfg := config.Outbound{AllowedRanges: []string{"10.20.0.0/16", "fd00:1::/64", "127.0.0.1", "::ffff:192.168.7.0/120"}}
	p := outbound.FromConfig(cfg)
	if len(p.Allowed) != 4 || p.Allowed[3].String() != "192.168.7.0/24" {
		t.Fatalf("ranges %v", p.Allowed)
	}
	for _, c := range []struct {
		addr    string
		allowed bool
	}{
		{"10.20.1.2", true}, {"10.21.0.1", false}, {"::ffff:10.20.1.2", true}, {"64:ff9b::a14:102", true},
		{"fd00:1::5", true}, {"fd00:2::5", false}, {"127.0.0.1", true}, {"127.0.0.2", false},
		{"::127.0.0.1", false}, // IPv4-compatible is refused as a whole: 127.0.0.1 does not allow it
		{"2002:7f00:1::", false}, {"192.168.7.9", true}, {"192.168.8.9", false},
		{"fe80::5efe:a14:102", false}, // a link-local ISATAP address is judged as link-local
		{"8.8.8.8", true},
	} {
		err := p.Check(netip.MustParseAddr(c.addr))
		if (err == nil) != c.allowed {
			t.Errorf("Check(%s) = %v, want allowed %v", c.addr, err, c.allowed)
		}
	}
	for _, bad := range []string{"10.0.0.1/8", "10.0.0.0/33", "example.com", "fe80::1%eth0", "", "10.0.0.0/8/8"} {
		if _, err := config.ParseRange(bad); err == nil {
			t.Errorf("ParseRange(%q) accepted", bad)
		}
	}
}

// recorder is a TCP listener that counts the connections it accepts.
type recorder struct {
	net.Listener
	accepts atomic.Int32
}

func listen(t *testing.T, addr string) *recorder {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	r := &recorder{Listener: l}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.accepts.Add(1)
			_ = c.Close()
		}
	}()
	return r
}

func port(l net.Listener) string {
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}

// TestDialerAfterResolution: names resolving (through a test resolver) to
// refused addresses in every form are refused before connect: the
// listener on 127.0.0.1 accepts nothing and the base dialer's own Control
// never runs.
func TestDialerAfterResolution(t *testing.T) {
	rec := listen(t, "127.0.0.1:0")
	names := map[string][]string{
		"loop.test":      {"127.0.0.1"},
		"compat.test":    {"::127.0.0.1"},
		"mapped.test":    {"::ffff:127.0.0.1"},
		"nat64.test":     {"64:ff9b::7f00:1"},
		"sixtofour.test": {"2002:7f00:1::1"},
		"teredo.test":    {"2001:0:7f00:1::1"},
		"private.test":   {"10.0.0.1"},
		"meta.test":      {"169.254.169.254"},
		"zero.test":      {"0.0.0.0"},
		"both.test":      {"127.0.0.1", "::1"},
		"ula.test":       {"fd00::1"},
	}
	p := outbound.Policy{Resolver: outboundtest.Resolver(t, outboundtest.Static(names))}
	var baseCalls atomic.Int32
	base := &net.Dialer{Timeout: 2 * time.Second, Control: func(string, string, syscall.RawConn) error {
		baseCalls.Add(1)
		return nil
	}}
	d := p.Dialer(base)
	for name := range names {
		c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(name, port(rec)))
		if err == nil {
			_ = c.Close()
			t.Errorf("%s: connected", name)
			continue
		}
		if !errors.Is(err, outbound.ErrBlocked) {
			t.Errorf("%s: %v, want ErrBlocked", name, err)
		}
	}
	if n := rec.accepts.Load(); n != 0 {
		t.Fatalf("the listener accepted %d connections", n)
	}
	if n := baseCalls.Load(); n != 0 {
		t.Fatalf("the base Control ran %d times: the guard must run first and stop the socket", n)
	}

	// An allowed range lets the same name through (and the base Control
	// runs after the guard).
	p.Allowed = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	c, err := p.Dialer(base).DialContext(context.Background(), "tcp", net.JoinHostPort("loop.test", port(rec)))
	if err != nil {
		t.Fatalf("an allowed address: %v", err)
	}
	_ = c.Close()
	if baseCalls.Load() != 1 {
		t.Fatalf("base Control ran %d times", baseCalls.Load())
	}
}

// TestTransportRedirectAndRebinding: a redirect from an allowed server to
// a name that now resolves to a refused address is refused by the dialer
// (DNS rebinding: the first answer was allowed).
func TestTransportRedirectAndRebinding(t *testing.T) {
	target := listen(t, "127.0.0.2:0")
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://rebind.test:"+port(target)+"/secret", http.StatusFound)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	answer := func(name string, n int) []netip.Addr {
		switch {
		case name == "allowed.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		case name == "rebind.test" && n == 1:
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		case name == "rebind.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}
		}
		return nil
	}
	p := outbound.Policy{
		Allowed:  []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Resolver: outboundtest.Resolver(t, answer),
	}
	client := &http.Client{Transport: p.Transport(), Timeout: 5 * time.Second}
	// The first resolution of rebind.test (127.0.0.1) is spent here.
	if _, err := p.Dialer(nil).DialContext(context.Background(), "tcp", "rebind.test:"+port(l)); err != nil {
		t.Fatalf("first resolution: %v", err)
	}
	resp, err := client.Get("http://allowed.test:" + port(l) + "/")
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		t.Fatalf("the redirect was followed: HTTP %d", resp.StatusCode)
	}
	if !errors.Is(err, outbound.ErrBlocked) || !strings.Contains(err.Error(), "127.0.0.2") {
		t.Fatalf("redirect: %v, want the dial of 127.0.0.2 refused", err)
	}
	if n := target.accepts.Load(); n != 0 {
		t.Fatalf("the refused target accepted %d connections", n)
	}
}

// TestTransportIgnoresProxyEnvironment: a guarded transport goes to the
// target itself, whatever HTTP_PROXY says (a proxy would connect to an
// address the guard never sees).
func TestTransportIgnoresProxyEnvironment(t *testing.T) {
	proxy := listen(t, "127.0.0.1:0")
	hits := atomic.Int32{}
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) })}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "ALL_PROXY"} {
		t.Setenv(k, "http://"+proxy.Addr().String())
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	p := outbound.Policy{
		Allowed:  []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Resolver: outboundtest.Resolver(t, outboundtest.Static(map[string][]string{"svc.test": {"127.0.0.1"}})),
	}
	tr := p.Transport()
	if tr.Proxy != nil {
		t.Fatal("the guarded transport has a proxy function")
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://svc.test:" + port(l) + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if hits.Load() != 1 || proxy.accepts.Load() != 0 {
		t.Fatalf("target hits %d, proxy accepts %d", hits.Load(), proxy.accepts.Load())
	}
}
