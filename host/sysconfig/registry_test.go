package sysconfig

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/internal/race"
)

// literals are the string literals of the non-test Go files under a tree:
// each value with the directories (packages) it occurs in.
type literals map[string]map[string]bool

// notReaders are the files that name keys without reading them: the
// registry itself and the seed rows.
var notReaders = []string{filepath.Join("sysconfig", "registry.go"), filepath.Join("seed", "data.go")}

// scanLiterals parses every non-test .go file under root (go/parser) and
// collects its string literals.
func scanLiterals(root string) (literals, error) {
	lits := literals{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if slices.Contains(notReaders, rel) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.Dir(rel)
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					if lits[v] == nil {
						lits[v] = map[string]bool{}
					}
					lits[v][dir] = true
				}
			}
			return true
		})
		return nil
	})
	return lits, err
}

// readerProblems compares the registry with the code: every "sys." literal
// used as a key is a registered key of a built area (a literal ending in
// "." is a prefix and must start one), and every registered key of a built
// area is read — an exact key as a literal, a family as its prefix literal
// with its last segment as a literal in the same package.
func readerProblems(reg *Registry, lits literals) []string {
	var problems []string
	built := reg.Entries()
	for v := range lits {
		if !strings.HasPrefix(v, SysPrefix) {
			continue
		}
		if strings.HasSuffix(v, ".") {
			if !slices.ContainsFunc(built, func(e Entry) bool { return strings.HasPrefix(e.Key, v) }) {
				problems = append(problems, "the prefix "+strconv.Quote(v)+" starts no registered key")
			}
			continue
		}
		if _, ok := reg.Lookup(v); !ok {
			problems = append(problems, strconv.Quote(v)+" is read but not registered")
		}
	}
	for _, e := range built {
		if !e.IsFamily() {
			if lits[e.Key] == nil && strings.HasPrefix(e.Key, SysPrefix) {
				problems = append(problems, e.Key+" is registered but nothing reads it")
			}
			continue
		}
		star := strings.Index(e.Key, "*")
		prefix, last := e.Key[:star], e.Key[star+2:]
		read := false
		for dir := range lits[prefix] {
			read = read || lits[last][dir]
		}
		if !read {
			problems = append(problems, e.Key+" is registered but nothing reads it (no "+strconv.Quote(prefix)+" with "+strconv.Quote(last)+" in one package)")
		}
	}
	slices.Sort(problems)
	return problems
}

// TestRegistryMatchesTheReaders runs the comparison over the host tree.
func TestRegistryMatchesTheReaders(t *testing.T) {
	reg, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	lits, err := scanLiterals("..")
	if err != nil {
		t.Fatal(err)
	}
	if len(lits) < 1000 {
		t.Fatalf("only %d string literals under host/: the scan missed the tree", len(lits))
	}
	for _, p := range readerProblems(reg, lits) {
		t.Error(p)
	}
}

