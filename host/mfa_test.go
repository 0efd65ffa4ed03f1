//go:build !unit

package host_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

const totpUserPassword = "Tina#Passw0rd1"

// totpCode is the code of seed at t.
func totpCode(t *testing.T, seed string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(seed, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// steps records the time steps a test has used a code of, so that each
// code it sends is of a step newer than every step used so far (a code is
// accepted only for a step newer than the last one the user had
// accepted), whatever the time the test takes.
type steps map[int64]bool

// fresh returns the code of the oldest step within 0..+1 of now that is
// newer than every used step, waiting for the next step when both are
// spent, and marks the step used.
func (u steps) fresh(t *testing.T, seed string) string {
	t.Helper()
	for {
		var last int64
		for s := range u {
			last = max(last, s)
		}
		now := time.Now().Unix() / 30
		for _, d := range []int64{0, 1} {
			if now+d > last {
				u[now+d] = true
				return totpCode(t, seed, time.Unix((now+d)*30, 0))
			}
		}
		time.Sleep(time.Until(time.Unix((now+1)*30, 0)) + 50*time.Millisecond)
	}
}

// wrongCode is a well-formed code no step within ±2 of now accepts.
func wrongCode(t *testing.T, seed string) string {
	t.Helper()
	valid := map[string]bool{}
	for d := -2; d <= 2; d++ {
		valid[totpCode(t, seed, time.Now().Add(time.Duration(d)*30*time.Second))] = true
	}
	for _, c := range []string{"000000", "111111", "222222", "333333", "444444", "555555", "666666"} {
		if !valid[c] {
			return c
		}
	}
	t.Fatal("no wrong code found")
	return ""
}

func setting(t *testing.T, k *kerneltest.Kernel, key, value string) {
	t.Helper()
	if err := k.Settings().Set(context.Background(), key, value); err != nil {
		t.Fatalf("setting %s: %v", key, err)
	}
}

// bindTotp binds TOTP for account and returns the seed and recovery codes.
func bindTotp(t *testing.T, k *kerneltest.Kernel, account string, used steps) (string, []string) {
	t.Helper()
	var start struct {
		BindChallengeID string `json:"bindChallengeId"`
		OtpauthURI      string `json:"otpauthUri"`
		Seed            string `json:"seed"`
		ExpiresSeconds  int    `json:"expiresSeconds"`
	}
	k.Do("POST", "/api/v1/auth/mfa/bind/start", "", map[string]string{"account": account, "currentPassword": totpUserPassword}).
		Expect(t, "bind start", 200, 0).Decode(t, &start)
	if start.BindChallengeID == "" || start.Seed == "" || start.ExpiresSeconds <= 0 || !strings.HasPrefix(start.OtpauthURI, "otpauth://totp/") {
		t.Fatalf("bind start answer %+v", start)
	}
	k.Leaks.Secrets = append(k.Leaks.Secrets, start.Seed)
	r := k.Do("POST", "/api/v1/auth/mfa/bind/complete", "", map[string]string{"bindChallengeId": start.BindChallengeID, "totpCode": wrongCode(t, start.Seed)})
	r.ExpectCode(t, "bind complete with a wrong code", errcode.TotpWrong)
	if r.Args["attemptsLeft"] != float64(4) {
		t.Fatalf("attemptsLeft %v", r.Args)
	}
	var done struct {
		RecoveryCodes []string `json:"recoveryCodes"`
	}
	k.Do("POST", "/api/v1/auth/mfa/bind/complete", "", map[string]string{"bindChallengeId": start.BindChallengeID, "totpCode": used.fresh(t, start.Seed)}).
		Expect(t, "bind complete", 200, 0).Decode(t, &done)
	if len(done.RecoveryCodes) != 10 {
		t.Fatalf("recovery codes %v", done.RecoveryCodes)
	}
	k.Leaks.Secrets = append(k.Leaks.Secrets, done.RecoveryCodes...)
	k.Do("POST", "/api/v1/auth/mfa/bind/complete", "", map[string]string{"bindChallengeId": start.BindChallengeID, "totpCode": totpCode(t, start.Seed, time.Now())}).
		ExpectCode(t, "bind complete twice", errcode.MfaBindInvalid)
	return start.Seed, done.RecoveryCodes
}

// totpChallenge logs in with the password and expects signal 40018.
func totpChallenge(t *testing.T, k *kerneltest.Kernel, account string) string {
	t.Helper()
	r := k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": account, "password": totpUserPassword})
	r.ExpectCode(t, "password login with TOTP bound", errcode.TotpRequired)
	id, _ := r.Args["challengeId"].(string)
	if len(id) != 43 {
		t.Fatalf("challengeId in %s", r.Raw)
	}
	return id
}

func totpLogin(k *kerneltest.Kernel, id, code string) kerneltest.Reply {
	k.T.Helper()
	return k.Do("POST", "/api/v1/auth/login/totp", "", map[string]string{"challengeId": id, "code": code})
}

// emptyPost posts JSON and returns the status and the raw body (the
// recovery endpoint answers 200 with an empty body, no envelope).
func emptyPost(t *testing.T, k *kerneltest.Kernel, path, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), "POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := k.App().Test(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func TestTotpBindLoginReplayRecovery(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	setting(t, k, "sys.security.totp.enabled", "true")
	setting(t, k, "sys.security.loginLock.maxFailCount", "50")
	uid := k.User("tina", totpUserPassword)
	k.Leaks.Secrets = append(k.Leaks.Secrets, totpUserPassword)

	before := k.Login("tina", totpUserPassword) // nothing bound, nothing forced
	k.Do("POST", "/api/v1/auth/mfa/bind/start", "", map[string]string{"account": "tina"}).
		ExpectCode(t, "bind start without a password", errcode.MfaBindPasswordRequired)
	k.Do("POST", "/api/v1/auth/mfa/bind/start", "", map[string]string{"account": "tina", "currentPassword": "nope"}).
		ExpectCode(t, "bind start with a wrong password", errcode.PasswordWrong)

	used := steps{}
	seed, codes := bindTotp(t, k, "tina", used)
	k.Do("GET", "/api/v1/personal/profile", before.AccessToken, nil).Expect(t, "a session from before the bind", 401, 40006)
	k.Do("POST", "/api/v1/auth/mfa/bind/start", "", map[string]string{"account": "tina", "currentPassword": totpUserPassword}).
		ExpectCode(t, "bind start when bound", errcode.MfaBindInvalid)
	u := k.Ent().SysUser.Query().Where(sysuser.ID(uid)).OnlyX(ctx)
	if !u.TotpEnabled || u.TotpSecret == nil || strings.Contains(*u.TotpSecret, seed) {
		t.Fatalf("stored seed: enabled %v, %v", u.TotpEnabled, u.TotpSecret)
	}

	// A code logs in once (±1 step); its step is spent.
	next := used.fresh(t, seed)
	id := totpChallenge(t, k, "tina")
	totpLogin(k, id, next).Expect(t, "TOTP login", 200, 0)
	totpLogin(k, id, next).ExpectCode(t, "the challenge again", errcode.MfaBindInvalid)
	if n := k.Ent().SysSession.Query().Where(syssession.UserID(uid), syssession.Mfa(true)).CountX(ctx); n != 1 {
		t.Fatalf("%d sessions with mfa=true, want 1", n)
	}
	id = totpChallenge(t, k, "tina")
	totpLogin(k, id, next).ExpectCode(t, "a replayed code", errcode.TotpWrong)
	totpLogin(k, id, used.fresh(t, seed)).Expect(t, "TOTP login with another step's code", 200, 0)

	// Recovery: a wrong code, then a right one (empty 200), which unbinds.
	st, body := emptyPost(t, k, "/api/v1/auth/mfa/recovery", `{"account":"tina","currentPassword":"`+totpUserPassword+`","recoveryCode":"AAAA-BBBB-CCCC-DDDD"}`)
	if st != 200 || !strings.Contains(body, `"code":40022`) {
		t.Fatalf("recovery with a wrong code = %d %s", st, body)
	}
	st, body = emptyPost(t, k, "/api/v1/auth/mfa/recovery", `{"account":"tina","currentPassword":"`+totpUserPassword+`","recoveryCode":"`+strings.ToLower(codes[3])+`"}`)
	if st != 200 || body != "" {
		t.Fatalf("recovery = %d %q, want 200 and an empty body", st, body)
	}
	if k.Ent().SysSession.Query().Where(syssession.UserID(uid), syssession.RevokedAtIsNil()).CountX(ctx) != 0 {
		t.Fatal("sessions survive the recovery")
	}
	st, body = emptyPost(t, k, "/api/v1/auth/mfa/recovery", `{"account":"tina","currentPassword":"`+totpUserPassword+`","recoveryCode":"`+codes[4]+`"}`)
	if !strings.Contains(body, `"code":40022`) {
		t.Fatalf("a second recovery = %d %s", st, body)
	}
	k.Login("tina", totpUserPassword) // unbound again: the password alone

	// The factor changes are in the operation log, their codes masked.
	for _, path := range []string{"/api/v1/auth/mfa/bind/complete", "/api/v1/auth/mfa/recovery"} {
		poll.Until(t, 10*time.Second, "operation-log rows of "+path, func() bool {
			return k.Ent().SysOpLog.Query().Where(sysoplog.Path(path), sysoplog.ResultCode(0)).CountX(ctx) == 1
		})
	}
	for _, r := range k.Ent().SysOpLog.Query().Where(sysoplog.PathHasPrefix("/api/v1/auth/mfa/")).AllX(ctx) {
		if r.ParamJSON != nil && (strings.Contains(*r.ParamJSON, codes[3]) || strings.Contains(*r.ParamJSON, totpUserPassword)) {
			t.Fatalf("operation log shows a secret: %s", *r.ParamJSON)
		}
	}

	// forceTotp without a binding: 40020.
	k.Ent().SysUser.UpdateOneID(uid).SetForceTotp(true).ExecX(ctx)
	k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "tina", "password": totpUserPassword}).
		ExpectCode(t, "forced, not bound", errcode.TotpNotBound)
	// The super-admin under requireForSuperAdmin, not bound: 40020.
	k.Admin()
	setting(t, k, "sys.security.totp.requireForSuperAdmin", "true")
	k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": kerneltest.AdminPassword}).
		ExpectCode(t, "super-admin, required, not bound", errcode.TotpNotBound)
	// The switch off: the password alone again.
	setting(t, k, "sys.security.totp.enabled", "false")
	k.Login("tina", totpUserPassword)
	k.Admin()
}

