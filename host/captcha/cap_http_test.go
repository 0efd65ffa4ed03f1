package captcha_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache/oncecap/oncecaptest"
	"github.com/adminkernel/kernel/host/captcha"
	"github.com/adminkernel/kernel/host/kerneltest"
)

const captchaPath = "/api/v1/auth/captcha"

// issue gets a captcha and returns its id, failing unless it is issued.
func issue(t *testing.T, k *kerneltest.Kernel, what string) string {
	t.Helper()
	r := k.Do("GET", captchaPath, "", nil).Expect(t, what, http.StatusOK, 0)
	var ch captcha.Challenge
	r.Decode(t, &ch)
	if ch.ID == "" {
		t.Fatalf("%s: no captchaId in %s", what, r.Raw)
	}
	return ch.ID
}

// refused checks that a captcha request at the cap is 429 / 40008 with a
// Retry-After within the life of a counting bucket and no challenge.
func refused(t *testing.T, k *kerneltest.Kernel, what string) {
	t.Helper()
	r := k.Do("GET", captchaPath, "", nil).Expect(t, what, http.StatusTooManyRequests, 40008)
	maxSecs := int((captcha.DefaultTTL + time.Minute) / time.Second)
	if n, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || n < 1 || n > maxSecs {
		t.Errorf("%s: Retry-After = %q, want 1..%d seconds", what, r.Header.Get("Retry-After"), maxSecs)
	}
	if strings.Contains(r.Raw, "<svg") {
		t.Errorf("%s: a refused request carried a challenge: %s", what, r.Raw)
	}
}

// loginWithCaptcha logs the super-admin in with a captcha answer and
// returns the envelope code.
func loginWithCaptcha(t *testing.T, k *kerneltest.Kernel, id, answer string) int {
	t.Helper()
	return k.Do("POST", "/api/v1/auth/login", "", map[string]string{
		"account": "superAdmin", "password": kerneltest.AdminPassword, "captchaId": id, "captchaCode": answer,
	}).Code
}

// TestCaptchaPendingCap: with Service:Security:Captcha:MaxPending=3 the
// fourth pending captcha is refused with 429 / 40008 and Retry-After; a
// captcha consumed by a wrong answer frees its slot (exactly one), a
// reused one frees nothing; the refusal is logged once, naming the setting.
// Runs on the cache backend ADMINKERNEL_TEST_CACHE selects.
func TestCaptchaPendingCap(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Security__Captcha__MaxPending=3", "Service__Security__Captcha__Enabled=true"})
	ids := []string{issue(t, k, "first"), issue(t, k, "second"), issue(t, k, "third")}
	refused(t, k, "fourth pending captcha")

	if code := loginWithCaptcha(t, k, ids[0], "zzzz"); code != 40003 {
		t.Fatalf("login with a wrong captcha answer = code %d, want 40003", code)
	}
	issue(t, k, "after a wrong answer consumed one")
	refused(t, k, "cap reached again")

	if code := loginWithCaptcha(t, k, ids[0], "zzzz"); code != 40002 {
		t.Fatalf("login with a used captcha = code %d, want 40002", code)
	}
	refused(t, k, "after a reused captcha")

	if got := strings.Count(k.Log(), "pending captcha answers are at the cap (Service:Security:Captcha:MaxPending)"); got != 1 {
		t.Errorf("the cap warning was logged %d times, want once (throttled)", got)
	}
}

// TestCaptchaPendingCapParallel: 40 parallel captcha requests against a
// cap of 10 never store more than 10 answers.
func TestCaptchaPendingCapParallel(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Security__Captcha__MaxPending=10"})
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		ok int
	)
	for range 40 {
		wg.Go(func() {
			r := k.Do("GET", captchaPath, "", nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Status == http.StatusOK && r.Code == 0:
				ok++
			case r.Status != http.StatusTooManyRequests || r.Code != 40008:
				t.Errorf("parallel captcha = HTTP %d code %d, want 200 or 429/40008", r.Status, r.Code)
			}
		})
	}
	wg.Wait()
	if ok < 1 || ok > 10 {
		t.Fatalf("%d of 40 parallel captcha requests stored an answer, want 1..10", ok)
	}
	for ; ok < 10; ok++ {
		issue(t, k, "filling up to 10")
	}
	refused(t, k, "after filling up to 10")
}

// TestCaptchaMaxPendingValidated: the setting must be at least 1.
func TestCaptchaMaxPendingValidated(t *testing.T) {
	for _, v := range []string{"0", "-5"} {
		cfg, err := config.Load(config.LoadOptions{ContentRoot: t.TempDir(), Environment: config.Development,
			Environ: []string{"Service__Security__Captcha__MaxPending=" + v}})
		if err != nil {
			t.Fatal(err)
		}
		err = cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), "Service:Security:Captcha:MaxPending") {
			t.Errorf("MaxPending=%s: error %v, want one naming Service:Security:Captcha:MaxPending", v, err)
		}
	}
	cfg, err := config.Load(config.LoadOptions{ContentRoot: t.TempDir(), Environment: config.Development})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil && strings.Contains(err.Error(), "Captcha") {
		t.Errorf("the default MaxPending does not validate: %v", err)
	}
	if got := cfg.Service.Security.Captcha.MaxPending; got != captcha.DefaultMaxPending {
		t.Errorf("default MaxPending = %d, want %d", got, captcha.DefaultMaxPending)
	}
}

