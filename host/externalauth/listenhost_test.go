package externalauth_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// In Development without CallbackBaseUrl the redirect URI is taken from
// the request only when its Host names the listen address: a page on
// evil.example cannot make the kernel register a redirect URI on
// evil.example (before, any Host did).
func TestRedirectURIHostMustNameTheListenAddress(t *testing.T) {
	is := oidctest.New(t)
	k := kerneltest.Start(t, append(oidcEnv(is, 0, "corp"), "Service__Http__ListenAddress=http://localhost:5100"))
	tests := []struct {
		host, want string
	}{
		{"evil.example", ""},
		{"evil.example:5100", ""},
		{"localhost:5101", ""},
		{"localhost:5100", "http://localhost:5100/api/v1/auth/external/corp/callback"},
		{"127.0.0.1:5100", "http://127.0.0.1:5100/api/v1/auth/external/corp/callback"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			req := httptest.NewRequestWithContext(t.Context(), "GET", base+"/corp/authorize", nil)
			req.Host = tt.host
			r := k.Send(req)
			if tt.want == "" {
				r.Expect(t, "authorize with Host "+tt.host, 400, 48002)
				if strings.Contains(r.Raw, "evil.example") || r.Header.Get("Location") != "" {
					t.Fatalf("refused authorize names the host or redirects: %s %v", r.Raw, r.Header)
				}
				return
			}
			if got := location(t, r).Query().Get("redirect_uri"); got != tt.want {
				t.Fatalf("redirect_uri = %q, want %q", got, tt.want)
			}
		})
	}
	if !strings.Contains(k.Log(), "CallbackBaseUrl") {
		t.Errorf("the refusal is not logged with its remedy:\n%s", k.Log())
	}

	// On a real listener the address the connection arrived on counts too
	// (a wildcard listen address reached through one of the machine's IPs).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.ServeListener(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving: %v", err)
		}
	}()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct {
		host   string
		status int
	}{
		{ln.Addr().String(), http.StatusFound},
		{"evil.example:" + strings.Split(ln.Addr().String(), ":")[1], http.StatusBadRequest},
	} {
		req, err := http.NewRequestWithContext(t.Context(), "GET", "http://"+ln.Addr().String()+base+"/corp/authorize", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = tt.host
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("Host %s on the real listener: HTTP %d, want %d", tt.host, resp.StatusCode, tt.status)
		}
		if loc := resp.Header.Get("Location"); tt.status == http.StatusFound && !strings.Contains(loc, "redirect_uri=http%3A%2F%2F"+strings.ReplaceAll(ln.Addr().String(), ":", "%3A")) {
			t.Errorf("Location %q does not carry the listener's address as redirect_uri", loc)
		}
	}
}
