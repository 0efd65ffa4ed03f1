package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/bindproof"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/mfa"
)

// smsMfa drives the SMS second factor of one kernel: codes are read from
// the development sender's log lines.
type smsMfa struct {
	t *testing.T
	k *kerneltest.Kernel
}

var mfaCode = regexp.MustCompile(`code=(\d{6})`)

func newSmsMfa(t *testing.T) smsMfa {
	k := kerneltest.Start(t, nil)
	if err := k.Settings().Set(context.Background(), mfa.KeyMfaEnabled, "true"); err != nil {
		t.Fatal(err)
	}
	return smsMfa{t: t, k: k}
}

// user creates an account with a phone ("" for none).
func (m smsMfa) user(account, phone string) {
	m.t.Helper()
	uid := addUser(m.t, m.k, account, "Mfa#Pass123", 100000, false)
	if phone != "" {
		m.k.Ent().SysUser.UpdateOneID(uid).SetPhone(phone).ExecX(context.Background())
	}
}

// post sends a JSON body with the binder cookie when binder is not "".
func (m smsMfa) post(path, binder string, body any) kerneltest.Reply {
	m.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		m.t.Fatal(err)
	}
	req := httptest.NewRequestWithContext(m.t.Context(), http.MethodPost, path, strings.NewReader(string(raw)))
	req.Header.Set("Content-Type", "application/json")
	if binder != "" {
		req.AddCookie(&http.Cookie{Name: auth.MfaBinderCookie, Value: binder})
	}
	return m.k.Send(req)
}

// challenge is a 40009 answer: its id, the binder cookie and the code sent.
type challenge struct {
	id, binder, code string
	args             map[string]any
}

// login logs in with the password and expects signal 40009.
func (m smsMfa) login(account string, extra map[string]any) challenge {
	m.t.Helper()
	before := len(mfaCode.FindAllString(m.k.Log(), -1))
	body := map[string]any{"account": account, "password": "Mfa#Pass123"}
	for k, v := range extra {
		body[k] = v
	}
	r := m.post("/api/v1/auth/login", "", body).ExpectCode(m.t, "password login of "+account, errcode.SmsCodeRequired)
	if string(r.Data) != "" && string(r.Data) != "null" {
		m.t.Fatalf("signal with data %s", r.Data)
	}
	ch := challenge{args: r.Args}
	ch.id, _ = r.Args["challengeId"].(string)
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == auth.MfaBinderCookie {
			ch.binder = c.Value
		}
	}
	codes := mfaCode.FindAllStringSubmatch(m.k.Log(), -1)
	if len(codes) != before+1 {
		m.t.Fatalf("%d codes sent by the login, want 1", len(codes)-before)
	}
	ch.code = codes[len(codes)-1][1]
	return ch
}

func (m smsMfa) complete(ch challenge, binder, code string) kerneltest.Reply {
	m.t.Helper()
	return m.post("/api/v1/auth/login/sms", binder, map[string]any{"challengeId": ch.id, "code": code})
}

