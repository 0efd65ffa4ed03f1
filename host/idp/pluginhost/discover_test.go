package pluginhost_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/idp/pluginhost"
)

func TestDiscover(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	writeFile(t, p(pluginhost.FilePrefix+"code_host"), 0o755)
	writeFile(t, p(pluginhost.FilePrefix+"Team_Chat"), 0o700)
	writeFile(t, p(pluginhost.FilePrefix+"noexec"), 0o644)
	writeFile(t, p(pluginhost.FilePrefix+"bad-name"), 0o755)
	writeFile(t, p(pluginhost.FilePrefix+strings.Repeat("x", 33)), 0o755)
	writeFile(t, p(pluginhost.FilePrefix+"everyone"), 0o777)
	writeFile(t, p(pluginhost.FilePrefix+"TEAM_CHAT"), 0o755)
	writeFile(t, p("notes.txt"), 0o644)
	if err := os.Mkdir(p(pluginhost.FilePrefix+"folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(p(pluginhost.FilePrefix+"code_host"), p(pluginhost.FilePrefix+"link")); err != nil {
		t.Fatal(err)
	}

	found, skipped, err := pluginhost.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, c := range found {
		codes = append(codes, c.Code)
		if c.Path != p(pluginhost.FilePrefix+c.Code) {
			t.Errorf("candidate %s path = %s", c.Code, c.Path)
		}
	}
	// TEAM_CHAT and Team_Chat differ only in case: the first (in
	// directory order) wins, the other is skipped.
	if len(codes) != 2 || codes[0] != "TEAM_CHAT" || codes[1] != "code_host" {
		t.Errorf("found %v, want [TEAM_CHAT code_host]", codes)
	}
	want := map[string]string{
		pluginhost.FilePrefix + "noexec":                "not executable",
		pluginhost.FilePrefix + "bad-name":              "not a provider code",
		pluginhost.FilePrefix + strings.Repeat("x", 33): "not a provider code",
		pluginhost.FilePrefix + "everyone":              "writable by every user",
		pluginhost.FilePrefix + "Team_Chat":             "already taken",
		"notes.txt":                                     "not named",
		pluginhost.FilePrefix + "folder":                "not a regular file",
		pluginhost.FilePrefix + "link":                  "symbolic link",
	}
	got := map[string]string{}
	for _, s := range skipped {
		got[filepath.Base(s.Path)] = s.Reason
	}
	for name, reason := range want {
		if !strings.Contains(got[name], reason) {
			t.Errorf("skipped %s: reason %q, want one containing %q", name, got[name], reason)
		}
	}
	if len(got) != len(want) {
		t.Errorf("skipped %v, want %d files", got, len(want))
	}

	if f, s, err := pluginhost.Discover(p("absent")); err != nil || f != nil || s != nil {
		t.Errorf("Discover(missing folder) = %v, %v, %v; want nothing", f, s, err)
	}
}

func TestResolveDir(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	cases := []struct{ configured, root, want string }{
		{"", "/srv/app", filepath.Join(filepath.Dir(exe), "plugins")},
		{"/opt/plugins/", "/srv/app", "/opt/plugins"},
		{"bin/plugins", "/srv/app", "/srv/app/bin/plugins"},
	}
	for _, c := range cases {
		got, err := pluginhost.ResolveDir(c.configured, c.root)
		if err != nil || got != c.want {
			t.Errorf("ResolveDir(%q, %q) = %q, %v; want %q", c.configured, c.root, got, err, c.want)
		}
	}
}

func TestBackoffIsCapped(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n    int
		want time.Duration
	}{{1, 500 * time.Millisecond}, {2, time.Second}, {3, 2 * time.Second}, {7, 30 * time.Second}, {100, 30 * time.Second}}
	for _, c := range cases {
		if got := pluginhost.Backoff(c.n, pluginhost.DefaultMinBackoff, pluginhost.DefaultMaxBackoff); got != c.want {
			t.Errorf("backoff(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}
