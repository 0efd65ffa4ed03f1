package host_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/seed"
)

var filePassword = regexp.MustCompile(`(?m)^password: (\S+)$`)

// passwordFrom reads the generated password of a password file and checks
// the file is the owner's alone.
func passwordFrom(t *testing.T, path string) string {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the password file: %v", err)
	}
	if mode := st.Mode().Perm(); mode != 0o600 {
		t.Fatalf("%s has mode %o, want 600", path, mode)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := filePassword.FindStringSubmatch(string(body))
	if m == nil || len(m[1]) != seed.GeneratedPasswordLen || !strings.Contains(string(body), "account:  superAdmin\n") {
		t.Fatalf("%s holds:\n%s", path, body)
	}
	return m[1]
}

// loginStatus logs in over the HTTP stack and returns the envelope code.
func loginStatus(t *testing.T, k *host.Kernel, account, pw string) int {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/auth/login", strings.NewReader(`{"account":"`+account+`","password":"`+pw+`"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := k.App().Test(req, fiberTestConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Code int `json:"code"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("login answered %d %s", resp.StatusCode, raw)
	}
	return env.Code
}

// TestProductionGeneratedPasswordGoesToAFile: in Production the generated
// super-admin password is never logged; it is written once to a 0600 file
// of the data directory, which the log names, and it logs in. A second
// seeding with the file still there writes a new file and leaves the
// first alone.
func TestProductionGeneratedPasswordGoesToAFile(t *testing.T) {
	dir := t.TempDir()
	env := []string{testKey, "Service__Database__EnableCodeFirstInProduction=true", "Service__Security__Password__Pbkdf2Iterations=100000"}
	k, log := start(t, load(t, dir, config.Production, env...))
	path := filepath.Join(dir, "data", seed.PasswordFileName)
	plain := passwordFrom(t, path)
	if strings.Contains(log, plain) || bannerPassword.MatchString(log) {
		t.Fatalf("the log shows the generated password:\n%s", log)
	}
	want := "super-admin created; its generated password is in " + path + " (read it, then delete the file)"
	if !strings.Contains(log, "[WARN]") || !strings.Contains(log, want) {
		t.Fatalf("the log does not name the file (%q):\n%s", want, log)
	}
	if code := loginStatus(t, k, "superAdmin", plain); code != 0 {
		t.Fatalf("login with the password of the file = code %d", code)
	}
	if code := loginStatus(t, k, "superAdmin", plain+"x"); code == 0 {
		t.Fatal("login with a wrong password succeeded: the check above proves nothing")
	}
	k.Close()

	// A second empty database under the same content root: the file of the
	// first is still there and is not overwritten.
	k2, log2 := start(t, load(t, dir, config.Production, append(env, "Service__Database__ConnectionString=Data Source=data/second.db")...))
	if again := passwordFrom(t, path); again != plain {
		t.Fatal("the second seeding overwrote the first password file")
	}
	m := regexp.MustCompile(`generated password is in (\S+) \(read it`).FindStringSubmatch(log2)
	if m == nil || m[1] == path || filepath.Dir(m[1]) != filepath.Join(dir, "data") {
		t.Fatalf("second seeding: want a new file in the data directory named by the log:\n%s", log2)
	}
	second := passwordFrom(t, m[1])
	if strings.Contains(log2, second) || second == plain {
		t.Fatalf("second password logged or repeated:\n%s", log2)
	}
	if code := loginStatus(t, k2, "superAdmin", second); code != 0 {
		t.Fatalf("login with the second file's password = code %d", code)
	}
}

// TestDevelopmentBannerIsAligned: outside Production the banner stays in
// the log, every line of its box as wide as the others.
func TestDevelopmentBannerIsAligned(t *testing.T) {
	for _, env := range []string{config.Development, config.Staging} {
		t.Run(env, func(t *testing.T) {
			environ := []string{"Service__Security__Password__Pbkdf2Iterations=100000"}
			if env == config.Staging {
				environ = append(environ, testKey, "Service__Database__EnableCodeFirstInProduction=true")
			}
			dir := t.TempDir()
			_, log := start(t, load(t, dir, env, environ...))
			if _, err := os.Stat(filepath.Join(dir, "data", seed.PasswordFileName)); !os.IsNotExist(err) {
				t.Fatalf("%s wrote a password file (stat: %v)", env, err)
			}
			var box []string
			for _, l := range strings.Split(log, "\n") {
				if strings.HasPrefix(l, "+-") || strings.HasPrefix(l, "| ") {
					box = append(box, l)
				}
			}
			if len(box) != 7 || !bannerPassword.MatchString(log) {
				t.Fatalf("want a box of 7 lines with the password, got %d:\n%s", len(box), log)
			}
			for _, l := range box {
				if len(l) != len(box[0]) || !strings.HasSuffix(l, "+") && !strings.HasSuffix(l, " |") {
					t.Fatalf("box lines differ in width:\n%s", strings.Join(box, "\n"))
				}
			}
		})
	}
}
