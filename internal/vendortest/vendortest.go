// Package vendortest holds test helpers shared by the vendor plugins'
// tests: a browser that stops at the first redirect, and a log sink checked
// for secrets; and the setup the provider doctor's and the providers
// command's tests share (doctor.go: report helpers and the code_host
// settings for the GitHub fake; plugin.go: plugin binaries built once). The
// fake vendors are in vendorfake. Only tests import it (host tests too;
// .golangci.yml keeps it out of host code).
package vendortest

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Browser is a client that stops at the first redirect, like a test playing
// the user's browser against a fake authorization page.
var Browser = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Follow opens authorizeURL (without its fragment, which never reaches a
// server) and returns the Location the page redirects to; it fails the test
// unless the page answers 302.
func Follow(t testing.TB, authorizeURL string) *url.URL {
	t.Helper()
	u, _, _ := strings.Cut(authorizeURL, "#")
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatalf("authorize URL %q: %v", authorizeURL, err)
	}
	resp, err := Browser.Do(req)
	if err != nil {
		t.Fatalf("authorize page: %v", err)
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize page answered %d (%s), want a redirect", resp.StatusCode, strings.TrimSpace(body.String()))
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// Callback checks that loc is redirectURI with state and returns its query
// as the kernel hands it to Exchange (first value of each parameter).
func Callback(t testing.TB, loc *url.URL, redirectURI, state string) map[string]string {
	t.Helper()
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirectURI {
		t.Fatalf("redirected to %s, want %s", got, redirectURI)
	}
	q := map[string]string{}
	for k, v := range loc.Query() {
		q[k] = v[0]
	}
	if q["state"] != state {
		t.Fatalf("callback state = %q, want %q", q["state"], state)
	}
	return q
}

// LogBuffer collects a provider's log output.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Logger returns a trace-level logger writing into a buffer and registers a
// cleanup that fails the test if the log contains any of the values
// secrets returns at the end of the test (secrets, tokens, codes).
func Logger(t testing.TB, secrets func() []string) hclog.Logger {
	t.Helper()
	buf := &LogBuffer{}
	t.Cleanup(func() {
		out := buf.String()
		for _, s := range secrets() {
			if len(s) >= 4 && strings.Contains(out, s) {
				t.Errorf("the log contains a secret, token or code %q:\n%s", s, out)
			}
		}
	})
	return hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Trace})
}

// NoSecrets fails the test if text contains any of secrets.
func NoSecrets(t testing.TB, what, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if len(s) >= 4 && strings.Contains(text, s) {
			t.Errorf("%s %q contains a secret, token or code %q", what, text, s)
		}
	}
}

// Login returns a providertest Options.Login: it opens the authorization URL
// at the fake vendor (which plays the user) and returns the callback query,
// after checking that the vendor redirects to redirectURI with the state
// found in the authorization URL.
func Login(redirectURI string) func(t *testing.T, authorizeURL string) map[string]string {
	return func(t *testing.T, authorizeURL string) map[string]string {
		t.Helper()
		u, err := url.Parse(authorizeURL)
		if err != nil {
			t.Fatalf("authorize URL %q: %v", authorizeURL, err)
		}
		return Callback(t, Follow(t, authorizeURL), redirectURI, u.Query().Get("state"))
	}
}
