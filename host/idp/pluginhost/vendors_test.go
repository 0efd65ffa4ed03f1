package pluginhost_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
	"github.com/adminkernel/kernel/pluginsdk"
)

// buildVendorPlugins builds the four vendor plugins of plugins/*/cmd into
// a folder, as make plugins does.
func buildVendorPlugins(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, code := range config.VendorCodes {
		pkg := "github.com/adminkernel/kernel/plugins/" + strings.ReplaceAll(code, "_", "") + "/cmd/" + pluginhost.FilePrefix + code
		build := exec.Command("go", "build", "-o", filepath.Join(dir, pluginhost.FilePrefix+code), pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", pkg, err, out)
		}
	}
	return dir
}

// The real vendor plugin binaries, launched by the host: each registers
// under its code, answers through the wire, a killed one comes back while
// the others never notice, and none sees the host's environment.
func TestVendorPluginsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the vendor plugins")
	}
	dir := buildVendorPlugins(t)
	// Every vendor URL points at a local server that refuses everything,
	// so nothing leaves the machine.
	vendor := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(vendor.Close)
	marker := "marker-" + rand.Text()
	t.Setenv("ADMINKERNEL_TEST_MARKER", marker)
	settings := map[string]string{
		"ClientId": "client-id", "ClientSecret": "client-" + marker,
		"CorpId": "ww0123456789", "AgentId": "1000002", "CorpSecret": "corp-" + marker,
		"AppId": "wx0123456789", "AppSecret": "app-" + marker,
		"ApiBase": vendor.URL, "WebBase": vendor.URL, "OAuthBase": vendor.URL, "LoginBase": vendor.URL, "OpenBase": vendor.URL,
	}
	e := load(t, dir, func(o *pluginhost.Options) {
		o.Settings = func(string) map[string]string { return settings }
	})

	ctx := context.Background()
	redirect := "https://kernel.example.test/api/v1/auth/external/x/callback"
	for _, code := range config.VendorCodes {
		en, ok := e.reg.Get(code)
		if !ok {
			t.Fatalf("%s is not registered; plugins: %+v\nlog:\n%s", code, e.host.Plugins(), e.log)
		}
		if en.Source.Kind != idp.Plugin || en.Status != idp.Ready {
			t.Errorf("%s: source %v, status %s; want plugin, ready (%+v)", code, en.Source, en.Status, e.info(t, code))
		}
		d, err := en.Provider.Describe(ctx)
		if err != nil || d.Code != code || d.ProtocolVersion != pluginsdk.ProtocolVersion || d.DisplayName == "" {
			t.Errorf("%s: Describe() = %+v, %v", code, d, err)
		}
		state := "st" + strings.ToLower(rand.Text())
		auth, err := en.Provider.AuthorizeURL(ctx, pluginsdk.AuthorizeRequest{State: state, RedirectURI: redirect, Nonce: "n", Purpose: pluginsdk.PurposeLogin, UserAgent: "Mozilla/5.0"})
		if err != nil || !strings.Contains(auth.URL, state) {
			t.Errorf("%s: AuthorizeURL() = %q, %v; want a URL carrying the state", code, auth.URL, err)
		}
		x, err := en.Provider.Exchange(ctx, pluginsdk.ExchangeRequest{Query: map[string]string{"error": "access_denied", "state": state}, RedirectURI: redirect, ProviderData: auth.ProviderData})
		if err != nil || x.Error == nil {
			t.Errorf("%s: Exchange(error=access_denied) = %+v, %v; want a ProviderError", code, x, err)
		}
		pid := e.info(t, code).PID
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(environ), marker) || strings.Contains(string(environ), "ADMINKERNEL_TEST_MARKER") {
			t.Errorf("%s: the plugin's environment holds the host's", code)
		}
	}

	// kill -9 one plugin: its next authorize works after the restart and
	// the others never notice.
	victim := config.VendorCodes[0]
	pids := map[string]int{}
	for _, code := range config.VendorCodes {
		pids[code] = e.info(t, code).PID
	}
	if err := syscall.Kill(pids[victim], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p := provider(t, e.reg, victim)
	if _, err := p.AuthorizeURL(ctx, pluginsdk.AuthorizeRequest{State: "afterkill", RedirectURI: redirect, Nonce: "n", Purpose: pluginsdk.PurposeLogin}); err != nil {
		t.Errorf("%s: AuthorizeURL after kill -9 = %v", victim, err)
	}
	for _, code := range config.VendorCodes[1:] {
		if got := e.info(t, code).PID; got != pids[code] || status(e.reg, code) != idp.Ready {
			t.Errorf("%s was disturbed by %s's crash: pid %d → %d, status %s", code, victim, pids[code], got, status(e.reg, code))
		}
	}
	if got := e.info(t, victim).PID; got == pids[victim] || !running(got) {
		t.Errorf("%s pid after restart = %d (was %d)", victim, got, pids[victim])
	}
}
