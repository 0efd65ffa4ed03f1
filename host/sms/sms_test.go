package sms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/errcode"
)

func TestMaskPhone(t *testing.T) {
	for in, want := range map[string]string{
		"13812341234":    "138****1234",
		" 13812341234 ":  "138****1234",
		"+8613812341234": "+86****1234",
		"1234567":        "12****67",
		"0123456789":     "01****89",
		"123456":         "****",
		"1":              "****",
		"":               "",
	} {
		if got := MaskPhone(in); got != want {
			t.Errorf("MaskPhone(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLogSender(t *testing.T) {
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace})
	if err := (LogSender{Log: log}).Send(context.Background(), "13812341234", "482913"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"[WARN]", "development SMS sender", "138****1234", "482913"} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "13812341234") {
		t.Errorf("log carries the full phone: %q", out)
	}
	// A nil logger falls back to the default one instead of panicking.
	if err := (LogSender{}).Send(context.Background(), "13812341234", "1"); err != nil {
		t.Fatal(err)
	}
}

const secret = "s3cr3t-Hook-Value"

func TestWebhookSendsJSONWithSecretHeader(t *testing.T) {
	type seen struct {
		method, ctype, hdr, custom string
		body                       map[string]string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]string
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Errorf("body %q: %v", raw, err)
		}
		got <- seen{r.Method, r.Header.Get("Content-Type"), r.Header.Get("X-Webhook-Secret"), r.Header.Get("X-Custom"), b}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	if err := NewWebhookSender(srv.URL, "", secret, nil).Send(context.Background(), "13812341234", "123456"); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if s.method != http.MethodPost || !strings.HasPrefix(s.ctype, "application/json") {
		t.Fatalf("method %s, content type %q", s.method, s.ctype)
	}
	if s.hdr != secret {
		t.Fatalf("default header carries %q", s.hdr)
	}
	want := map[string]string{"phone": "13812341234", "code": "123456", "template": "login"}
	if len(s.body) != len(want) {
		t.Fatalf("body %v", s.body)
	}
	for k, v := range want {
		if s.body[k] != v {
			t.Fatalf("body %v, want %v", s.body, want)
		}
	}

	// A configured header name replaces the default.
	if err := NewWebhookSender(srv.URL, "X-Custom", secret, srv.Client()).Send(context.Background(), "1", "2"); err != nil {
		t.Fatal(err)
	}
	s = <-got
	if s.custom != secret || s.hdr != "" {
		t.Fatalf("custom header %q, default header %q", s.custom, s.hdr)
	}
}

func TestWebhookServerErrorHidesSecret(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A gateway that echoes the request in its error body.
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("bad request with secret " + r.Header.Get("X-Webhook-Secret")))
	}))
	defer srv.Close()
	err := NewWebhookSender(srv.URL, "", secret, nil).Send(context.Background(), "13812341234", "123456")
	if err == nil {
		t.Fatal("500 accepted")
	}
	if !strings.Contains(err.Error(), "500") {
		t.Fatalf("error %q lacks the status", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "123456") {
		t.Fatalf("error %q leaks the secret or the code", err)
	}
}

func TestWebhookRedirectIsFailure(t *testing.T) {
	var followed atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		followed.Store(true)
	}))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()

	// Even a caller's client that would follow redirects is overridden.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	err := NewWebhookSender(srv.URL, "", secret, client).Send(context.Background(), "1", "2")
	if err == nil || !strings.Contains(err.Error(), "307") {
		t.Fatalf("redirect: err = %v", err)
	}
	if followed.Load() {
		t.Fatal("redirect was followed (the secret would travel to another host)")
	}
	if client.CheckRedirect == nil || client.Timeout != 0 {
		t.Fatal("caller's client was modified")
	}
}

func TestWebhookTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	start := time.Now()
	err := NewWebhookSender(srv.URL, "", secret, &http.Client{Timeout: 150 * time.Millisecond}).Send(context.Background(), "1", "2")
	if err == nil {
		t.Fatal("slow server accepted")
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("timeout took %v", el)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("error %q leaks the secret", err)
	}

	// The caller's context bounds the call too.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := NewWebhookSender(srv.URL, "", secret, nil).Send(ctx, "1", "2"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("context deadline: err = %v", err)
	}

	// Default timeout is 5 s.
	if w := NewWebhookSender(srv.URL, "", secret, nil); w.timeout != DefaultWebhookTimeout || w.client.Timeout != DefaultWebhookTimeout {
		t.Fatalf("default timeout %v/%v", w.timeout, w.client.Timeout)
	}
}

func TestWebhookLargeResponseAndBadURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("x"), 1<<20))
	}))
	defer srv.Close()
	if err := NewWebhookSender(srv.URL, "", secret, nil).Send(context.Background(), "1", "2"); err != nil {
		t.Fatalf("large 200 answer: %v", err)
	}
	for _, u := range []string{"", "ftp://example.com/x", "/relative", "http://"} {
		if err := NewWebhookSender(u, "", secret, nil).Send(context.Background(), "1", "2"); err == nil {
			t.Errorf("url %q accepted", u)
		}
	}
	// Connection refused: error names no secret.
	dead := httptest.NewServer(http.NotFoundHandler())
	addr := dead.URL
	dead.Close()
	err := NewWebhookSender(addr+"/hook?token=abc", "", secret, nil).Send(context.Background(), "1", "2")
	if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "token=abc") {
		t.Fatalf("refused: err = %v", err)
	}
}