// TestReaderProblemsFindsBothDirections: the comparison fails on a tree
// with an unregistered reader, a planned key that is read and registered
// keys nobody reads.
func TestReaderProblemsFindsBothDirections(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", `package a
const (
	unregistered = "sys.security.session.idleMinutes"
	prefix       = "sys.nothing."
	access       = "sys.security.session.accessMinutes"
	ea           = "sys.externalauth."
	on           = "enabled"
)
`)
	write("b/b.go", `package b
const link = "linkByAccount" // not in the package of the prefix
`)
	write("a/a_test.go", `package a
const refresh = "sys.security.session.refreshMinutes" // tests are not readers
`)
	reg, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	lits, err := scanLiterals(root)
	if err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(readerProblems(reg, lits), "\n")
	for _, want := range []string{
		`"sys.security.session.idleMinutes" is read but not registered`,
		`the prefix "sys.nothing." starts no registered key`,
		"sys.security.session.refreshMinutes is registered but nothing reads it",
		"sys.externalauth.*.linkByAccount is registered but nothing reads it",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems do not include %q:\n%s", want, problems)
		}
	}
	for _, read := range []string{"sys.security.session.accessMinutes is", "sys.externalauth.*.enabled is"} {
		if strings.Contains(problems, read) {
			t.Errorf("a read key is reported: %q\n%s", read, problems)
		}
	}
}

func TestEntryValidAndExpected(t *testing.T) {
	reg, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key, value string
		ok         bool
	}{
		{"sys.security.session.accessMinutes", "120", true},
		{"sys.security.session.accessMinutes", "1440", true},
		{"sys.security.session.accessMinutes", "1441", false},
		{"sys.security.session.accessMinutes", "0", false},
		{"sys.security.session.accessMinutes", "99999999999", false},
		{"sys.security.session.accessMinutes", "99999999999999999999999", false},
		{"sys.security.session.accessMinutes", " 120", false},
		{"sys.security.session.accessMinutes", "12.5", false},
		{"sys.security.session.accessMinutes", "", false},
		{"sys.security.loginLock.maxFailCount", "0", true},
		{"sys.security.captcha.enabled", "true", true},
		{"sys.security.captcha.enabled", "false", true},
		{"sys.security.captcha.enabled", "TRUE", false},
		{"sys.security.captcha.enabled", "1", false},
		{"sys.security.captcha.enabled", "yes", false},
		{"sys.security.captcha.enabled", "", false},
		{"sys.site.title", "", true},
		{"sys.site.title", strings.Repeat("题", 128), true},
		{"sys.site.title", strings.Repeat("题", 129), false},
		{"sys.site.copyrightUrl", "", true},
		{"sys.site.copyrightUrl", "https://example.com/about", true},
		{"sys.site.copyrightUrl", "/about", true},
		{"sys.site.copyrightUrl", "//evil.example", false},
		{"sys.site.copyrightUrl", "javascript:alert(1)", false},
		{"sys.site.copyrightUrl", "https://", false},
		{"sys.site.logo", "http://a.example/l.png x", false},
		{"sys.externalauth.oidc.enabled", "false", true},
		{"sys.externalauth.my_idp-2.linkByAccount", "true", true},
		{"sys.externalauth.oidc.provisioning", "provision", true},
		{"sys.externalauth.oidc.provisioning", "Provision", true},
		{"sys.externalauth.oidc.provisioning", "DENY", true},
		{"sys.externalauth.oidc.provisioning", "provision ", false},
		{"sys.externalauth.oidc.provisioning", "auto", false},
		{"sys.externalauth.oidc.defaultRoleIds", "3, 1", true},
		{"sys.externalauth.oidc.defaultRoleIds", "", true},
		{"sys.externalauth.oidc.defaultRoleIds", "3,,1", false},
		{"sys.externalauth.oidc.defaultRoleIds", "0", false},
		{"sys.externalauth.oidc.defaultOrgId", "", true},
		{"sys.externalauth.oidc.defaultOrgId", "7", true},
		{"sys.externalauth.oidc.defaultOrgId", "-1", false},
	}
	for _, tc := range tests {
		e, ok := reg.Lookup(tc.key)
		if !ok {
			t.Errorf("%s is not registered", tc.key)
			continue
		}
		if got := e.Valid(tc.value); got != tc.ok {
			t.Errorf("%s = %q: valid %v, want %v (%s)", tc.key, tc.value, got, tc.ok, e.Expected())
		}
		err := reg.Check(tc.key, &tc.value)
		if tc.ok != (err == nil) {
			t.Errorf("Check(%s, %q) = %v", tc.key, tc.value, err)
		}
		if e, isErr := errcode.As(err); isErr && (e.Code != errcode.ConfigValueInvalid || e.Args["key"] != tc.key || e.Args["expected"] == "") {
			t.Errorf("Check(%s, %q) = %+v, want 43012 with key and expected", tc.key, tc.value, e)
		}
	}
	if e, _ := reg.Lookup("sys.security.session.accessMinutes"); e.Expected() != "integer 1..1440" {
		t.Errorf("expected = %q", e.Expected())
	}
}

func TestCheckKeys(t *testing.T) {
	reg, err := NewRegistry(Entry{Key: "biz.retries", Kind: KindInt, Min: 0, Max: 9, Default: "3", Area: "biz"})
	if err != nil {
		t.Fatal(err)
	}
	v := func(s string) *string { return &s }
	for _, tc := range []struct {
		key   string
		value *string
		code  errcode.Code // 0: accepted
	}{
		{"sys.no.such.key", v("x"), errcode.ConfigKeyUnknown},
		{"SYS.security.session.accessMinutes", v("10"), errcode.ConfigKeyUnknown},
		{"sys.security.captcha.type", v("slider"), errcode.ConfigValueInvalid},
		{"sys.security.captcha.type", v("math"), 0},
		{"sys.externalauth.a.b.enabled", v("true"), errcode.ConfigKeyUnknown},
		{"sys.externalauth..enabled", v("true"), errcode.ConfigKeyUnknown},
		{"sys.security.session.accessMinutes", nil, 0},
		{"biz.x", v("anything at all"), 0},
		{"biz.retries", v("5"), 0},
		{"biz.retries", v("10"), errcode.ConfigValueInvalid},
	} {
		err := reg.Check(tc.key, tc.value)
		e, isErr := errcode.As(err)
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("Check(%s) = %v, want accepted", tc.key, err)
		case tc.code != 0 && (!isErr || e.Code != tc.code || e.Args["key"] != tc.key):
			t.Errorf("Check(%s) = %v, want %d with the key", tc.key, err, tc.code)
		}
	}
}

func TestNewRegistryRefusesBadEntries(t *testing.T) {
	for name, e := range map[string]Entry{
		"kernel namespace":             {Key: "sys.biz.x", Kind: KindString},
		"kernel namespace in capitals": {Key: "Sys.biz.x", Kind: KindString},
		"duplicate":                    {Key: "biz.a", Kind: KindString},
		"bad default":                  {Key: "biz.b", Kind: KindInt, Min: 1, Max: 5, Default: "9"},
		"enum without values":          {Key: "biz.c", Kind: KindEnum},
		"two stars":                    {Key: "biz.*.*.x", Kind: KindString},
	} {
		extra := []Entry{{Key: "biz.a", Kind: KindString}, e}
		if name != "duplicate" {
			extra = extra[1:]
		}
		if _, err := NewRegistry(extra...); err == nil {
			t.Errorf("%s: NewRegistry accepted %+v", name, e)
		}
	}
}

// TestCachedSwitchAndNumberDoNotAllocate: the per-request readers read a
// cached value (valid or not) without allocating.
func TestCachedSwitchAndNumberDoNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are checked without -race (make test runs this again without it)")
	}
	mem, err := memcache.New(memcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mem.Close() })
	reg, err := NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := New(nil, mem, time.Hour, nil, reg, nil)
	set := func(key, enc string) {
		t.Helper()
		if err := mem.Set(ctx, KeyPrefix+key, []byte(enc), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	const on, window = "sys.security.rateLimit.enabled", "sys.security.rateLimit.windowSeconds"
	set(on, "1false")
	set(window, "1 30 ")
	sw, num := s.Switch(on), s.Number(window)
	if sw(ctx) || num(ctx) != 30 {
		t.Fatalf("switch %v, number %d; want false, 30", sw(ctx), num(ctx))
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = sw(ctx), num(ctx) }); n != 0 {
		t.Errorf("%v allocations per cached read", n)
	}
	set(window, "1 99999 ") // out of range: the default, one WARN
	if got := num(ctx); got != 60 {
		t.Fatalf("an out-of-range window reads %d, want the default 60", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = num(ctx) }); n != 0 {
		t.Errorf("%v allocations per cached read of an invalid value", n)
	}
}
