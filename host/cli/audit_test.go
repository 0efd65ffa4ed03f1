package cli_test

import (
	"context"
	"encoding/json"
	"os"
	osuser "os/user"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysoplog"
)

// TestBreakGlassActionsInTheOpLog: every break-glass command (reset a
// password, create a super-admin, clear a user's second factors, end
// sessions) writes an operation-log row naming the operator's OS user,
// with its outcome, and never the password.
func TestBreakGlassActionsInTheOpLog(t *testing.T) {
	s := startShared(t, nil)
	ctx := context.Background()
	want := ""
	if u, err := osuser.Current(); err == nil && u.Username != "" {
		want = u.Username
	} else {
		want = os.Getenv("USER")
	}
	if want == "" {
		t.Skip("no OS user name to compare with")
	}

	out, errOut, err := s.cmd("", "user", "reset-password", "superAdmin")
	if err != nil {
		t.Fatalf("reset-password: %v\n%s", err, errOut)
	}
	pw := s.generated(out)
	if _, errOut, err := s.cmd("", "user", "create-superadmin", "breakglass2"); err != nil {
		t.Fatalf("create-superadmin: %v\n%s", err, errOut)
	}
	if _, errOut, err := s.cmd("", "user", "clear-mfa", "superAdmin"); err != nil {
		t.Fatalf("clear-mfa: %v\n%s", err, errOut)
	}
	if _, errOut, err := s.cmd("", "session", "revoke", "--user", "superAdmin"); err != nil {
		t.Fatalf("session revoke: %v\n%s", err, errOut)
	}
	if _, _, err := s.cmd("", "user", "reset-password", "nobody-here"); err == nil {
		t.Fatal("reset-password of an unknown account succeeded")
	}

	rows := s.k.Ent().SysOpLog.Query().Where(sysoplog.HTTPMethod("CLI")).Order(ent.Asc(sysoplog.FieldID)).AllX(ctx)
	type row struct {
		title   string
		success bool
		account string
	}
	wantRows := []row{
		{"cli.user.reset-password", true, "superAdmin"},
		{"cli.user.create-superadmin", true, "breakglass2"},
		{"cli.user.clear-mfa", true, "superAdmin"},
		{"cli.session.revoke", true, "superAdmin"},
		{"cli.user.reset-password", false, "nobody-here"},
	}
	if len(rows) != len(wantRows) {
		t.Fatalf("%d CLI rows in the operation log, want %d: %+v", len(rows), len(wantRows), rows)
	}
	for i, r := range rows {
		w := wantRows[i]
		var p map[string]any
		if r.ParamJSON == nil || json.Unmarshal([]byte(*r.ParamJSON), &p) != nil {
			t.Fatalf("row %d param %v", i, r.ParamJSON)
		}
		if r.Title != w.title || r.Success != w.success || p["account"] != w.account || p["osUser"] != want ||
			r.UserAgent == nil || !strings.Contains(*r.UserAgent, want) || r.OperatorID != nil {
			t.Errorf("row %d = %s success=%v params=%v ua=%v operator=%v, want %+v by OS user %s", i, r.Title, r.Success, p, r.UserAgent, r.OperatorID, w, want)
		}
		if strings.Contains(*r.ParamJSON, pw) {
			t.Errorf("row %d shows the generated password", i)
		}
	}
	if rows[4].ExceptionMessage == nil {
		t.Error("the failed reset has no message")
	}
}
