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

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestTotpOlderStepRefused: once a code of a step is accepted, a code of
// an older step still inside the accepted skew is refused (40019), and the
// last step is kept on sys_user.totp_last_step.
func TestTotpOlderStepRefused(t *testing.T) {
	k := kerneltest.Start(t, nil)
	setting(t, k, "sys.security.totp.enabled", "true")
	setting(t, k, "sys.security.loginLock.maxFailCount", "50")
	uid := k.User("tina", totpUserPassword)
	seed, _ := bindTotp(t, k, "tina", steps{})
	// The bind spent a step of 0..+1; the next step's code, then the
	// previous step's (inside the skew of ±1).
	now := time.Now().Unix() / 30
	if time.Now().Unix()%30 > 27 { // keep now+1 and now-1 inside the skew for the test's duration
		time.Sleep(3 * time.Second)
		now = time.Now().Unix() / 30
	}
	newer := totpCode(t, seed, time.Unix((now+1)*30, 0))
	older := totpCode(t, seed, time.Unix((now-1)*30, 0))
	if newer == older {
		t.Skip("two steps share a code")
	}
	totpLogin(k, totpChallenge(t, k, "tina"), newer).Expect(t, "the code of the next step", 200, 0)
	totpLogin(k, totpChallenge(t, k, "tina"), older).ExpectCode(t, "an older step's code after a newer one", errcode.TotpWrong)
	totpLogin(k, totpChallenge(t, k, "tina"), totpCode(t, seed, time.Unix(now*30, 0))).
		ExpectCode(t, "the current step's code after the next one", errcode.TotpWrong)
	last := k.Ent().SysUser.Query().Where(sysuser.ID(uid)).OnlyX(context.Background()).TotpLastStep
	if last != now+1 {
		t.Fatalf("totp_last_step = %d, want %d", last, now+1)
	}
}

// TestTotpParallelSameCode: one code sent on several login challenges at
// once (each challenge its own record) logs in exactly once: the step is
// recorded with a compare-and-set on sys_user.
func TestTotpParallelSameCode(t *testing.T) {
	k := kerneltest.Start(t, nil)
	setting(t, k, "sys.security.totp.enabled", "true")
	setting(t, k, "sys.security.loginLock.maxFailCount", "50")
	k.User("tina", totpUserPassword)
	used := steps{}
	seed, _ := bindTotp(t, k, "tina", used)
	const n = 8
	ids := make([]string, n)
	for i := range ids {
		ids[i] = totpChallenge(t, k, "tina")
	}
	code := used.fresh(t, seed)
	var wg sync.WaitGroup
	ok := make(chan int, n)
	for _, id := range ids {
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
		t.Fatalf("%d of %d parallel logins with one code succeeded, want 1", len(ok), n)
	}
}
