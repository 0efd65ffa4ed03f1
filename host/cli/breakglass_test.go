package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

const profile = "/api/v1/personal/profile"

// refresh presents a refresh token.
func refresh(k *kerneltest.Kernel, token string) kerneltest.Reply {
	k.T.Helper()
	return k.Do("POST", "/api/v1/auth/refresh", "", map[string]string{"refreshToken": token})
}

// login answers a password login.
func login(k *kerneltest.Kernel, account, pw string) kerneltest.Reply {
	k.T.Helper()
	return k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": account, "password": pw})
}

// TestResetPasswordInProcess: on SQLite with the in-process cache, a
// generated password replaces the old one (mustChangePassword), the user's
// sessions end in the database (their refresh tokens are refused at once),
// and the command says what the running service still accepts: the access
// tokens, from its cached session marks, which is what happens.
func TestResetPasswordInProcess(t *testing.T) {
	s := startShared(t, nil)
	k := s.k
	old := k.Login("superAdmin", kerneltest.AdminPassword)

	out, errOut, err := s.cmd("", "user", "reset-password", "SUPERADMIN")
	if err != nil {
		t.Fatalf("reset-password: %v\n%s", err, errOut)
	}
	pw := s.generated(out)
	if !strings.Contains(out, "1 session(s) ended") || !strings.Contains(out, "must choose a new password") {
		t.Errorf("reset-password output lacks the session count or the must-change notice:\n%s", out)
	}
	// The op log has no place for actions without a request: an INFO line,
	// without the password.
	if !strings.Contains(errOut, "password reset from the command line: account=superAdmin user_id=1") || strings.Contains(errOut, pw) {
		t.Errorf("the command's log lacks the INFO line or shows the password:\n%s", errOut)
	}
	if !strings.Contains(errOut, "Restart the service") || !strings.Contains(errOut, "PermissionMinutes (20 minutes)") {
		t.Errorf("reset-password with the in-process cache does not say what still holds:\n%s", errOut)
	}
	refresh(k, old.RefreshToken).ExpectCode(t, "refresh after the reset", errcode.RefreshTokenInvalid)
	k.Do("GET", profile, old.AccessToken, nil).ExpectCode(t, "old access token, in-process cache (the documented delay)", 0)
	login(k, "superAdmin", kerneltest.AdminPassword).ExpectCode(t, "old password", errcode.PasswordWrong)
	if tp := k.Login("superAdmin", pw); !tp.MustChangePassword {
		t.Error("a generated password does not require a change at the next login")
	}
	u := k.Ent().SysUser.Query().Where(sysuser.Account("superAdmin")).OnlyX(context.Background())
	if u.PasswordChangedAt == nil || !u.MustChangePassword {
		t.Errorf("after the reset password_changed_at = %v, mustChangePassword = %v", u.PasswordChangedAt, u.MustChangePassword)
	}
}

// TestResetPasswordStdin: a password from standard input must meet the
// policy (nothing changes otherwise) and, with a history count, differ
// from the current one; a good one logs in and must be changed.
func TestResetPasswordStdin(t *testing.T) {
	s := startShared(t, nil)
	k := s.k
	ctx := context.Background()
	if err := k.Settings().Set(ctx, "sys.security.password.historyCount", "1"); err != nil {
		t.Fatal(err)
	}
	if err := k.Settings().Set(ctx, "sys.security.password.requireSpecial", "true"); err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name, stdin, want string
	}{
		{"too weak", "short\n", "too weak"},
		{"no special character", "Abcdefgh12345\n", "requireSpecial=true"},
		{"the current password", kerneltest.AdminPassword + "\n", "must not be the same"},
		{"empty line", "\n", "no password on standard input"},
		{"nothing", "", "no password on standard input"},
		{"too long", strings.Repeat("Aa1#", 300) + "\n", "longer than 1024 bytes"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := s.cmd(c.stdin, "user", "reset-password", "superAdmin", "--stdin")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("reset-password --stdin %q = %v, want an error saying %q", c.name, err, c.want)
			}
		})
	}
	// Nothing changed: the old password still logs in, without a forced change.
	if tp := k.Login("superAdmin", kerneltest.AdminPassword); tp.MustChangePassword {
		t.Fatal("a refused reset changed the account")
	}

	const chosen = "Chosen#Passw0rd 2"
	out, errOut, err := s.cmd(chosen+"\r\n", "user", "reset-password", "superadmin", "--stdin", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out+errOut, chosen) {
		t.Errorf("the command wrote the password it read:\n%s\n%s", out, errOut)
	}
	var res struct {
		Account            string `json:"account"`
		Password           string `json:"password"`
		Generated          bool   `json:"generated"`
		MustChangePassword bool   `json:"mustChangePassword"`
		SessionsRevoked    int    `json:"sessionsRevoked"`
		LockoutCleared     bool   `json:"lockoutCleared"`
		SharedCache        bool   `json:"sharedCache"`
	}
	decode(t, out, &res)
	if res.Account != "superAdmin" || res.Password != "" || res.Generated || !res.MustChangePassword ||
		res.SessionsRevoked != 1 || res.LockoutCleared || res.SharedCache {
		t.Fatalf("reset-password --stdin --json = %+v", res)
	}
	if tp := k.Login("superAdmin", chosen); !tp.MustChangePassword {
		t.Error("a password set from the command line does not require a change at the next login")
	}
}

