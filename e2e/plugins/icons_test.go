package plugins_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/internal/vendorfake"
)

// The provider lists carry the icon and brand each plugin binary declares
// in Describe, over go-plugin: the bundled code_host plugin (its brand's
// Iconify icon and key), the SDK's test plugin as acme (the fake's), as
// gaudy (an invalid icon and brand: left out, logged once, the provider
// still listed and ready) and as plain (neither, like a plugin built
// before the brand existed).
func TestProviderListIconsFromPlugins(t *testing.T) {
	dir := t.TempDir()
	const mod = "github.com/adminkernel/kernel/"
	for pkg, name := range map[string]string{
		mod + "plugins/codehost/cmd/" + filePrefix + "code_host": filePrefix + "code_host",
		mod + "pluginsdk/internal/testplugin":                    filePrefix + "acme",
	} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, filePrefix+"acme"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gaudy", "plain"} {
		if err := os.WriteFile(filepath.Join(dir, filePrefix+name), b, 0o755); err != nil { //nolint:gosec // a plugin binary must be executable
			t.Fatal(err)
		}
	}
	gh := vendorfake.NewGitHub(t)
	const ea = "Service__ExternalAuth__"
	env := []string{
		ea + "PluginDir=" + dir,
		ea + "CallbackBaseUrl=" + callbackURL,
		ea + "CodeHost__ClientId=" + gh.ClientID,
		ea + "CodeHost__ClientSecret=" + gh.Secret,
		ea + "CodeHost__WebBase=" + gh.URL(),
		ea + "CodeHost__ApiBase=" + gh.URL(),
	}
	for _, code := range []string{"acme", "gaudy", "plain"} {
		env = append(env, ea+"Plugins__"+code+"__ClientId="+code+"-client", ea+"Plugins__"+code+"__ClientSecret="+code+"-secret")
	}
	k := kerneltest.Start(t, env)
	admin := k.Admin()

	type item struct {
		Code   string  `json:"code"`
		Icon   *string `json:"icon"`
		Brand  *string `json:"brand"`
		Status string  `json:"status"`
	}
	str := func(p *string) string {
		if p == nil {
			return "<null>"
		}
		return *p
	}
	want := map[string][2]string{
		"code_host": {"ant-design:github-outlined", "github"},
		"acme":      {"mdi:test-tube", "fake"},
		"gaudy":     {"<null>", "<null>"},
		"plain":     {"<null>", "<null>"},
	}
	for _, tc := range []struct{ path, token string }{{"/providers", ""}, {"/providers/all", admin}, {"/providers", ""}} {
		var list []item
		newBrowser(t, k).send("GET", base+tc.path, tc.token, "").Expect(t, tc.path, 200, 0).Decode(t, &list)
		got := map[string][2]string{}
		for _, p := range list {
			got[p.Code] = [2]string{str(p.Icon), str(p.Brand)}
			if tc.token != "" && p.Status != "ready" {
				t.Errorf("%s: %s is %q, want ready", tc.path, p.Code, p.Status)
			}
		}
		for code, w := range want {
			if got[code] != w {
				t.Errorf("%s: %s has icon, brand %q; want %q (list %+v)", tc.path, code, got[code], w, got)
			}
		}
	}
	log := k.Log()
	for _, s := range []string{"declares an invalid icon", "declares an invalid brand"} {
		if n := strings.Count(log, s); n != 1 {
			t.Errorf("log has %d lines %q; want one for gaudy", n, s)
		}
	}
}
