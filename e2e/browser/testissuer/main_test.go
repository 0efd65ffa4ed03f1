package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAuthorize checks what the browser suite relies on: the account comes
// from login= or the oidctest_login cookie (created on first use), and the
// oidctest_consent cookie stops at a page whose form resubmits the request.
func TestAuthorize(t *testing.T) {
	is, err := start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(is.Close)
	redirect := "http://api.example.test:1/cb?x=<y>"
	base := url.Values{
		"client_id": {is.ClientID}, "response_type": {"code"}, "redirect_uri": {redirect}, "state": {"s1"},
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	tests := []struct {
		name       string
		query      url.Values
		cookies    map[string]string
		wantCode   int
		wantUser   string // an account that must exist afterwards
		wantInBody []string
	}{
		{name: "default user", wantCode: http.StatusFound, wantUser: "alice"},
		{name: "login from the query", query: url.Values{"login": {"qq_user"}}, wantCode: http.StatusFound, wantUser: "qq_user"},
		{name: "login from the cookie", cookies: map[string]string{loginCookie: "cookie_user"}, wantCode: http.StatusFound, wantUser: "cookie_user"},
		{
			name: "consent page", cookies: map[string]string{loginCookie: "bob", consentCookie: "1"}, wantCode: http.StatusOK, wantUser: "bob",
			wantInBody: []string{`id="continue"`, `name="consent" value="1"`, `name="login" value="bob"`, `value="http://api.example.test:1/cb?x=&lt;y&gt;"`},
		},
		{name: "consent given", query: url.Values{"consent": {"1"}}, cookies: map[string]string{consentCookie: "1"}, wantCode: http.StatusFound, wantUser: "alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := url.Values{}
			for k, v := range base {
				q[k] = v
			}
			for k, v := range tt.query {
				q[k] = v
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, is.URL+"/authorize?"+q.Encode(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.cookies {
				req.AddCookie(&http.Cookie{Name: k, Value: v})
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("HTTP %d, want %d: %s", resp.StatusCode, tt.wantCode, body)
			}
			if tt.wantCode == http.StatusFound {
				loc, err := url.Parse(resp.Header.Get("Location"))
				if err != nil || !strings.HasPrefix(loc.String(), "http://api.example.test:1/cb?") || loc.Query().Get("code") == "" || loc.Query().Get("state") != "s1" {
					t.Errorf("Location = %q, want the redirect URI with a code and the state", resp.Header.Get("Location"))
				}
			}
			if !is.HasUser(tt.wantUser) {
				t.Errorf("account %q does not exist", tt.wantUser)
			}
			for _, want := range tt.wantInBody {
				if !strings.Contains(string(body), want) {
					t.Errorf("page lacks %s:\n%s", want, body)
				}
			}
		})
	}
}