// TestResetPasswordGeneratedMeetsThePolicy: the generated password meets a
// policy that asks for a special character and more than the default
// length.
func TestResetPasswordGeneratedMeetsThePolicy(t *testing.T) {
	s := startShared(t, nil)
	ctx := context.Background()
	for key, v := range map[string]string{"sys.security.password.requireSpecial": "true", "sys.security.password.minLength": "24"} {
		if err := s.k.Settings().Set(ctx, key, v); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := s.cmd("", "user", "reset-password", "superAdmin")
	if err != nil {
		t.Fatal(err)
	}
	pw := s.generated(out)
	if len(pw) < 24 || !strings.ContainsAny(pw, "!#%+-=?@^_~") {
		t.Fatalf("generated password %q does not meet the policy", pw)
	}
	s.k.Login("superAdmin", pw)
}

func TestResetPasswordUnknownAccount(t *testing.T) {
	s := startShared(t, nil)
	_, _, err := s.cmd("", "user", "reset-password", "nobody")
	if err == nil || !strings.Contains(err.Error(), `no live user has the account "nobody"`) {
		t.Fatalf("reset-password of an unknown account = %v", err)
	}
	if _, _, err := s.cmd("", "user", "reset-password"); err == nil {
		t.Fatal("reset-password without an account was accepted")
	}
}

// TestResetPasswordConcurrent: two resets at once leave one of the two
// passwords, whole: exactly one of them logs in.
func TestResetPasswordConcurrent(t *testing.T) {
	s := startShared(t, nil)
	resetTwice(t, s)
}

// resetTwice runs two --stdin resets at once and checks that exactly one
// of the two passwords logs in.
func resetTwice(t *testing.T, s *shared) {
	t.Helper()
	pws := []string{"First#Passw0rd", "Second#Passw0rd"}
	var wg sync.WaitGroup
	errs := make([]error, len(pws))
	for i, pw := range pws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = runIn(context.Background(), s.opts, pw+"\n", "user", "reset-password", "superAdmin", "--stdin",
				"--content-root", s.dir, "--environment", "Development")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("reset %d: %v", i, err)
		}
	}
	ok := 0
	for _, pw := range pws {
		if r := login(s.k, "superAdmin", pw); r.Code == 0 {
			ok++
		} else if r.Code != int(errcode.PasswordWrong) {
			t.Fatalf("login after the concurrent resets = %s", r.Raw)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of the two concurrently set passwords log in, want exactly 1", ok)
	}
}