func TestTotpChallengeBruteForceAndLockout(t *testing.T) {
	k := kerneltest.Start(t, nil)
	setting(t, k, "sys.security.totp.enabled", "true")
	setting(t, k, "sys.security.loginLock.maxFailCount", "50")
	k.User("tina", totpUserPassword)
	used := steps{}
	seed, _ := bindTotp(t, k, "tina", used)
	bad := wrongCode(t, seed)

	// Attempts end the challenge: the right code after five wrong ones is
	// refused.
	id := totpChallenge(t, k, "tina")
	for want := 4; want >= 0; want-- {
		r := totpLogin(k, id, bad).ExpectCode(t, "a wrong code", errcode.TotpWrong)
		if r.Args["attemptsLeft"] != float64(want) {
			t.Fatalf("attemptsLeft = %v, want %d", r.Args["attemptsLeft"], want)
		}
	}
	totpLogin(k, id, used.fresh(t, seed)).ExpectCode(t, "the right code on a dead challenge", errcode.MfaBindInvalid)
	totpLogin(k, "not-a-challenge", "123456").ExpectCode(t, "a malformed challenge", errcode.MfaBindInvalid)

	// Wrong codes count toward the lockout of the account and client.
	totpChallenge(t, k, "tina") // the password step clears the pair's failures
	setting(t, k, "sys.security.loginLock.maxFailCount", "3")
	k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "tina", "password": "wrong"}).ExpectCode(t, "a wrong password", errcode.PasswordWrong)
	id = totpChallenge(t, k, "tina") // a success clears the pair's failures
	totpLogin(k, id, bad).ExpectCode(t, "wrong code 1", errcode.TotpWrong)
	totpLogin(k, id, bad).ExpectCode(t, "wrong code 2", errcode.TotpWrong)
	totpLogin(k, id, bad).ExpectCode(t, "wrong code 3 locks", errcode.AccountLocked)
	k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "tina", "password": totpUserPassword}).
		ExpectCode(t, "the password while locked", errcode.AccountLocked)
}

func TestTotpChallengeParallelUse(t *testing.T) {
	k := kerneltest.Start(t, nil)
	setting(t, k, "sys.security.totp.enabled", "true")
	setting(t, k, "sys.security.loginLock.maxFailCount", "50")
	k.User("tina", totpUserPassword)
	used := steps{}
	seed, _ := bindTotp(t, k, "tina", used)
	id := totpChallenge(t, k, "tina")
	code := used.fresh(t, seed)
	const n = 8
	var wg sync.WaitGroup
	ok := make(chan int, n)
	for range n {
		wg.Go(func() {
			body := `{"challengeId":"` + id + `","code":"` + code + `"}`
			req := httptest.NewRequestWithContext(t.Context(), "POST", "/api/v1/auth/login/totp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := k.App().Test(req)
			if err != nil {
				t.Error(err)
				return
			}
			raw, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(raw), `"code":0`) {
				ok <- 1
			}
		})
	}
	wg.Wait()
	close(ok)
	if len(ok) != 1 {
		t.Fatalf("%d of %d parallel completions succeeded, want 1", len(ok), n)
	}
}
