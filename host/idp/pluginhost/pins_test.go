package pluginhost_test

import (
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

// Operators see plugin trust (issue 29 item 5): with RequirePins an
// unpinned plugin is refused (not launched, with the reason, in the
// registry for providers/all) while a pinned one runs; a pin under a code
// with no plugin binary (a misspelt code) is a WARN and a missing row, in
// Load and in Inspect alike.
func TestRequirePinsAndStrayPins(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, "pinned", "loose")
	settings := settingsOf(map[string]map[string]string{
		"pinned": providertest.FakeSettings(),
		"loose":  providertest.FakeSettings(),
	})
	pins := map[string]string{
		"pinned":  sha256File(t, dir+"/"+pluginhost.FilePrefix+"pinned"),
		"pinnned": sha256File(t, dir+"/"+pluginhost.FilePrefix+"pinned"), // misspelt
	}
	tweak := func(o *pluginhost.Options) {
		o.Settings = settings
		o.SHA256 = pins
		o.RequirePins = true
	}
	e := load(t, dir, tweak)

	if in := e.info(t, "pinned"); in.State != pluginhost.Ready || !in.Pinned || in.PID == 0 {
		t.Errorf("pinned = %+v, want ready, pinned and running", in)
	}
	loose := e.info(t, "loose")
	if loose.State != pluginhost.NotLaunched || loose.PID != 0 || !strings.Contains(loose.Reason, "RequirePins is on") || !strings.Contains(loose.Reason, "PluginSha256:loose") {
		t.Errorf("loose = %+v, want not launched because it is not pinned", loose)
	}
	if en, ok := e.reg.Get("loose"); !ok || en.Status != idp.NotLaunched || en.Provider != nil || en.Reason != loose.Reason {
		t.Errorf("registry loose = %+v, want not launched with the reason", en)
	}
	stray := e.info(t, "pinnned")
	if stray.State != pluginhost.Missing || !strings.Contains(stray.Reason, "misspelt") || !strings.Contains(stray.Reason, "PluginSha256:pinnned") {
		t.Errorf("pinnned = %+v, want missing with the reason", stray)
	}
	if en, ok := e.reg.Get("pinnned"); !ok || en.Status != idp.Missing {
		t.Errorf("registry pinnned = %+v, want missing", en)
	}
	if got := e.log.lines("[WARN]", "a SHA-256 pin names a provider with no plugin binary", "provider=pinnned"); len(got) != 1 {
		t.Errorf("want one WARN for the stray pin, got %q\nlog:\n%s", got, e.log)
	}
	if got := e.log.lines("[ERROR]", "provider plugin not launched", "provider=loose", "RequirePins"); len(got) != 1 {
		t.Errorf("want one ERROR for the unpinned plugin, got %q\nlog:\n%s", got, e.log)
	}
	if got := e.log.lines("pin names a provider", "provider=pinned "); len(got) != 0 {
		t.Errorf("the pin of an installed plugin is reported as stray: %q", got)
	}

	// Inspect (providers --no-launch) tells the same story.
	opts := pluginhost.Options{Dir: dir}
	tweak(&opts)
	infos, err := pluginhost.Inspect(opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]pluginhost.Info{}
	for _, in := range infos {
		got[in.Code] = in
	}
	if got["pinned"].State != pluginhost.Found || got["loose"].State != pluginhost.NotLaunched || got["pinnned"].State != pluginhost.Missing {
		t.Errorf("Inspect = %+v", infos)
	}

	// Without RequirePins the unpinned plugin runs.
	e2 := load(t, dir, func(o *pluginhost.Options) { o.Settings = settings })
	if in := e2.info(t, "loose"); in.State != pluginhost.Ready || in.Pinned {
		t.Errorf("loose without RequirePins = %+v, want ready and unpinned", in)
	}
}
