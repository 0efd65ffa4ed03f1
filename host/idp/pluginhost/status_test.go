package pluginhost_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

// settingsOf returns an Options.Settings that answers from m (nil for
// codes m does not name).
func settingsOf(m map[string]map[string]string) func(string) map[string]string {
	return func(code string) map[string]string { return m[code] }
}

func sectionKey(code string) string { return "Section:" + code }

// Every condition of a plugin, as Load logs, registers and lists it:
// configured and ready, unconfigured (empty or blank settings: not
// started, one INFO line, recorded with the settings key), misconfigured
// (started, refuses its settings: WARN with the plugin's message, not
// ready), missing (configured without a usable binary: WARN).
func TestPluginStatuses(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, "alpha", "empty", "blank", "picky")
	writeFile(t, filepath.Join(dir, pluginhost.FilePrefix+"noexec"), 0o644)
	e := load(t, dir, func(o *pluginhost.Options) {
		o.Settings = settingsOf(map[string]map[string]string{
			"alpha": providertest.FakeSettings(),
			"empty": {},
			"blank": {"ClientId": "  ", "ClientSecret": ""},
			"picky": {"ClientId": "only-the-id"},
		})
		o.Configured = []string{"alpha", "picky", "ghost", "noexec"}
		o.SettingsKey = sectionKey
	})

	tests := []struct {
		code   string
		state  pluginhost.State
		why    string
		runs   bool
		logged []string // one log line holding all of these
	}{
		{"alpha", pluginhost.Ready, "", true, []string{"[INFO]", "provider plugin ready", "provider=alpha"}},
		{"empty", pluginhost.Unconfigured, "no settings: Section:empty is empty", false, []string{"[INFO]", "provider plugin not configured; not started", "provider=empty", "Section:empty"}},
		{"blank", pluginhost.Unconfigured, "no settings: Section:blank is empty", false, []string{"[INFO]", "provider plugin not configured; not started", "provider=blank"}},
		{"picky", pluginhost.Misconfigured, "settings refused: fake: ClientSecret is required", true, []string{"[WARN]", "provider plugin refused its settings", "provider=picky", `error="fake: ClientSecret is required"`}},
		{"ghost", pluginhost.Missing, "Section:ghost is set, but the plugin folder " + dir + " has no plugin binary " + pluginhost.FilePrefix + "ghost", false, []string{"[WARN]", "provider plugin is configured but missing", "provider=ghost"}},
		{"noexec", pluginhost.Missing, "is skipped: not executable", false, []string{"[WARN]", "provider plugin is configured but missing", "provider=noexec"}},
	}
	for _, tt := range tests {
		in := e.info(t, tt.code)
		if in.State != tt.state || !strings.Contains(in.Reason, tt.why) || (in.PID != 0) != tt.runs {
			t.Errorf("Plugins() %s = %+v; want %s, reason containing %q, running %v", tt.code, in, tt.state, tt.why, tt.runs)
		}
		if tt.runs && !running(in.PID) {
			t.Errorf("%s: pid %d does not run", tt.code, in.PID)
		}
		en, ok := e.reg.Get(tt.code)
		if !ok || string(en.Status) != string(tt.state) || !strings.Contains(en.Reason, tt.why) || en.Ready() != (tt.state == pluginhost.Ready) || (en.Provider != nil) != tt.runs {
			t.Errorf("registry %s = %+v; want %s with the reason, a provider only when it runs", tt.code, en, tt.state)
		}
		if got := e.log.lines(tt.logged...); len(got) != 1 {
			t.Errorf("%s: want one log line with %q, got %q\nlog:\n%s", tt.code, tt.logged, got, e.log)
		}
		if tt.state != pluginhost.Ready {
			if got := e.log.lines("provider plugin ready", "provider="+tt.code); len(got) != 0 {
				t.Errorf("%s is %s but the log says it is ready: %q", tt.code, tt.state, got)
			}
		}
	}
	if got := e.log.lines("[ERROR]"); len(got) != 0 {
		t.Errorf("want no ERROR line, got %q", got)
	}
	// The misconfigured plugin runs: its calls reach it, and it says why.
	_, err := provider(t, e.reg, "picky").AuthorizeURL(context.Background(), authorizeReq("x"))
	if err == nil {
		t.Error("AuthorizeURL of the misconfigured plugin succeeded")
	}
}

// A plugin folder named in the settings that does not exist is a warning
// and listed as missing; a configured plugin in it is missing too.
func TestRequiredFolderMissing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "absent")
	e := load(t, dir, func(o *pluginhost.Options) {
		o.DirRequired = true
		o.Configured = []string{"alpha"}
	})
	var folder, alpha bool
	for _, in := range e.host.Plugins() {
		switch {
		case in.Code == "" && in.Path == dir && in.State == pluginhost.Missing && strings.Contains(in.Reason, "does not exist"):
			folder = true
		case in.Code == "alpha" && in.State == pluginhost.Missing:
			alpha = true
		default:
			t.Errorf("unexpected Plugins() entry %+v", in)
		}
	}
	if !folder || !alpha {
		t.Errorf("Plugins() = %+v; want the missing folder and alpha missing", e.host.Plugins())
	}
	if got := e.log.lines("[WARN]", "the plugin folder does not exist", "dir="+dir); len(got) != 1 {
		t.Errorf("want one warning about the folder, got %q\nlog:\n%s", got, e.log)
	}
	recorded(t, e.reg, "alpha", idp.Missing, "has no plugin binary")
}

// Inspect reads the folder and the settings only: the configured binary is
// found (with its pin), the others are listed as Load lists them, and
// nothing is started.
func TestInspectLaunchesNothing(t *testing.T) {
	t.Parallel()
	dir := pluginDir(t, "alpha", "empty")
	writeFile(t, filepath.Join(dir, "README.md"), 0o644)
	infos, err := pluginhost.Inspect(pluginhost.Options{
		Dir:        dir,
		Settings:   settingsOf(map[string]map[string]string{"alpha": providertest.FakeSettings()}),
		Configured: []string{"alpha", "ghost"},
		SHA256:     map[string]string{"alpha": strings.Repeat("ab", 32)},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]pluginhost.State{"alpha": pluginhost.Found, "empty": pluginhost.Unconfigured, "ghost": pluginhost.Missing, "": pluginhost.Skipped}
	if len(infos) != len(want) {
		t.Errorf("Inspect() = %+v; want %d entries", infos, len(want))
	}
	for _, in := range infos {
		if st, ok := want[in.Code]; !ok || in.State != st || in.PID != 0 {
			t.Errorf("Inspect() entry %+v; want state %s, no process", in, st)
		}
		if in.Code == "alpha" && !in.Pinned {
			t.Errorf("alpha = %+v; want pinned", in)
		}
	}
	if runsBinary(filepath.Join(dir, pluginhost.FilePrefix+"alpha")) {
		t.Error("Inspect started alpha")
	}
}

// runsBinary reports whether a process runs path.
func runsBinary(path string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if argv0, _, _ := strings.Cut(string(cmd), "\x00"); argv0 == path {
			return true
		}
	}
	return false
}
