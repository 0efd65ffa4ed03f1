package database_test

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/syssession"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// tmpfsSize is the size of the filesystem holding the database: room for
// the migrated and seeded database and its WAL, filled with ballast.
const tmpfsSize = "48m"

// mountTmpfs mounts a small tmpfs at a fresh directory and unmounts it
// when the test ends (after every cleanup registered later, such as the
// kernel's Close). It needs root (CAP_SYS_ADMIN): CI runs as root; anyone
// else gets a clear failure, never a skip.
func mountTmpfs(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+tmpfsSize+",mode=0700"); err != nil {
		t.Fatalf("the disk-full test mounts a %s tmpfs for the SQLite database and needs root (CAP_SYS_ADMIN), as CI has: mount: %v (euid %d)",
			tmpfsSize, err, os.Geteuid())
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			// A lazy unmount still frees the memory once nothing holds it.
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes a ballast file until the filesystem refuses more
// (ENOSPC) and returns its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "ballast")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v, want ENOSPC", dir, err)
			}
			break
		}
	}
	// The last partial chunk may have left a few bytes: take them too.
	for {
		if _, err := f.Write(chunk[:512]); err != nil {
			break
		}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if free := st.Bavail * uint64(st.Bsize); free > 0 {
		t.Fatalf("%d bytes still free after filling %s", free, dir)
	}
	return path
}

