package vendorhttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/pluginsdk"
)

func TestDecodeJSON(t *testing.T) {
	var v struct {
		UserID string `json:"userid"`
	}
	tests := []struct {
		body string
		ok   bool
		want string
	}{
		{`{"userid":"a"}`, true, "a"},
		{"\xef\xbb\xbf  {\"UserId\":\"legacy\"}\n", true, "legacy"},
		{``, false, ""},
		{`[1]`, false, ""},
		{`<html>`, false, ""},
		{`{"userid":"a"} {"userid":"b"}`, false, ""},
		{`{"userid":`, false, ""},
	}
	for _, tt := range tests {
		v.UserID = ""
		err := DecodeJSON([]byte(tt.body), &v)
		if (err == nil) != tt.ok || (tt.ok && v.UserID != tt.want) {
			t.Errorf("DecodeJSON(%q) = %v, %q", tt.body, err, v.UserID)
		}
	}
}

func TestSettings(t *testing.T) {
	s := pluginsdk.Settings{"corpid": " ww1 ", "ApiBase": "https://x.example/api/", "Flag": "TRUE", "Empty": ""}
	if v, ok := Setting(s, "CorpId"); !ok || v != "ww1" {
		t.Errorf("Setting(CorpId) = %q, %v", v, ok)
	}
	if v := First(s, "Missing", "Empty", "CORPID"); v != "ww1" {
		t.Errorf("First = %q", v)
	}
	if v, err := Base(s, "ApiBase", "d"); err != nil || v != "https://x.example/api" {
		t.Errorf("Base = %q, %v", v, err)
	}
	if v, err := Base(s, "Other", "https://def"); err != nil || v != "https://def" {
		t.Errorf("Base default = %q, %v", v, err)
	}
	for _, bad := range []string{"x.example", "ftp://x", "https://x/?q", "https://x/#f", "https://u:p@x", "https://"} {
		if _, err := Base(pluginsdk.Settings{"B": bad}, "B", ""); err == nil {
			t.Errorf("Base accepted %q", bad)
		}
	}
	if b, err := Bool(s, "flag", false); err != nil || !b {
		t.Errorf("Bool = %v, %v", b, err)
	}
	if _, err := Bool(pluginsdk.Settings{"F": "yes"}, "F", false); err == nil {
		t.Error("Bool accepted yes")
	}
	var pe *pluginsdk.ProviderError
	if err := Misconfigured("x", "bad %s", "thing"); !errors.As(err, &pe) || pe.Kind != pluginsdk.Misconfigured || pe.Message != "x: bad thing" {
		t.Errorf("Misconfigured = %v", err)
	}
}

func TestValidators(t *testing.T) {
	for s, want := range map[string]bool{"abcXYZ019": true, "": false, "a-b": false, "a b": false, strings.Repeat("a", 128): true, strings.Repeat("a", 129): false} {
		if ValidState(s) != want {
			t.Errorf("ValidState(%q) != %v", s, want)
		}
	}
	for s, want := range map[string]bool{"https://h/cb": true, "http://h:8080/cb?x=1": true, "/cb": false, "https://h/cb#f": false, "javascript:alert(1)": false} {
		if ValidRedirect(s) != want {
			t.Errorf("ValidRedirect(%q) != %v", s, want)
		}
	}
	for s, want := range map[string]bool{"abc": true, "": false, "a b": false, "a\x7f": false, "é": false} {
		if ValidCode(s, 10) != want {
			t.Errorf("ValidCode(%q) != %v", s, want)
		}
	}
	if ValidCode(strings.Repeat("a", 11), 10) {
		t.Error("ValidCode accepted an overlong code")
	}
	for s, want := range map[string]bool{"zhangsan": true, "张三": true, "": false, " a": false, "a\nb": false, "\xff": false, strings.Repeat("a", 257): false} {
		if ValidSubject(s) != want {
			t.Errorf("ValidSubject(%q) != %v", s, want)
		}
	}
}

func TestClean(t *testing.T) {
	if got := Clean("token=S3CRET and S3CRET\n", 100, "S3CRET", "ab"); got != "token=*** and *** " {
		t.Errorf("Clean = %q", got)
	}
	if got := Clean("张三张三", 4, ""); got != "张…" {
		t.Errorf("Clean clip = %q", got)
	}
}

// TestDo reads bodies up to the cap, refuses larger ones and redirects, and
// reports a timeout without the query. Nothing depends on the machine's
// speed: the body cases get a client whose timeout never matters, and the
// timeout case a server that does not answer until the test releases it.
func TestDo(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(strings.Repeat("a", MaxBodyBytes)))
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("a", MaxBodyBytes+1)))
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/blocked":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	}))
	defer srv.Close()
	defer close(release) // before srv.Close, which waits for the handlers
	ctx := context.Background()

	patient := NewClient(time.Hour)
	tests := []struct {
		name  string
		path  string
		check func(r *Response, err error) bool
	}{
		{"exactly the cap", "/ok", func(r *Response, err error) bool { return err == nil && r.OK() && len(r.Body) == MaxBodyBytes }},
		{"over the cap", "/big", func(_ *Response, err error) bool { return errors.Is(err, ErrBodyTooLarge) }},
		{"redirect not followed", "/redirect", func(r *Response, err error) bool {
			return err == nil && r.Status == http.StatusFound && !r.OK() && strings.Contains(r.Describe(), "redirect not followed")
		}},
	}
	for _, tt := range tests {
		r, err := Get(ctx, patient, srv.URL, tt.path, nil, nil)
		if !tt.check(r, err) {
			t.Errorf("%s: %+v, %v", tt.name, r, err)
		}
	}

	// The server holds /blocked until the test ends: only the client's
	// timeout ends the call, however loaded the machine is.
	_, err := Get(ctx, NewClient(50*time.Millisecond), srv.URL, "/blocked", url.Values{"secret": {"S3CRET"}}, nil)
	var te *TransportError
	if !errors.As(err, &te) || te.Path != "/blocked" || strings.Contains(err.Error(), "S3CRET") || strings.Contains(err.Error(), "secret=") {
		t.Errorf("timeout error = %v; want a TransportError without the query", err)
	}

	id := pluginsdk.Identity{Subject: "s"}
	if resp, err := Finish("x", id, nil); err != nil || resp.Identity == nil || resp.Identity.Subject != "s" {
		t.Errorf("Finish(ok) = %+v, %v", resp, err)
	}
	if resp, err := Finish("x", id, Fail(pluginsdk.Denied, "no")); err != nil || resp.Error == nil || resp.Error.Kind != pluginsdk.Denied || resp.Identity != nil {
		t.Errorf("Finish(fail) = %+v, %v", resp, err)
	}
	if resp, err := Finish("x", id, ErrBodyTooLarge); err != nil || resp.Error == nil || resp.Error.Kind != pluginsdk.ExchangeFailed {
		t.Errorf("Finish(too large) = %+v, %v", resp, err)
	}
	if resp, err := Finish("x", id, te); err == nil || resp.Identity != nil || resp.Error != nil || !strings.HasPrefix(err.Error(), "x: ") {
		t.Errorf("Finish(transport) = %+v, %v", resp, err)
	}
}
