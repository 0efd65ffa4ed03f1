package host_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/password"
)

// BenchmarkPasswordLogin measures a whole password login over the HTTP
// stack (captcha off, lockout check, PBKDF2 at the default 600000
// iterations, session row, JWT, login-log row). Compare it with
// BenchmarkPBKDF2Verify: the ratio is the cost of everything around the
// hash.
func BenchmarkPasswordLogin(b *testing.B) {
	cfg, err := config.Load(config.LoadOptions{ContentRoot: b.TempDir(), Environment: config.Development,
		Environ: []string{"Service__Seed__AdminPassword=Adm1n#Passw0rd"}})
	if err != nil {
		b.Fatal(err)
	}
	k, err := host.New(context.Background(), host.Options{Config: cfg, LogOutput: &syncbuf.Buffer{}})
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	if err := k.Settings().Set(context.Background(), "sys.security.rateLimit.enabled", "false"); err != nil {
		b.Fatal(err)
	}
	body := `{"account":"superAdmin","password":"Adm1n#Passw0rd"}`
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest("POST", "/api/v1/auth/login", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := k.App().Test(req, fiberTestConfig)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("login: %v %v", err, resp)
		}
		resp.Body.Close()
	}
}

// BenchmarkPBKDF2Verify is one bare verification at the default count.
func BenchmarkPBKDF2Verify(b *testing.B) {
	h := password.New(600000)
	hash, err := h.Hash("Adm1n#Passw0rd")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if ok, err := h.Verify(hash, "Adm1n#Passw0rd"); !ok || err != nil {
			b.Fatal("verify failed")
		}
	}
}

// fiberTestConfig gives requests that hash passwords time under -race.
var fiberTestConfig = fiber.TestConfig{Timeout: 60 * time.Second}