// sessionOf returns the sid claim of an access token.
func sessionOf(t *testing.T, access string) string {
	t.Helper()
	parts := strings.Split(access, ".")
	if len(parts) != 3 {
		t.Fatalf("access token %q is not a JWT", access)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Sid string `json:"sid"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || c.Sid == "" {
		t.Fatalf("access token claims %s without sid (%v)", raw, err)
	}
	return c.Sid
}

// integrityCheck runs PRAGMA integrity_check on the database file through
// a connection of its own.
func integrityCheck(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&got); err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	if got != "ok" {
		t.Fatalf("PRAGMA integrity_check = %q, want ok", got)
	}
}

// forbiddenInBody must not appear in an answer: SQL, driver texts, paths.
var forbiddenInBody = []string{"sqlite", "SQLITE", "disk is full", "no space", "INSERT", "SELECT", "tmpfs", "ballast", ".db", ".go:", "goroutine"}

// TestSQLiteDiskFull drives a real kernel whose SQLite database lives on a
// small tmpfs. Once a ballast file has filled the filesystem, writes made
// by ordinary traffic (create a user with two roles, log in) fail: each
// answer is HTTP 503 / 50001 StorageFull with nothing but the envelope;
// nothing is half-written (every stored user has both role links, every
// token's session row exists, a refused login leaves no session); reads,
// /health and the process stay up. When the ballast is removed the same
// requests succeed without a restart, and PRAGMA integrity_check is ok
// both then and after shutdown.
func TestSQLiteDiskFull(t *testing.T) {
	dir := mountTmpfs(t)
	dbPath := filepath.Join(dir, "adminkernel.db")
	k := kerneltest.Start(t, []string{
		"Service__Database__DbType=Sqlite",
		"Service__Database__ConnectionString=Data Source=" + dbPath,
	})
	ctx := context.Background()
	c := k.Ent()
	roleA := c.SysRole.Create().SetName("disk-a").SetCode("disk_a").SaveX(ctx)
	roleB := c.SysRole.Create().SetName("disk-b").SetCode("disk_b").SaveX(ctx)
	admin := k.Admin()

	createUser := func(account string) kerneltest.Reply {
		return k.Do("POST", "/api/v1/sys/user", admin, map[string]any{
			"account": account, "name": account, "password": "Us3r#Passw0rd", "orgId": 1,
			"roleIds": []int64{roleA.ID, roleB.ID},
		})
	}
	login := func() kerneltest.Reply {
		return k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": kerneltest.AdminPassword})
	}
	// checkFailure: a refused write is 503 / 50001 and nothing else.
	checkFailure := func(what string, r kerneltest.Reply) {
		t.Helper()
		if r.Status != 503 || r.Code != 50001 || r.MsgKey != "error.system.storageFull" {
			t.Fatalf("%s on a full disk = HTTP %d code %d (%s), want 503 / 50001 error.system.storageFull", what, r.Status, r.Code, r.Raw)
		}
		for _, bad := range forbiddenInBody {
			if strings.Contains(r.Raw, bad) {
				t.Fatalf("%s: the answer contains %q: %s", what, bad, r.Raw)
			}
		}
		if string(r.Data) != "null" {
			t.Fatalf("%s: a failed answer carries data: %s", what, r.Raw)
		}
	}
	sessionsBefore := c.SysSession.Query().CountX(ctx)

	ballast := fillDisk(t, dir)

	// Ordinary traffic until writes fail: the WAL may still have room
	// from earlier transactions, so the first writes can succeed.
	var (
		created, refusedCreates int
		failedAccount           string
	)
	for i := 0; i < 2000 && refusedCreates < 3; i++ {
		account := fmt.Sprintf("full%04d", i)
		r := createUser(account)
		switch {
		case r.Status == 200 && r.Code == 0:
			created++
		default:
			checkFailure("create user "+account, r)
			refusedCreates++
			failedAccount = account
		}
	}
	if refusedCreates == 0 {
		t.Fatalf("%d users created on a full disk, none refused", created)
	}
	var issued []string
	refusedLogins := 0
	for i := 0; i < 200 && refusedLogins < 3; i++ {
		r := login()
		if r.Status == 200 && r.Code == 0 {
			var tk kerneltest.Tokens
			r.Decode(t, &tk)
			issued = append(issued, tk.AccessToken)
			continue
		}
		checkFailure("login", r)
		if strings.Contains(r.Raw, "accessToken") || strings.Contains(r.Raw, "refreshToken") {
			t.Fatalf("a refused login answered tokens: %s", r.Raw)
		}
		refusedLogins++
	}
	if refusedLogins == 0 {
		t.Fatalf("%d logins succeeded on a full disk, none refused", len(issued))
	}
	t.Logf("on the full disk: %d users created and %d refused; %d logins issued and %d refused", created, refusedCreates, len(issued), refusedLogins)

	// Nothing half-written: no user without both role links, no token
	// without its session row, no session beyond the issued tokens.
	assertWhole := func(when string) {
		t.Helper()
		users := c.SysUser.Query().Where(sysuser.AccountHasPrefix("full")).AllX(ctx)
		for _, u := range users {
			if n := c.SysUserRole.Query().Where(sysuserrole.UserID(u.ID)).CountX(ctx); n != 2 {
				t.Errorf("%s: user %s has %d role links, want 2", when, u.Account, n)
			}
		}
		for _, tok := range issued {
			if !c.SysSession.Query().Where(syssession.SessionID(sessionOf(t, tok))).ExistX(ctx) {
				t.Errorf("%s: a token was issued for session %s, which is not stored", when, sessionOf(t, tok))
			}
		}
	}
	assertWhole("on the full disk")
	if got := c.SysUser.Query().Where(sysuser.AccountHasPrefix("full")).CountX(ctx); got != created {
		t.Errorf("%d users stored, %d creations answered success", got, created)
	}
	if got, want := c.SysSession.Query().CountX(ctx), sessionsBefore+len(issued); got != want {
		t.Errorf("%d sessions stored, want %d (before) + %d (issued)", got, sessionsBefore, len(issued))
	}
	if c.SysUser.Query().Where(sysuser.Account(failedAccount)).ExistX(ctx) {
		t.Errorf("the refused user %s was stored", failedAccount)
	}
	// Reads and liveness keep working.
	if resp, err := k.App().Test(httptest.NewRequest("GET", "/health", nil)); err != nil || resp.StatusCode != 200 {
		t.Errorf("/health on a full disk = %v %v, want 200", resp, err)
	} else {
		resp.Body.Close()
	}
	k.Do("GET", "/api/v1/sys/user/page?Page=1&Size=5", admin, nil).Expect(t, "read on a full disk", 200, 0)
	if !strings.Contains(k.Log(), "database storage is full") {
		t.Errorf("the kernel log does not report the full storage")
	}
	// The asynchronous operation log of the refused creations fails too:
	// logged and dropped, never retried in a loop.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(k.Log(), "writing the operation log failed") {
		if time.Now().After(deadline) {
			t.Fatalf("the operation log never reported its failed write on the full disk")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Space returns: the same requests succeed, without a restart.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	createUser(failedAccount).Expect(t, "create the refused user after space returned", 200, 0)
	r := login().Expect(t, "login after space returned", 200, 0)
	var tk kerneltest.Tokens
	r.Decode(t, &tk)
	issued = append(issued, tk.AccessToken)
	k.Do("GET", "/api/v1/ping", tk.AccessToken, nil).Expect(t, "ping with the new token", 200, 0)
	assertWhole("after space returned")
	integrityCheck(t, dbPath)

	if err := k.Close(); err != nil {
		t.Fatalf("closing the kernel: %v", err)
	}
	integrityCheck(t, dbPath)
}
