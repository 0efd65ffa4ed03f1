package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"

	_ "modernc.org/sqlite"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/cli"
	"github.com/adminkernel/kernel/host/errcode"
)

const signingKey = "test-signing-key-0123456789abcdef0123456789"

// run executes the command tree in dir and returns stdout, stderr and the error.
func run(t *testing.T, ctx context.Context, opts host.Options, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := cli.New(opts)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedSettingsNameFileAndPosition(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "appsettings.json"), "{\n  \"Service\": {\n    \"Database\": { \"DbType\": \"Sqlite\", }\n  }\n}\n")
	_, _, err := run(t, context.Background(), host.Options{}, "config", "--content-root", dir)
	if err == nil {
		t.Fatal("a malformed appsettings.json was accepted")
	}
	for _, want := range []string{"appsettings.json", "line 3", "column"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestUnknownDbTypeListsValidOnes(t *testing.T) {
	t.Setenv("Service__Database__DbType", "Oracle")
	_, _, err := run(t, context.Background(), host.Options{}, "serve", "--content-root", t.TempDir(), "--environment", "Development")
	if err == nil {
		t.Fatal("an unknown DbType was accepted")
	}
	for _, want := range []string{"Oracle", "valid values: Sqlite, MySql, PostgreSQL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not list %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "SqlServer") {
		t.Errorf("error %q lists SqlServer as valid", err)
	}
}

func TestSqlServerRefusedFromEnvironment(t *testing.T) {
	t.Setenv("Service__Database__DbType", "SqlServer")
	_, _, err := run(t, context.Background(), host.Options{}, "serve", "--content-root", t.TempDir(), "--environment", "Development")
	if err == nil || !strings.Contains(err.Error(), "SQL Server") {
		t.Fatalf("serve with SqlServer = %v, want the refusal", err)
	}
}

func TestConfigCommandMasksSecrets(t *testing.T) {
	t.Setenv("Service__Security__Jwt__SigningKey", signingKey)
	t.Setenv("Service__Seed__AdminPassword", "Seed#Secret-42")
	t.Setenv("Service__ExternalAuth__Oidc__0__ClientSecret", "oidc-client-secret-xyz")
	t.Setenv("Service__ExternalAuth__Oidc__0__Authority", "https://id.example.com")
	t.Setenv("Service__ExternalAuth__Oidc__0__ClientId", "kernel")
	t.Setenv("Service__ExternalAuth__CallbackBaseUrl", "https://admin.example.com/gw")
	out, _, err := run(t, context.Background(), host.Options{}, "config", "--content-root", t.TempDir())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	for _, secret := range []string{signingKey, "Seed#Secret-42", "oidc-client-secret-xyz"} {
		if strings.Contains(out, secret) {
			t.Errorf("config printed the secret %q", secret)
		}
	}
	for _, want := range []string{"https://admin.example.com/gw", "https://id.example.com", `"***"`, "Production"} {
		if !strings.Contains(out, want) {
			t.Errorf("config output lacks %q", want)
		}
	}
}

func TestErrorsCommandListsConsumerCodes(t *testing.T) {
	opts := host.Options{ErrorCodes: []errcode.Enum{{Name: "ShopError", Members: []errcode.Member{
		{Code: 60010, Name: "CartEmpty", MsgKey: "error.shop.cartEmpty"},
	}}}}
	out, _, err := run(t, context.Background(), opts, "errors")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`60010\s+CartEmpty\s+error\.shop\.cartEmpty\s+ShopError`).MatchString(out) ||
		!regexp.MustCompile(`40001\s+PasswordWrong\s+error\.auth\.passwordWrong\s+ErrorCode`).MatchString(out) {
		t.Fatalf("errors output lacks the kernel or consumer row:\n%s", out)
	}
	opts.ErrorCodes = append(opts.ErrorCodes, errcode.Enum{Name: "OtherError", Members: []errcode.Member{
		{Code: 60010, Name: "Clash", MsgKey: "error.other.clash"},
	}})
	if _, _, err := run(t, context.Background(), opts, "errors"); err == nil ||
		!strings.Contains(err.Error(), "ShopError.CartEmpty") || !strings.Contains(err.Error(), "OtherError.Clash") {
		t.Fatalf("duplicate consumer code error = %v, want one naming both", err)
	}
}

// TestMigratePrintAppliedByHand is the Production "create them by hand" path:
// the printed DDL, applied with plain SQL, gives a database the service
// accepts without EnableCodeFirstInProduction.
func TestMigratePrintAppliedByHand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("Service__Security__Jwt__SigningKey", signingKey)
	ddl, _, err := run(t, context.Background(), host.Options{}, "migrate", "--print", "--content-root", dir)
	if err != nil {
		t.Fatalf("migrate --print: %v", err)
	}
	if !strings.Contains(ddl, "sys_user") || !strings.Contains(ddl, "sys_user_external") {
		t.Fatalf("DDL lacks the kernel's tables:\n%s", ddl)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "adminkernel.db")); !os.IsNotExist(err) {
		t.Fatalf("migrate --print touched the database file (stat: %v)", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o750); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "data", "adminkernel.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ddl); err != nil {
		t.Fatalf("applying the printed DDL: %v", err)
	}
	db.Close()
	// The script records its revisions: the database is up to date.
	status, _, err := run(t, context.Background(), host.Options{}, "migrate", "status", "--content-root", dir)
	if err != nil || !strings.Contains(status, "; 0 pending") {
		t.Fatalf("migrate status after the hand-applied script = %q, %v", status, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := serve(t, ctx, dir, "--environment", "Production")
	resp, err := http.Get(addr + "/health/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("ready = %d on the hand-made database", resp.StatusCode)
	}
}

// serve starts `serve` on a free port and returns its base URL once it
// answers; the command ends when ctx is cancelled.
func serve(t *testing.T, ctx context.Context, dir string, args ...string) string {
	t.Helper()
	t.Setenv("Service__Http__ListenAddress", "http://127.0.0.1:0")
	logs := &syncbuf.Buffer{}
	done := make(chan error, 1)
	go func() {
		cmd := cli.New(host.Options{LogOutput: logs})
		cmd.SetArgs(append([]string{"serve", "--content-root", dir}, args...))
		cmd.SetOut(io.Discard)
		done <- cmd.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve ended with %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve did not shut down within 15 s of cancellation")
		}
	})
	re := regexp.MustCompile(`listening: address=(http://\S+)`)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("serve ended early: %v\n%s", err, logs)
		default:
		}
		if m := re.FindStringSubmatch(logs.String()); m != nil {
			return m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("serve did not report its address:\n%s", logs)
	return ""
}

func TestServeStopsGracefully(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	addr := serve(t, ctx, dir, "--environment", "Development")
	resp, err := http.Get(addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/health = %d", resp.StatusCode)
	}
	cancel() // as SIGINT/SIGTERM do through signal.NotifyContext in main
}

func TestVersion(t *testing.T) {
	out, _, err := run(t, context.Background(), host.Options{Version: "1.2.3"}, "version")
	if err != nil || strings.TrimSpace(out) != "adminkernel 1.2.3" {
		t.Fatalf("version = %q, %v", out, err)
	}
}