// TestCreateSuperAdmin: a new super-admin logs in (generated or stdin
// password, must change it); an existing account in any case, a bad
// account or a weak password is refused and creates nothing.
func TestCreateSuperAdmin(t *testing.T) {
	s := startShared(t, nil)
	k := s.k
	out, _, err := s.cmd("", "user", "create-superadmin", "rescue", "--name", "Rescue admin")
	if err != nil {
		t.Fatal(err)
	}
	pw := s.generated(out)
	tp := k.Login("RESCUE", pw)
	if !tp.IsSuperAdmin || !tp.MustChangePassword {
		t.Fatalf("the new super-admin logs in with isSuperAdmin %v, mustChangePassword %v", tp.IsSuperAdmin, tp.MustChangePassword)
	}
	u := k.Ent().SysUser.GetX(context.Background(), tp.UserID)
	if u.Name != "Rescue admin" || u.AccountNorm != "rescue" || !u.Enabled || u.OrgID == nil || *u.OrgID != 1 {
		t.Errorf("the new super-admin row: %+v", u)
	}
	if n := k.Ent().SysUserRole.Query().CountX(context.Background()); n != 0 {
		t.Errorf("the super-admin was given %d role(s)", n)
	}

	out, _, err = s.cmd("Stdin#Passw0rd\n", "user", "create-superadmin", "second", "--stdin", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		UserID    int64  `json:"userId"`
		Password  string `json:"password"`
		Generated bool   `json:"generated"`
		Worker    int    `json:"worker"`
	}
	decode(t, out, &res)
	if res.UserID <= 0 || res.Password != "" || res.Generated || res.Worker != 63 {
		t.Fatalf("create-superadmin --stdin --json = %+v (want worker 63 without Redis)", res)
	}
	if tp := k.Login("second", "Stdin#Passw0rd"); tp.UserID != res.UserID || !tp.IsSuperAdmin {
		t.Fatalf("login of the second super-admin = %+v", tp)
	}

	before := k.Ent().SysUser.Query().CountX(context.Background())
	refused := []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"existing account, other case", "", []string{"SUPERADMIN"}, "already has the account"},
		{"existing new account", "", []string{"Rescue"}, "already has the account"},
		{"space in the account", "", []string{"a b"}, "not a valid account"},
		{"account too long", "", []string{strings.Repeat("a", 65)}, "not a valid account"},
		{"weak stdin password", "weak\n", []string{"third", "--stdin"}, "too weak"},
		{"name too long", "", []string{"fourth", "--name", strings.Repeat("n", 65)}, "--name"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := s.cmd(c.stdin, append([]string{"user", "create-superadmin"}, c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("create-superadmin %v = %v, want an error saying %q", c.args, err, c.want)
			}
		})
	}
	if after := k.Ent().SysUser.Query().CountX(context.Background()); after != before {
		t.Fatalf("refused creations left %d new row(s)", after-before)
	}
}