// Codes.

func wantCode(t *testing.T, err error, code errcode.Code) {
	t.Helper()
	_ = wantError(t, err, code) // only the code matters here
}

// wantError is wantCode returning the business error for further checks.
func wantError(t *testing.T, err error, code errcode.Code) *errcode.Error {
	t.Helper()
	e, ok := errcode.As(err)
	if !ok || e.Code != code {
		t.Fatalf("err = %v, want code %d", err, code)
	}
	return e
}

func otherCode(code string) string {
	b := []byte(code)
	b[0] = '0' + (b[0]-'0'+1)%10
	return string(b)
}

func TestCodesIssueAndCheckOnce(t *testing.T) {
	store := newFakeStore()
	codes := New(store, CodeOptions{})
	ctx := context.Background()
	code, err := codes.Issue(ctx, "login", "13812341234")
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != 6 || !allDigits(code) {
		t.Fatalf("code %q", code)
	}
	if err := codes.Check(ctx, "login", "13812341234", code); err != nil {
		t.Fatalf("right code: %v", err)
	}
	wantCode(t, codes.Check(ctx, "login", "13812341234", code), errcode.SmsCodeExpired)

	// Phone numbers are not cache keys.
	for _, k := range store.Keys() {
		if strings.Contains(k, "13812341234") {
			t.Errorf("key %q carries the phone", k)
		}
	}

	o := codes.Options()
	if o.Length != 6 || o.TTL != 5*time.Minute || o.MaxAttempts != 5 || o.ResendInterval != time.Minute {
		t.Fatalf("defaults %+v", o)
	}
}

func TestCodesUnknown(t *testing.T) {
	codes := New(newFakeStore(), CodeOptions{})
	wantCode(t, codes.Check(context.Background(), "login", "13812341234", "123456"), errcode.SmsCodeExpired)
}

func TestCodesWrongAttempts(t *testing.T) {
	store := newFakeStore()
	codes := New(store, CodeOptions{})
	ctx := context.Background()
	code, _ := codes.Issue(ctx, "login", "p")
	wrong := otherCode(code)
	for left := 4; left >= 0; left-- {
		e := wantError(t, codes.Check(ctx, "login", "p", wrong), errcode.SmsCodeWrong)
		if e.Args["attemptsLeft"] != left {
			t.Fatalf("attemptsLeft = %v, want %d", e.Args["attemptsLeft"], left)
		}
	}
	// Dead now, even for the right code.
	wantCode(t, codes.Check(ctx, "login", "p", code), errcode.SmsCodeExpired)
	wantCode(t, codes.Check(ctx, "login", "p", wrong), errcode.SmsCodeExpired)
}

func TestCodesWrongThenRight(t *testing.T) {
	codes := New(newFakeStore(), CodeOptions{})
	ctx := context.Background()
	code, _ := codes.Issue(ctx, "login", "p")
	for _, bad := range []string{otherCode(code), "", "12345", "1234567", "abcdef"} {
		wantCode(t, codes.Check(ctx, "login", "p", bad), errcode.SmsCodeWrong)
	}
	// Five attempts used: the right code comes too late.
	wantCode(t, codes.Check(ctx, "login", "p", code), errcode.SmsCodeExpired)

	code, _ = codes.Issue(context.Background(), "login", "q")
	wantCode(t, codes.Check(ctx, "login", "q", otherCode(code)), errcode.SmsCodeWrong)
	if err := codes.Check(ctx, "login", "q", code); err != nil {
		t.Fatalf("right after one wrong: %v", err)
	}
}

func TestCodesExpire(t *testing.T) {
	store := newFakeStore()
	codes := New(store, CodeOptions{TTL: time.Minute, ResendInterval: 10 * time.Second})
	ctx := context.Background()
	code, _ := codes.Issue(ctx, "login", "p")
	store.Advance(61 * time.Second)
	wantCode(t, codes.Check(ctx, "login", "p", code), errcode.SmsCodeExpired)
}

func TestCodesResendInterval(t *testing.T) {
	store := newFakeStore()
	codes := New(store, CodeOptions{})
	ctx := context.Background()
	first, err := codes.Issue(ctx, "login", "p")
	if err != nil {
		t.Fatal(err)
	}
	store.Advance(20 * time.Second)
	_, err = codes.Issue(ctx, "login", "p")
	e := wantError(t, err, errcode.TooManyRequests)
	if e.Args["retryAfterSeconds"] != 40 {
		t.Fatalf("retryAfterSeconds = %v, want 40", e.Args["retryAfterSeconds"])
	}
	if e.HTTPStatus() != http.StatusTooManyRequests {
		t.Fatalf("status %d", e.HTTPStatus())
	}
	// Other purposes and phones are not gated.
	if _, err := codes.Issue(ctx, "bind", "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := codes.Issue(ctx, "login", "other"); err != nil {
		t.Fatal(err)
	}
	// The first code is still good inside the interval (not consumed here).
	store.Advance(40 * time.Second)
	second, err := codes.Issue(ctx, "login", "p")
	if err != nil {
		t.Fatalf("after the interval: %v", err)
	}
	// The new code retires the old one.
	if first != second {
		wantCode(t, codes.Check(ctx, "login", "p", first), errcode.SmsCodeWrong)
	}
	if err := codes.Check(ctx, "login", "p", second); err != nil {
		t.Fatalf("new code: %v", err)
	}
}