func wrongOf(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

func TestSmsSecondFactorOff(t *testing.T) {
	k := kerneltest.Start(t, nil)
	m := smsMfa{t: t, k: k}
	m.user("nomfa", "13900000010")
	m.post("/api/v1/auth/login", "", map[string]any{"account": "nomfa", "password": "Mfa#Pass123"}).Expect(t, "login with mfa off", 200, 0)
	if strings.Contains(k.Log(), "code=") {
		t.Error("an SMS code was sent with mfa off")
	}
}

func TestSmsSecondFactorSignal(t *testing.T) {
	m := newSmsMfa(t)
	m.user("erin", "13900000003")
	m.user("nophone", "")

	t.Run("a user without a phone logs in with the password", func(t *testing.T) {
		m.post("/api/v1/auth/login", "", map[string]any{"account": "nophone", "password": "Mfa#Pass123"}).Expect(t, "login", 200, 0)
	})
	t.Run("password only is refused with 40009 and its args", func(t *testing.T) {
		r := m.post("/api/v1/auth/login", "", map[string]any{"account": "erin", "password": "Mfa#Pass123"}).ExpectCode(t, "login", errcode.SmsCodeRequired)
		want := map[string]any{"phoneMask": "139****0003", "expiresSeconds": float64(300), "resendSeconds": float64(60)}
		for k, v := range want {
			if r.Args[k] != v {
				t.Errorf("args.%s = %v, want %v", k, r.Args[k], v)
			}
		}
		if id, _ := r.Args["challengeId"].(string); !bindproof.ValidToken(id) {
			t.Errorf("challengeId %q", r.Args["challengeId"])
		}
		sc := strings.ToLower(r.Header.Get("Set-Cookie"))
		for _, want := range []string{auth.MfaBinderCookie + "=", "httponly", "samesite=lax", "path=/api/v1/auth"} {
			if !strings.Contains(sc, want) {
				t.Errorf("Set-Cookie %q lacks %q", sc, want)
			}
		}
	})
	t.Run("a malformed binding challenge is refused", func(t *testing.T) {
		m.post("/api/v1/auth/login", "", map[string]any{"account": "erin", "password": "Mfa#Pass123", "bindingChallenge": "short"}).
			ExpectCode(t, "login", errcode.RequestInvalid)
	})
	t.Run("the phone number stays out of the log", func(t *testing.T) {
		if strings.Contains(m.k.Log(), "13900000003") {
			t.Error("the full phone number reached the log")
		}
	})
}

func TestSmsSecondFactorComplete(t *testing.T) {
	m := newSmsMfa(t)
	m.user("fay", "13900000004")
	ctx := context.Background()

	ch := m.login("fay", nil)
	r := m.complete(ch, ch.binder, wrongOf(ch.code)).ExpectCode(t, "wrong code", errcode.SmsCodeWrong)
	if r.Args["attemptsLeft"] != float64(4) {
		t.Errorf("attemptsLeft = %v, want 4", r.Args["attemptsLeft"])
	}
	r = m.complete(ch, ch.binder, ch.code).Expect(t, "right code", 200, 0)
	var tp kerneltest.Tokens
	r.Decode(t, &tp)
	m.k.Do("GET", "/api/v1/personal/profile", tp.AccessToken, nil).Expect(t, "profile", 200, 0)
	s := m.k.Ent().SysSession.Query().Where(syssession.UserID(tp.UserID)).OnlyX(ctx)
	if !s.Mfa || s.LoginMethod != auth.MethodPassword {
		t.Errorf("session mfa %v method %s, want true password", s.Mfa, s.LoginMethod)
	}
	m.complete(ch, ch.binder, ch.code).ExpectCode(t, "the challenge again", errcode.SmsCodeExpired)
}

func TestSmsSecondFactorBinding(t *testing.T) {
	m := newSmsMfa(t)
	m.user("gus", "13900000005")
	tests := []struct {
		name   string
		binder func(ch challenge) string
	}{
		{"no cookie", func(challenge) string { return "" }},
		{"another browser's cookie", func(challenge) string { b, _ := bindproof.NewToken(); return b }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := m.login("gus", nil)
			m.complete(ch, tt.binder(ch), ch.code).ExpectCode(t, "completion by another client", errcode.SmsCodeExpired)
			// The challenge is spent: not even its own browser completes it.
			m.complete(ch, ch.binder, ch.code).ExpectCode(t, "completion after the refusal", errcode.SmsCodeExpired)
			m.post("/api/v1/auth/login/sms/resend", "", map[string]any{"challengeId": ch.id}).ExpectCode(t, "resend without the cookie", errcode.SmsCodeExpired)
		})
	}
	t.Run("binding challenge", func(t *testing.T) {
		verifier := strings.Repeat("v", 20) + "-binding-verifier-of-the-app"
		ch := m.login("gus", map[string]any{"bindingChallenge": bindproof.Challenge(verifier)})
		if ch.binder != "" {
			t.Error("a binder cookie was set for a challenged login")
		}
		body := map[string]any{"challengeId": ch.id, "code": ch.code, "bindingVerifier": verifier}
		m.post("/api/v1/auth/login/sms", "", body).Expect(t, "completion with the verifier", 200, 0)

		ch = m.login("gus", map[string]any{"bindingChallenge": bindproof.Challenge(verifier)})
		body = map[string]any{"challengeId": ch.id, "code": ch.code, "bindingVerifier": verifier + "x"}
		m.post("/api/v1/auth/login/sms", "", body).ExpectCode(t, "completion with a wrong verifier", errcode.SmsCodeExpired)
	})
}

