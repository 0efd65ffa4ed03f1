package plugins_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/internal/vendorfake"
)

// suite is one kernel with the four vendor plugins (each against its fake
// vendor), acme (the SDK's test plugin, configured from
// Service:ExternalAuth:Plugins:acme) and chatty (the test plugin printing
// to stdout before the handshake), all configured.
type suite struct {
	k      *kerneltest.Kernel
	dir    string
	admin  string
	wecom  *vendorfake.WeCom
	ding   *vendorfake.DingTalk
	github *vendorfake.GitHub
	wechat *vendorfake.WeChat
}

// Vendors' calls that spend the code (the "token call" of each).
const (
	weComSpend  = "/cgi-bin/auth/getuserinfo"
	dingSpend   = "/v1.0/oauth2/userAccessToken"
	gitHubSpend = "/login/oauth/access_token"
	weChatSpend = "/sns/oauth2/access_token"
)

const acmeClientID = "acme-client-e2e-42"

func start(t *testing.T) *suite {
	t.Helper()
	s := &suite{
		dir:    buildPlugins(t),
		wecom:  vendorfake.NewWeCom(t),
		ding:   vendorfake.NewDingTalk(t),
		github: vendorfake.NewGitHub(t),
		wechat: vendorfake.NewWeChat(t),
	}
	const ea = "Service__ExternalAuth__"
	env := []string{
		ea + "PluginDir=" + s.dir,
		ea + "CallbackBaseUrl=" + callbackURL,
		ea + "EnterpriseChat__CorpId=" + s.wecom.CorpID,
		ea + "EnterpriseChat__AgentId=" + s.wecom.AgentID,
		ea + "EnterpriseChat__CorpSecret=" + s.wecom.Secret,
		ea + "EnterpriseChat__ApiBase=" + s.wecom.URL(),
		ea + "EnterpriseChat__OAuthBase=" + s.wecom.URL(),
		ea + "EnterpriseChat__LoginBase=" + s.wecom.URL(),
		ea + "TeamChat__ClientId=" + s.ding.ClientID,
		ea + "TeamChat__ClientSecret=" + s.ding.Secret,
		ea + "TeamChat__LoginBase=" + s.ding.URL(),
		ea + "TeamChat__ApiBase=" + s.ding.URL(),
		ea + "CodeHost__ClientId=" + s.github.ClientID,
		ea + "CodeHost__ClientSecret=" + s.github.Secret,
		ea + "CodeHost__WebBase=" + s.github.URL(),
		ea + "CodeHost__ApiBase=" + s.github.URL(),
		// social_chat through the generic section: a vendor code may use it
		// instead of its own.
		ea + "Plugins__social_chat__AppId=" + s.wechat.AppID,
		ea + "Plugins__social_chat__AppSecret=" + s.wechat.Secret,
		ea + "Plugins__social_chat__OpenBase=" + s.wechat.URL(),
		ea + "Plugins__social_chat__ApiBase=" + s.wechat.URL(),
		// A third-party code.
		ea + "Plugins__acme__ClientId=" + acmeClientID,
		ea + "Plugins__acme__ClientSecret=acme-secret-e2e",
		// chatty is configured (an unconfigured plugin is not started).
		ea + "Plugins__chatty__ClientId=chatty-client",
		ea + "Plugins__chatty__ClientSecret=chatty-secret",
	}
	s.k = kerneltest.Start(t, env)
	s.admin = s.k.Admin()
	return s
}

func (s *suite) set(t *testing.T, key, value string) {
	t.Helper()
	if err := s.k.Settings().Set(context.Background(), key, value); err != nil {
		t.Fatal(err)
	}
}

// status is the provider's status in providers/all ("" when absent).
func (s *suite) status(t *testing.T, code string) string {
	t.Helper()
	var all []struct {
		Code   string `json:"code"`
		Status string `json:"status"`
	}
	newBrowser(t, s.k).send("GET", base+"/providers/all", s.admin, "").Expect(t, "providers/all", 200, 0).Decode(t, &all)
	for _, p := range all {
		if p.Code == code {
			return p.Status
		}
	}
	return ""
}