func TestCodesResendGateParallel(t *testing.T) {
	codes := New(newFakeStore(), CodeOptions{})
	var ok, limited atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := codes.Issue(context.Background(), "login", "p")
			if err == nil {
				ok.Add(1)
			} else if e, biz := errcode.As(err); biz && e.Code == errcode.TooManyRequests {
				limited.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || limited.Load() != 19 {
		t.Fatalf("issued %d, limited %d", ok.Load(), limited.Load())
	}
}

func TestCodesParallelRightExactlyOnce(t *testing.T) {
	for round := range 20 {
		store := newFakeStore()
		codes := New(store, CodeOptions{})
		ctx := context.Background()
		code, _ := codes.Issue(ctx, "login", "p")
		var ok, other atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 20 {
			wg.Go(func() {
				<-start
				err := codes.Check(ctx, "login", "p", code)
				if err == nil {
					ok.Add(1)
					return
				}
				if e, biz := errcode.As(err); biz && (e.Code == errcode.SmsCodeExpired || e.Code == errcode.SmsCodeWrong) {
					other.Add(1)
					return
				}
				t.Errorf("unexpected %v", err)
			})
		}
		close(start)
		wg.Wait()
		if ok.Load() != 1 || other.Load() != 19 {
			t.Fatalf("round %d: %d successes, %d failures", round, ok.Load(), other.Load())
		}
		wantCode(t, codes.Check(ctx, "login", "p", code), errcode.SmsCodeExpired)
	}
}

func TestCodesParallelGuessesBounded(t *testing.T) {
	store := newFakeStore()
	codes := New(store, CodeOptions{})
	ctx := context.Background()
	code, _ := codes.Issue(ctx, "login", "p")
	var wrong, dead atomic.Int32
	var wg sync.WaitGroup
	for i := range 50 {
		guess := otherCode(code)
		if i%2 == 1 {
			guess = otherCode(guess)
		}
		wg.Go(func() {
			e, _ := errcode.As(codes.Check(ctx, "login", "p", guess))
			switch {
			case e == nil:
				t.Error("a wrong guess succeeded")
			case e.Code == errcode.SmsCodeWrong:
				wrong.Add(1)
			case e.Code == errcode.SmsCodeExpired:
				dead.Add(1)
			}
		})
	}
	wg.Wait()
	if wrong.Load() != 5 || dead.Load() != 45 {
		t.Fatalf("compared %d guesses (want 5), rejected %d", wrong.Load(), dead.Load())
	}
	wantCode(t, codes.Check(ctx, "login", "p", code), errcode.SmsCodeExpired)
}

func TestCodesPurposeAndPhoneIsolation(t *testing.T) {
	store := newFakeStore()
	codes := New(store, CodeOptions{})
	ctx := context.Background()
	a, _ := codes.Issue(ctx, "login", "p")
	b, _ := codes.Issue(ctx, "bind", "p")
	if err := codes.Check(ctx, "bind", "p", a); a != b && err == nil {
		t.Fatal("login code accepted for bind")
	}
	wantCode(t, codes.Check(ctx, "login", "other", a), errcode.SmsCodeExpired)
	if err := codes.Check(ctx, "login", "p", a); err != nil {
		t.Fatal(err)
	}
}

func TestCodesRevokeAndStoreFailure(t *testing.T) {
	store := newFakeStore()
	codes := New(store, CodeOptions{})
	ctx := context.Background()
	code, _ := codes.Issue(ctx, "login", "p")
	if err := codes.Revoke(ctx, "login", "p"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, codes.Check(ctx, "login", "p", code), errcode.SmsCodeExpired)
	if _, err := codes.Issue(ctx, "login", "p"); err != nil {
		t.Fatalf("issue after revoke: %v", err)
	}

	store.Fail(errors.New("cache down"))
	if err := codes.Check(ctx, "login", "p", code); err == nil {
		t.Fatal("check passed with a failing cache")
	} else if _, biz := errcode.As(err); biz {
		t.Fatalf("cache failure reported as %v", err)
	}
	if _, err := codes.Issue(ctx, "login", "z"); err == nil {
		t.Fatal("issue passed with a failing cache")
	}
}

func TestRandomDigits(t *testing.T) {
	seen := map[rune]bool{}
	for range 200 {
		c, err := randomDigits(6)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c {
			seen[r] = true
		}
	}
	if len(seen) != 10 {
		t.Fatalf("digits seen: %d", len(seen))
	}
}