// TestCaptchaPendingCapBoundsMemory: past the cap, anonymous captcha
// requests do not grow the heap (the answers of refused requests are never
// stored). The heap cost per stored answer is measured while filling up,
// and the refused requests must cost less than a quarter of what storing
// them would have. The kernel runs on the in-process cache whatever the
// backend selection (with Redis the answers are not in this heap:
// TestCaptchaPendingCapBoundsRedis counts them there).
func TestCaptchaPendingCapBoundsMemory(t *testing.T) {
	const (
		capAnswers = 2000
		beyond     = 8000
	)
	k := kerneltest.Start(t, []string{"Service__Security__Captcha__MaxPending=" + strconv.Itoa(capAnswers), "Service__Cache__Provider="})
	oncecaptest.BoundsMemory(t, oncecaptest.Memory{
		What: "answer", Send: func() int { return k.Do("GET", captchaPath, "", nil).Status },
		Stored: http.StatusOK, Refused: http.StatusTooManyRequests,
		Cap: capAnswers, Beyond: beyond, MinPerValue: 100,
	})
}

// TestCaptchaTypeSetting: sys.security.captcha.type picks what the captcha
// endpoint draws — char (the characters as SVG text), path (stroked
// outlines: no text element) and math (a sum whose result is not in the
// markup) — and the original console's whole Security tab, captcha type
// included, saves in one batch with code 0.
func TestCaptchaTypeSetting(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	get := func(what string) captcha.Challenge {
		t.Helper()
		var ch captcha.Challenge
		k.Do("GET", captchaPath, "", nil).Expect(t, what, http.StatusOK, 0).Decode(t, &ch)
		return ch
	}
	if ch := get("default"); ch.Type != captcha.TypeChar || !strings.Contains(ch.SVG, "<text") {
		t.Fatalf("default: type %q, want char drawn as text: %.200s", ch.Type, ch.SVG)
	}
	// Every key the original UI's Security tab sends, with the seeded values
	// and the captcha type it offers.
	tab := map[string]string{
		"sys.security.loginLock.maxFailCount": "5", "sys.security.loginLock.lockMinutes": "10",
		"sys.security.password.minLength": "8", "sys.security.password.expireDays": "0",
		"sys.security.password.historyCount": "0", "sys.security.session.accessMinutes": "120",
		"sys.security.session.refreshMinutes": "10080", "sys.security.rateLimit.windowSeconds": "60",
		"sys.security.rateLimit.permitPerWindow": "300", "sys.security.rateLimit.authPermitPerWindow": "1200",
		"sys.security.password.requireUpper": "true", "sys.security.password.requireLower": "true",
		"sys.security.password.requireDigit": "true", "sys.security.password.requireSpecial": "false",
		"sys.security.captcha.enabled": "false", "sys.security.totp.enabled": "false",
		"sys.security.totp.requireForSuperAdmin": "false", "sys.security.mfa.enabled": "false",
		"sys.security.smsLogin.enabled": "false", "sys.security.rateLimit.enabled": "true",
	}
	save := func(what, typ string, code int) {
		t.Helper()
		var rows []map[string]string
		for key, v := range tab {
			rows = append(rows, map[string]string{"configKey": key, "configValue": v})
		}
		rows = append(rows, map[string]string{"configKey": "sys.security.captcha.type", "configValue": typ})
		k.Do("PUT", "/api/v1/sys/config/batch", admin, rows).Expect(t, what, http.StatusOK, code)
	}
	save("the Security tab with path", captcha.TypePath, 0)
	ch := get("path")
	if ch.Type != captcha.TypePath || strings.Contains(ch.SVG, "<text") || strings.Count(ch.SVG, "<path") < 4+4 {
		t.Fatalf("path: type %q, want outlines and no text: %.300s", ch.Type, ch.SVG)
	}
	save("the Security tab with math", captcha.TypeMath, 0)
	ch = get("math")
	if ch.Type != captcha.TypeMath || !strings.Contains(ch.SVG, ">=<") || !strings.Contains(ch.SVG, ">?<") {
		t.Fatalf("math: type %q, want a question ending in =?: %.300s", ch.Type, ch.SVG)
	}
	save("an unknown captcha type", "slider", 43012)
	if ch := get("after the refused save"); ch.Type != captcha.TypeMath {
		t.Fatalf("a refused batch changed the type to %q", ch.Type)
	}
}
