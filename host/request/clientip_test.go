package request

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v3"
)

func mustTrusted(t *testing.T, s ...string) []*net.IPNet {
	t.Helper()
	n, err := ParseTrusted(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestClientIPTable(t *testing.T) {
	proxies := mustTrusted(t, "10.0.0.0/8", "192.168.1.1", "2001:db8::/32")
	cases := []struct {
		name    string
		peer    string
		xff     string
		trusted []*net.IPNet
		want    string
	}{
		{"no proxies configured", "203.0.113.5", "1.1.1.1", nil, "203.0.113.5"},
		{"untrusted peer ignores xff", "203.0.113.5", "1.1.1.1", proxies, "203.0.113.5"},
		{"trusted peer without xff", "10.0.0.2", "", proxies, "10.0.0.2"},
		{"trusted peer one hop", "10.0.0.2", "198.51.100.1", proxies, "198.51.100.1"},
		{"spoofed left entries ignored", "10.0.0.2", "6.6.6.6, 7.7.7.7, 198.51.100.1", proxies, "198.51.100.1"},
		{"skip trusted hops", "10.0.0.2", "6.6.6.6, 198.51.100.1, 10.9.9.9, 192.168.1.1", proxies, "198.51.100.1"},
		{"all hops trusted gives left-most", "10.0.0.2", "10.1.1.1, 10.2.2.2", proxies, "10.1.1.1"},
		{"garbage stops the walk", "10.0.0.2", "198.51.100.1, not-an-ip, 10.3.3.3", proxies, "10.3.3.3"},
		{"garbage right after peer", "10.0.0.2", "198.51.100.1, ???", proxies, "10.0.0.2"},
		{"spaces and empty elements", "10.0.0.2", " 198.51.100.1 ,", proxies, "10.0.0.2"},
		{"hop with port", "10.0.0.2", "198.51.100.1:4711", proxies, "198.51.100.1"},
		{"ipv6 hop with port", "10.0.0.2", "[2001:db9::1]:443", proxies, "2001:db9::1"},
		{"ipv6 hop bracketed", "10.0.0.2", "[2001:db9::1]", proxies, "2001:db9::1"},
		{"ipv6 trusted peer", "2001:db8::5", "203.0.113.9", proxies, "203.0.113.9"},
		{"ipv4-mapped peer trusted", "::ffff:10.0.0.2", "203.0.113.9", proxies, "203.0.113.9"},
		{"ipv4-mapped hop normalised", "10.0.0.2", "::ffff:203.0.113.9", proxies, "203.0.113.9"},
		{"similar but untrusted peer", "192.168.1.2", "203.0.113.9", proxies, "192.168.1.2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := clientIP(net.ParseIP(tc.peer), tc.xff, tc.trusted); got != tc.want {
				t.Fatalf("clientIP(%s, %q) = %q, want %q", tc.peer, tc.xff, got, tc.want)
			}
		})
	}
	if got := clientIP(nil, "1.2.3.4", proxies); got != "" {
		t.Fatalf("nil peer: %q", got)
	}
}

func TestClientIPFromFiber(t *testing.T) {
	trusted := mustTrusted(t, "0.0.0.0/32")
	app := fiber.New()
	app.Get("/", func(c fiber.Ctx) error {
		return c.JSON(map[string]string{
			"untrusted": ClientIP(c, nil),
			"trusted":   ClientIP(c, trusted),
		})
	})
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Add("X-Forwarded-For", "6.6.6.6, 198.51.100.1")
	req.Header.Add("X-Forwarded-For", "198.51.100.2")
	resp, err := app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got["untrusted"] != "0.0.0.0" || got["trusted"] != "198.51.100.2" {
		t.Fatalf("%v", got)
	}
}

func TestParseTrusted(t *testing.T) {
	nets, err := ParseTrusted([]string{" 10.0.0.1 ", "", "172.16.0.0/12", "::1", "2001:db8::/48", "::ffff:192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.1/32", "172.16.0.0/12", "::1/128", "2001:db8::/48", "192.0.2.1/32"}
	if len(nets) != len(want) {
		t.Fatalf("%v", nets)
	}
	for i, n := range nets {
		if n.String() != want[i] {
			t.Fatalf("entry %d = %s, want %s", i, n, want[i])
		}
	}
	for _, bad := range []string{"10.0.0", "10.0.0.0/33", "example.com", "1.2.3.4/x"} {
		if _, err := ParseTrusted([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
	if nets, err := ParseTrusted(nil); err != nil || len(nets) != 0 {
		t.Fatalf("empty: %v %v", nets, err)
	}
}