// restarted waits for the plugin of code to run again under a new pid and
// be ready; it returns the new pid.
func (s *suite) restarted(t *testing.T, code string, old int) int {
	t.Helper()
	var pid int
	poll.Until(t, 15*time.Second, code+" to be restarted and ready", func() bool {
		pid = pidOf(s.dir, code)
		return pid != 0 && pid != old && s.status(t, code) == "ready"
	})
	return pid
}

func (s *suite) sessions(t *testing.T) int {
	t.Helper()
	return s.k.Ent().SysSession.Query().Where(syssession.RevokedAtIsNil()).CountX(context.Background())
}

// TestVendorPluginsThroughTheKernel drives whole external logins through
// the real plugin binaries launched by a real kernel, then the faults of a
// plugin process and of a vendor.
func TestVendorPluginsThroughTheKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugins and starts a kernel")
	}
	s := start(t)
	ctx := context.Background()
	k := s.k

	// A role granting the ping, for accounts created by provisioning.
	k.User("pinger", "Pinger#Pass123", "GET:/api/v1/ping")
	pingRole := k.Ent().SysRole.Query().Where(sysrole.Code("test_pinger")).OnlyIDX(ctx)

	t.Run("plugins registered", func(t *testing.T) {
		for _, code := range []string{"enterprise_chat", "team_chat", "code_host", "social_chat", "acme"} {
			if st := s.status(t, code); st != "ready" {
				t.Errorf("%s: status %q, want ready\n%s", code, st, k.Log())
			}
			if pidOf(s.dir, code) == 0 {
				t.Errorf("%s: no plugin process", code)
			}
		}
	})

	// Every vendor, each with another way to an account, ends in a session;
	// the second login finds the binding.
	logins := []struct {
		code  string
		how   string // link, claim or provision
		local string // the local account (link, claim)
	}{
		{"enterprise_chat", "link", "zhangsan"}, // WeCom's userid is the account hint
		{"code_host", "claim", "octo"},
		{"team_chat", "provision", ""},
		{"social_chat", "claim", "alice_local"},
	}
	for _, tc := range logins {
		t.Run("login/"+tc.code+"/"+tc.how, func(t *testing.T) {
			b := newBrowser(t, k)
			var first kerneltest.Tokens
			switch tc.how {
			case "link":
				k.User(tc.local, "Local#Pass1234", "GET:/api/v1/ping")
				s.set(t, "sys.externalauth."+tc.code+".linkByAccount", "true")
				first = b.login(tc.code)
			case "claim":
				k.User(tc.local, "Local#Pass1234", "GET:/api/v1/ping")
				res := b.sso(tc.code)
				pending := res.Query().Get("pendingLink")
				if pending == "" || res.Query().Get("provider") != tc.code {
					t.Fatalf("unbound identity ended in %s, want a pending link", res)
				}
				local := k.Login(tc.local, "Local#Pass1234")
				b.send("POST", base+"/pending-link/claim", local.AccessToken, `{"pendingLink":"`+pending+`"}`).Expect(t, "claim", 200, 0)
				first = b.login(tc.code)
			case "provision":
				s.set(t, "sys.externalauth."+tc.code+".provisioning", "provision")
				s.set(t, "sys.externalauth."+tc.code+".defaultRoleIds", strconv.FormatInt(pingRole, 10))
				first = b.login(tc.code)
			}
			u := k.Ent().SysUser.GetX(ctx, first.UserID)
			if tc.local != "" && u.Account != tc.local {
				t.Errorf("signed in as %q, want %q", u.Account, tc.local)
			}
			if again := newBrowser(t, k).login(tc.code); again.UserID != first.UserID {
				t.Errorf("second login signed in as %d, want %d (the binding)", again.UserID, first.UserID)
			}
		})
	}

	// acme is a third-party code configured from
	// Service:ExternalAuth:Plugins:acme: its settings reached the plugin
	// over RPC (its authorization URL carries the client id).
	t.Run("login/acme/plugins section", func(t *testing.T) {
		b := newBrowser(t, k)
		loc, err := url.Parse(b.authorize("acme"))
		if err != nil {
			t.Fatal(err)
		}
		if got := loc.Query().Get("client_id"); got != acmeClientID {
			t.Fatalf("acme authorization URL %s: client_id %q, want %q from Service:ExternalAuth:Plugins:acme", loc, got, acmeClientID)
		}
		s.set(t, "sys.externalauth.acme.provisioning", "provision")
		s.set(t, "sys.externalauth.acme.defaultRoleIds", strconv.FormatInt(pingRole, 10))
		q := url.Values{"code": {"ok-wile"}, "state": {loc.Query().Get("state")}}
		res := b.callback(&url.URL{Path: base + "/acme/callback", RawQuery: q.Encode()})
		b.pingAndSession(b.exchange(res.Query().Get("ticket")))
	})

	// (d) A plugin that writes to stdout before the handshake is left out
	// with go-plugin's reason; the kernel started and the others work.
	t.Run("fault/stdout before the handshake", func(t *testing.T) {
		log := k.Log()
		if !strings.Contains(log, "provider plugin not launched: provider=chatty") ||
			!strings.Contains(log, "Unrecognized remote plugin message: chatty plugin: hello before the handshake") {
			t.Errorf("no log line explaining why chatty is not launched:\n%s", log)
		}
		newBrowser(t, k).send("GET", base+"/chatty/authorize", "", "").Expect(t, "authorize chatty", 200, 40013)
		if st := s.status(t, "chatty"); st != "not launched" {
			t.Errorf("chatty listed with status %q, want not launched", st)
		}
		if slices.Contains(anonymousProviders(t, k), "chatty") {
			t.Error("chatty is offered to anonymous callers")
		}
		if pidOf(s.dir, "chatty") != 0 {
			t.Error("a chatty process is still running")
		}
	})

	// (a) kill -9 while idle: the plugin is restarted at once (it is not
	// offered while it is down), the next login works and the other plugins
	// never notice.
	t.Run("fault/killed while idle", func(t *testing.T) {
		pids := map[string]int{}
		for _, code := range []string{"team_chat", "code_host", "social_chat", "acme"} {
			pids[code] = pidOf(s.dir, code)
		}
		old := kill(t, s.dir, "enterprise_chat")
		// Right after the kill, authorize either finds the plugin still
		// marked ready (and waits for the restart) or finds it degraded
		// (40013): never anything else.
		if r := newBrowser(t, k).send("GET", base+"/enterprise_chat/authorize", "", ""); r.Status != 302 && r.Code != 40013 {
			t.Errorf("authorize right after the kill = HTTP %d code %d, want a redirect or 40013", r.Status, r.Code)
		}
		s.restarted(t, "enterprise_chat", old)
		newBrowser(t, k).login("enterprise_chat")
		if pid := pidOf(s.dir, "enterprise_chat"); pid == 0 || pid == old {
			t.Errorf("enterprise_chat pid %d after the kill of %d", pid, old)
		}
		for code, pid := range pids {
			if got := pidOf(s.dir, code); got != pid || s.status(t, code) != "ready" {
				t.Errorf("%s was disturbed: pid %d → %d, status %s", code, pid, got, s.status(t, code))
			}
		}
	})

	// A plugin that stays down (its binary is gone, so restarts fail) is
	// degraded: not offered to anonymous callers, authorize and bind answer
	// 40013, providers/all says why. Once it can start again it is ready
	// and offered again.
	t.Run("fault/down: not offered", func(t *testing.T) {
		path := filepath.Join(s.dir, filePrefix+"acme")
		if err := os.Rename(path, path+".away"); err != nil {
			t.Fatal(err)
		}
		old := kill(t, s.dir, "acme")
		poll.Until(t, 10*time.Second, "acme degraded after a failed restart", func() bool {
			return strings.Contains(k.Log(), "restarting provider plugin failed: provider=acme")
		})
		all := allProviders(t, k, s.admin)
		if p := all["acme"]; p.Status != "degraded" || !strings.HasPrefix(p.StatusReason, "restarting: ") || !p.Enabled {
			t.Errorf("acme = %+v, want degraded (restarting), switched on", p)
		}
		if slices.Contains(anonymousProviders(t, k), "acme") {
			t.Error("the degraded acme is offered to anonymous callers")
		}
		b := newBrowser(t, k)
		b.send("GET", base+"/acme/authorize", "", "").ExpectCode(t, "authorize acme while down", errcode.OAuthProviderDisabled)
		b.send("POST", base+"/acme/bind", s.admin, "").ExpectCode(t, "bind acme while down", errcode.OAuthProviderDisabled)
		if err := os.Rename(path+".away", path); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, 40*time.Second, "acme ready again", func() bool {
			return pidOf(s.dir, "acme") != 0 && s.status(t, "acme") == "ready"
		})
		if pidOf(s.dir, "acme") == old {
			t.Error("acme runs under its killed pid")
		}
		if !slices.Contains(anonymousProviders(t, k), "acme") {
			t.Error("acme is not offered again after its restart")
		}
		newBrowser(t, k).authorize("acme")
	})

	// (b) kill -9 between authorize and callback. The plugin is stateless
	// (its per-login data travels with the kernel's state), so a callback
	// after the restart completes the login. A callback that reaches the
	// host before it noticed the death fails cleanly with 40015.
	t.Run("fault/killed between authorize and callback", func(t *testing.T) {
		b := newBrowser(t, k)
		cb := b.vendor("social_chat", b.authorize("social_chat"))
		s.restarted(t, "social_chat", kill(t, s.dir, "social_chat"))
		res := b.callback(cb)
		if res.Query().Get("ticket") == "" {
			t.Fatalf("callback after the restart ended in %s, want a ticket", res)
		}
		b.pingAndSession(b.exchange(res.Query().Get("ticket")))

		// The callback right after the kill, without waiting.
		b = newBrowser(t, k)
		cb = b.vendor("social_chat", b.authorize("social_chat"))
		before := s.sessions(t)
		old := kill(t, s.dir, "social_chat")
		res = b.callback(cb)
		switch ticket, code := res.Query().Get("ticket"), res.Query().Get("error"); {
		case ticket != "":
			t.Log("the host noticed the death first: the callback waited for the restart and completed")
			b.pingAndSession(b.exchange(ticket))
		case code == "40015":
			t.Log("the callback reached the dead plugin: 40015, not retried")
			if n := s.sessions(t); n != before {
				t.Errorf("%d live sessions after a failed callback, want %d", n, before)
			}
		default:
			t.Errorf("callback right after the kill ended in %s, want a ticket or error=40015", res)
		}
		s.restarted(t, "social_chat", old)
	})

	// (c) kill -9 while the plugin waits for the vendor's token call: the
	// callback ends in 40015, Exchange is not retried (the vendor saw one
	// token request), the next login works after the restart.
	t.Run("fault/killed during the vendor exchange", func(t *testing.T) {
		hold := s.github.Hold(gitHubSpend)
		calls := s.github.Count(gitHubSpend)
		before := s.sessions(t)
		b := newBrowser(t, k)
		cb := b.vendor("code_host", b.authorize("code_host"))
		done := make(chan *url.URL, 1)
		go func() { done <- b.callback(cb) }()
		<-hold.Arrived()
		old := kill(t, s.dir, "code_host")
		res := <-done
		hold.Release()
		if got := res.Query().Get("error"); got != "40015" || res.Query().Get("ticket") != "" {
			t.Errorf("callback with the plugin killed mid-exchange ended in %s, want error=40015", res)
		}
		if n := s.github.Count(gitHubSpend) - calls; n != 1 || hold.Held() != 1 {
			t.Errorf("the vendor saw %d token requests (%d held), want exactly 1: Exchange must not be retried", n, hold.Held())
		}
		if n := s.sessions(t); n != before {
			t.Errorf("%d live sessions after the failed callback, want %d", n, before)
		}
		if !strings.Contains(k.Log(), "provider plugin call failed: the plugin is gone; not retried: provider=code_host method=Exchange") {
			t.Errorf("no log line for the lost exchange:\n%s", k.Log())
		}
		s.restarted(t, "code_host", old)
		newBrowser(t, k).login("code_host")
		if n := s.github.Count(gitHubSpend) - calls; n != 2 {
			t.Errorf("the vendor saw %d token requests in all, want 2", n)
		}
	})

	// (e) A vendor that is slow (beyond the 10 s per-call deadline),
	// answers garbage or a 5xx, or streams 50 MiB: each callback ends in
	// 40015, never a 5xx, without a session; memory stays bounded; the
	// plugin is not restarted; the next login works. One vendor each, in
	// parallel (the slow one sets the pace).
	const hugeBytes = 50 << 20
	var hostAlloc, pluginHWM [2]int64
	t.Run("fault/vendor", func(t *testing.T) {
		bad := []struct {
			name, code, path string
			fake             *vendorfake.Core
		}{
			{"slow", "team_chat", dingSpend, &s.ding.Core},
			{"garbage", "code_host", gitHubSpend, &s.github.Core},
			{"5xx", "enterprise_chat", weComSpend, &s.wecom.Core},
			{"huge", "social_chat", weChatSpend, &s.wechat.Core},
		}
		for _, tc := range bad {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				pid := pidOf(s.dir, tc.code)
				tc.fake.Lock()
				tc.fake.Misbehave, tc.fake.MisbehaveOnly, tc.fake.HugeBytes = tc.name, tc.path, hugeBytes
				tc.fake.Unlock()
				calls := tc.fake.Count(tc.path)
				b := newBrowser(t, k)
				cb := b.vendor(tc.code, b.authorize(tc.code))
				var ms runtime.MemStats
				if tc.name == "huge" {
					pluginHWM[0] = procStatusKiB(t, pid, "VmHWM")
					runtime.ReadMemStats(&ms)
					hostAlloc[0] = int64(ms.TotalAlloc)
				}
				res := b.callback(cb)
				if tc.name == "huge" {
					runtime.ReadMemStats(&ms)
					hostAlloc[1] = int64(ms.TotalAlloc)
					pluginHWM[1] = procStatusKiB(t, pid, "VmHWM")
					t.Logf("50 MiB answer: the vendor wrote %.1f MiB before the plugin hung up; plugin VmHWM %d → %d KiB; host allocated %.1f MiB during the callback",
						float64(tc.fake.HugeWritten())/(1<<20), pluginHWM[0], pluginHWM[1], float64(hostAlloc[1]-hostAlloc[0])/(1<<20))
					if w := tc.fake.HugeWritten(); w >= hugeBytes/2 {
						t.Errorf("the plugin read %d bytes of the 50 MiB answer, want it to stop at its 1 MiB cap", w)
					}
					if grew := pluginHWM[1] - pluginHWM[0]; grew > 8<<10 || pluginHWM[1] > 48<<10 {
						t.Errorf("plugin peak RSS %d → %d KiB: grew by %d KiB, want < 8 MiB and < 48 MiB in all", pluginHWM[0], pluginHWM[1], grew)
					}
					if grew := hostAlloc[1] - hostAlloc[0]; grew > 16<<20 {
						t.Errorf("the host allocated %d bytes during the callback, want < 16 MiB", grew)
					}
				}
				tc.fake.Lock()
				tc.fake.Misbehave, tc.fake.MisbehaveOnly, tc.fake.HugeBytes = "", "", 0
				tc.fake.Unlock()
				if got := res.Query().Get("error"); got != "40015" || res.Query().Get("ticket") != "" || res.Query().Get("pendingLink") != "" {
					t.Errorf("callback with a %s vendor ended in %s, want error=40015", tc.name, res)
				}
				if n := tc.fake.Count(tc.path) - calls; n != 1 {
					t.Errorf("the vendor saw %d calls to %s, want 1", n, tc.path)
				}
				if got := pidOf(s.dir, tc.code); got != pid {
					t.Errorf("the plugin was restarted (pid %d → %d); a bad vendor is not the plugin's fault", pid, got)
				}
				newBrowser(t, k).login(tc.code)
			})
		}
	})
}