func TestSmsSecondFactorAttempts(t *testing.T) {
	m := newSmsMfa(t)
	m.user("hal", "13900000006")
	ch := m.login("hal", nil)
	wrong := wrongOf(ch.code)
	for left := 4; left >= 0; left-- {
		r := m.complete(ch, ch.binder, wrong).ExpectCode(t, "wrong code", errcode.SmsCodeWrong)
		if r.Args["attemptsLeft"] != float64(left) {
			t.Fatalf("attemptsLeft = %v, want %d", r.Args["attemptsLeft"], left)
		}
	}
	m.complete(ch, ch.binder, ch.code).ExpectCode(t, "right code after the last attempt", errcode.SmsCodeExpired)
	// The wrong codes counted toward the lockout of the account from
	// this client (maxFailCount 5).
	m.post("/api/v1/auth/login", "", map[string]any{"account": "hal", "password": "Mfa#Pass123"}).
		ExpectCode(t, "password after five wrong codes", errcode.AccountLocked)
}

func TestSmsSecondFactorParallel(t *testing.T) {
	m := newSmsMfa(t)
	m.user("ivy", "13900000007")
	ch := m.login("ivy", nil)
	const n = 12
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = m.complete(ch, ch.binder, ch.code).Code
		}()
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case 0:
			ok++
		case int(errcode.SmsCodeExpired):
		default:
			t.Errorf("parallel completion answered %d", c)
		}
	}
	if ok != 1 {
		t.Fatalf("%d parallel completions succeeded, want exactly 1 (%v)", ok, codes)
	}
}

func TestSmsSecondFactorResend(t *testing.T) {
	m := newSmsMfa(t)
	m.user("jon", "13900000008")
	ch := m.login("jon", nil)
	resend := func() kerneltest.Reply {
		return m.post("/api/v1/auth/login/sms/resend", ch.binder, map[string]any{"challengeId": ch.id})
	}
	r := resend().Expect(t, "resend too soon", 200, int(errcode.TooManyRequests))
	if s, _ := r.Args["retryAfterSeconds"].(float64); s < 1 || s > 60 {
		t.Errorf("retryAfterSeconds = %v", r.Args["retryAfterSeconds"])
	}
	// Let the resend interval pass: open the code store's resend gate.
	sum := sha256.Sum256([]byte("mfa\x00" + ch.id))
	if err := m.k.Cache().Reset(context.Background(), "sms:resend:mfa:"+hex.EncodeToString(sum[:16])); err != nil {
		t.Fatal(err)
	}
	before := len(mfaCode.FindAllString(m.k.Log(), -1))
	r = resend().Expect(t, "resend", 200, 0)
	var out struct{ ExpiresSeconds, ResendSeconds int }
	r.Decode(t, &out)
	if out.ExpiresSeconds != 300 || out.ResendSeconds != 60 {
		t.Errorf("resend answer %s", r.Data)
	}
	codes := mfaCode.FindAllStringSubmatch(m.k.Log(), -1)
	if len(codes) != before+1 {
		t.Fatalf("%d codes sent by the resend, want 1", len(codes)-before)
	}
	fresh := codes[len(codes)-1][1]
	if fresh != ch.code {
		m.complete(ch, ch.binder, ch.code).ExpectCode(t, "the replaced code", errcode.SmsCodeWrong)
	}
	m.complete(ch, ch.binder, fresh).Expect(t, "the resent code", 200, 0)
}
