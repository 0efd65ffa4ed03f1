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

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(strings.Repeat("a", MaxBodyBytes)))
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("a", MaxBodyBytes+1)))
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	}))
	defer srv.Close()
	c := NewClient(200 * time.Millisecond)
	ctx := context.Background()

	r, err := Get(ctx, c, srv.URL, "/ok", nil, nil)
	if err != nil || !r.OK() || len(r.Body) != MaxBodyBytes {
		t.Fatalf("exactly the cap: %v", err)
	}
	if _, err := Get(ctx, c, srv.URL, "/big", nil, nil); !errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("over the cap: %v", err)
	}
	r, err = Get(ctx, c, srv.URL, "/redirect", nil, nil)
	if err != nil || r.Status != http.StatusFound || r.OK() || !strings.Contains(r.Describe(), "redirect not followed") {
		t.Errorf("redirect: %+v, %v", r, err)
	}
	_, err = Get(ctx, c, srv.URL, "/slow", url.Values{"secret": {"S3CRET"}}, nil)
	var te *TransportError
	if !errors.As(err, &te) || te.Path != "/slow" || strings.Contains(err.Error(), "S3CRET") || strings.Contains(err.Error(), "secret=") {
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