// TestSessionRevoke: --user ends one user's sessions (their refresh
// tokens are refused), --all needs --yes and ends everyone's.
func TestSessionRevoke(t *testing.T) {
	s := startShared(t, nil)
	k := s.k
	k.User("alice", "Alice#Passw0rd")
	admin := k.Login("superAdmin", kerneltest.AdminPassword)
	alice1 := k.Login("alice", "Alice#Passw0rd")
	alice2 := k.Login("ALICE", "Alice#Passw0rd")

	out, errOut, err := s.cmd("", "session", "revoke", "--user", "Alice")
	if err != nil || !strings.Contains(out, "2 session(s) of alice") {
		t.Fatalf("revoke --user = %q, %v", out, err)
	}
	if !strings.Contains(errOut, "Restart the service") {
		t.Errorf("revoke with the in-process cache does not say what still holds:\n%s", errOut)
	}
	for _, tp := range []kerneltest.Tokens{alice1, alice2} {
		refresh(k, tp.RefreshToken).ExpectCode(t, "alice's refresh after revoke --user", errcode.RefreshTokenInvalid)
	}
	admin = refreshed(t, k, admin) // the admin's session is untouched

	refusals := []struct {
		args []string
		want string
	}{
		{[]string{"--all"}, "--yes"},
		{nil, "--user <account> or --all"},
		{[]string{"--all", "--yes", "--user", "alice"}, "not both"},
		{[]string{"--user", "nobody"}, `no live user has the account "nobody"`},
	}
	for _, c := range refusals {
		if _, _, err := s.cmd("", append([]string{"session", "revoke"}, c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("revoke %v = %v, want an error saying %q", c.args, err, c.want)
		}
	}
	refreshed(t, k, admin) // none of the refused commands ended anything

	k.Login("alice", "Alice#Passw0rd")
	out, _, err = s.cmd("", "session", "revoke", "--all", "--yes", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Scope   string `json:"scope"`
		Revoked int    `json:"revoked"`
	}
	decode(t, out, &res)
	if res.Scope != "all" || res.Revoked != 2 {
		t.Fatalf("revoke --all --json = %+v, want 2 sessions (the admin's and alice's)", res)
	}
	refresh(k, admin.RefreshToken).ExpectCode(t, "admin's refresh after revoke --all", errcode.RefreshTokenInvalid)
}

// refreshed refreshes tp and returns the new pair, failing the test unless
// the refresh succeeds.
func refreshed(t *testing.T, k *kerneltest.Kernel, tp kerneltest.Tokens) kerneltest.Tokens {
	t.Helper()
	var next kerneltest.Tokens
	refresh(k, tp.RefreshToken).ExpectCode(t, "refresh", 0).Decode(t, &next)
	return next
}

// TestOpenAPIEqualsTheServedDocument: `adminkernel openapi` writes the
// document a Development kernel with the same settings serves, byte for
// byte, to stdout and to --out (0644); it needs no database.
func TestOpenAPIEqualsTheServedDocument(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		modules []host.Module
	}{
		{"defaults", nil, nil},
		{"a disabled module and a callback path", map[string]string{
			"Api__DisabledModules__0":                "Monitor",
			"Service__ExternalAuth__CallbackBaseUrl": "https://admin.example.com/gateway",
		}, nil},
		{"an application module", nil, []host.Module{shopModule()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startShared(t, c.env, c.modules...)
			served := contract(t, s.k)
			// No database for the command: a path where none exists.
			t.Setenv("Service__Database__ConnectionString", "Data Source="+filepath.Join(t.TempDir(), "absent", "none.db"))
			out, _, err := s.cmd("", "openapi")
			if err != nil {
				t.Fatal(err)
			}
			if len(c.modules) > 0 && (!strings.Contains(out, "/api/v1/shop/cart") || !strings.Contains(out, "CartEmpty")) {
				t.Fatal("openapi lacks the application module's route or error code")
			}
			if out != string(served) {
				t.Fatalf("openapi differs from the served document (%d vs %d bytes)", len(out), len(served))
			}
			// The environment does not change the document (the service
			// serves it in Development only; the command writes it anywhere).
			prod, _, err := runIn(context.Background(), s.opts, "", "openapi", "--content-root", s.dir, "--environment", "Production")
			if err != nil || prod != out {
				t.Fatalf("openapi in Production differs (%v)", err)
			}
			file := filepath.Join(t.TempDir(), "contract.json")
			if _, _, err := s.cmd("", "openapi", "--out", file); err != nil {
				t.Fatal(err)
			}
			body, err := os.ReadFile(file)
			if err != nil || string(body) != string(served) {
				t.Fatalf("--out file differs from the served document (%v)", err)
			}
			if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o644 {
				t.Fatalf("--out file mode = %v, %v, want 0644", fi.Mode().Perm(), err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(file)), "absent")); !os.IsNotExist(err) {
				t.Fatalf("openapi touched the database folder (stat: %v)", err)
			}
		})
	}
}

// shopModule is an application's module: a route on a service of its own
// and a consumer error code.
func shopModule() host.Module {
	type cart struct {
		Items []string `json:"items"`
	}
	return host.Module{
		Name: "Shop",
		ErrorCodes: []errcode.Enum{{Name: "ShopError", Members: []errcode.Member{
			{Code: 60010, Name: "CartEmpty", MsgKey: "error.shop.cartEmpty"},
		}}},
		Routes: func(d *module.Deps, api *route.Group) error {
			api.Get("/shop/cart", route.Session, func(c fiber.Ctx) error {
				return envelope.OK(c, cart{})
			}).Doc("My cart", nil, cart{})
			return nil
		},
	}
}

// TestCommandsNeedTheTables: on a database without the kernel's tables the
// commands say to migrate first instead of failing on a missing table.
func TestCommandsNeedTheTables(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("Service__Database__DbType", "Sqlite")
	t.Setenv("Service__Database__ConnectionString", "Data Source="+filepath.Join(dir, "empty.db"))
	for _, args := range [][]string{
		{"user", "reset-password", "superAdmin"},
		{"user", "create-superadmin", "rescue"},
		{"session", "revoke", "--all", "--yes"},
	} {
		_, _, err := runIn(context.Background(), host.Options{}, "", append(args, "--content-root", dir, "--environment", "Development")...)
		if err == nil || !strings.Contains(err.Error(), "adminkernel migrate") {
			t.Errorf("%v on an empty database = %v, want the advice to migrate", args, err)
		}
	}
}
