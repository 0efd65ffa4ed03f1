package fakevendor_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/pluginsdk/providertest/fakevendor"
)

const (
	redirect = "https://kernel.example/cb"
	verifier = "a-verifier-of-at-least-43-characters-0123456789"
)

func challenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func authorizeURL(v *fakevendor.Vendor, extra url.Values) string {
	q := url.Values{"response_type": {"code"}, "client_id": {v.ClientID}, "redirect_uri": {redirect}, "state": {"st1"},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}}
	for k, vs := range extra {
		q[k] = vs
	}
	return v.URL + "/oauth/authorize?" + q.Encode()
}

// post sends a token request and returns the status and the decoded body.
func post(t *testing.T, v *fakevendor.Vendor, form url.Values, basic bool) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, v.URL+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(v.ClientID, v.ClientSecret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func userinfo(t *testing.T, v *fakevendor.Vendor, token string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, v.URL+"/oauth/userinfo", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

func TestCodeFlowWithPKCE(t *testing.T) {
	t.Parallel()
	v := fakevendor.New(t, "app-1", "s3cret-value")
	v.AddUser(fakevendor.User{ID: "u-42", Username: "wile", Name: "Wile E.", Email: "wile@acme.example"})
	v.AddUser(fakevendor.User{ID: "u-7", Username: "road", Blocked: true})
	form := func(code string, f func(url.Values)) url.Values {
		q := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {verifier}}
		if f != nil {
			f(q)
		}
		return q
	}

	cb := v.Login("wile")(t, authorizeURL(v, nil))
	if cb["state"] != "st1" || cb["code"] == "" || cb["error"] != "" {
		t.Fatalf("callback = %v; want a code and the state", cb)
	}
	// A code is spent by any token request that names it, as at strict
	// vendors: each refusal below uses a fresh one.
	status, body := post(t, v, form(cb["code"], nil), true)
	if status != http.StatusOK || body["token_type"] != "Bearer" || body["access_token"] == "" {
		t.Fatalf("token = %d %v", status, body)
	}
	status, info := userinfo(t, v, body["access_token"].(string))
	if status != http.StatusOK || info["sub"] != "u-42" || info["preferred_username"] != "wile" || info["email"] != "wile@acme.example" {
		t.Fatalf("userinfo = %d %v", status, info)
	}
	if status, body := post(t, v, form(cb["code"], nil), true); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("the same code again = %d %v; want invalid_grant", status, body)
	}
	if v.Calls("/oauth/token") != 2 || v.Calls("/oauth/authorize") != 1 {
		t.Errorf("calls: token %d, authorize %d", v.Calls("/oauth/token"), v.Calls("/oauth/authorize"))
	}

	cases := []struct {
		name   string
		form   func(code string) url.Values
		basic  bool
		status int
		err    string
	}{
		{"wrong verifier", func(c string) url.Values { return form(c, func(q url.Values) { q.Set("code_verifier", verifier+"x") }) }, true, 400, "invalid_grant"},
		{"no verifier", func(c string) url.Values { return form(c, func(q url.Values) { q.Del("code_verifier") }) }, true, 400, "invalid_grant"},
		{"other redirect URI", func(c string) url.Values { return form(c, func(q url.Values) { q.Set("redirect_uri", redirect+"2") }) }, true, 400, "invalid_grant"},
		{"wrong secret in the form", func(c string) url.Values {
			return form(c, func(q url.Values) { q.Set("client_id", "app-1"); q.Set("client_secret", "nope") })
		}, false, 401, "invalid_client"},
		{"secret in the form", func(c string) url.Values {
			return form(c, func(q url.Values) { q.Set("client_id", "app-1"); q.Set("client_secret", "s3cret-value") })
		}, false, 200, ""},
		{"other grant type", func(c string) url.Values { return form(c, func(q url.Values) { q.Set("grant_type", "password") }) }, true, 400, "unsupported_grant_type"},
		{"unknown code", func(string) url.Values { return form("forged-code", nil) }, true, 400, "invalid_grant"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cb := v.Login("wile")(t, authorizeURL(v, nil))
			status, body := post(t, v, c.form(cb["code"]), c.basic)
			if status != c.status || (c.err != "" && body["error"] != c.err) {
				t.Errorf("token = %d %v; want %d %s", status, body, c.status, c.err)
			}
		})
	}

	t.Run("blocked user", func(t *testing.T) {
		cb := v.Login("road")(t, authorizeURL(v, nil))
		if status, body := post(t, v, form(cb["code"], nil), true); status != 400 || body["error"] != "access_denied" {
			t.Errorf("token for a blocked user = %d %v; want access_denied", status, body)
		}
	})
	t.Run("unknown user is denied at the authorization page", func(t *testing.T) {
		if cb := v.Login("nobody")(t, authorizeURL(v, nil)); cb["error"] != "access_denied" || cb["code"] != "" || cb["state"] != "st1" {
			t.Errorf("callback = %v; want error=access_denied with the state", cb)
		}
	})
	t.Run("plain PKCE is refused", func(t *testing.T) {
		cb := v.Login("wile")(t, authorizeURL(v, url.Values{"code_challenge_method": {"plain"}, "code_challenge": {verifier}}))
		if cb["error"] != "invalid_request" || cb["code"] != "" {
			t.Errorf("callback = %v; want error=invalid_request", cb)
		}
	})
	t.Run("renamed user keeps the id", func(t *testing.T) {
		v.Rename("wile", "coyote")
		cb := v.Login("coyote")(t, authorizeURL(v, nil))
		_, tok := post(t, v, form(cb["code"], nil), true)
		if _, info := userinfo(t, v, tok["access_token"].(string)); info["sub"] != "u-42" || info["preferred_username"] != "coyote" {
			t.Errorf("userinfo after a rename = %v", info)
		}
		v.Rename("coyote", "wile")
	})
	t.Run("unknown access token", func(t *testing.T) {
		if status, body := userinfo(t, v, "forged"); status != 401 || body["error"] != "invalid_token" {
			t.Errorf("userinfo = %d %v; want 401 invalid_token", status, body)
		}
	})
}
