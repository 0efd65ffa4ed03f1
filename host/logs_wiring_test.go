package host_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent/sysexceptionlog"
	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

// TestDiagnosticsWiring drives the exception log and the operation log
// through the composed kernel: a panicking write endpoint answers 500 with
// one exception row and a failed op-log row; a business error writes no
// exception row.
func TestDiagnosticsWiring(t *testing.T) {
	boom := host.Module{Name: "Boom", Routes: func(_ *module.Deps, api *route.Group) error {
		api.Post("/boom/panic", route.Session, func(fiber.Ctx) error { panic(strings.Repeat("x", 5000)) })
		api.Post("/boom/business", route.Session, func(fiber.Ctx) error { return errcode.New(errcode.OrgNotFound) })
		return nil
	}}
	k := kerneltest.Start(t, []string{"Service__Logging__OpLog__Sync=true"}, boom)
	admin := k.Admin()
	ctx := context.Background()

	k.Do("POST", "/api/v1/boom/panic", admin, map[string]string{"password": "do-not-store"}).Expect(t, "panic", 500, 50000)
	rows := k.Ent().SysExceptionLog.Query().AllX(ctx)
	if len(rows) != 1 {
		t.Fatalf("%d exception rows, want 1", len(rows))
	}
	r := rows[0]
	if r.Path != "/api/v1/boom/panic" || r.HTTPMethod != "POST" || r.Message == nil || len([]rune(*r.Message)) > 2000 ||
		r.StackTrace == nil || len([]rune(*r.StackTrace)) > 8000 || r.OperatorID == nil || *r.OperatorID != 1 {
		t.Fatalf("exception row = %+v", r)
	}
	for _, row := range []string{deref(r.Message), deref(r.StackTrace)} {
		if strings.Contains(row, "do-not-store") {
			t.Fatal("the request body reached the exception log")
		}
	}

	k.Do("POST", "/api/v1/boom/business", admin, nil).Expect(t, "business error", 200, 42003)
	if n := k.Ent().SysExceptionLog.Query().Where(sysexceptionlog.PathContains("business")).CountX(ctx); n != 0 {
		t.Fatalf("a business error wrote %d exception rows", n)
	}

	deadline := time.Now().Add(5 * time.Second)
	for {
		n := k.Ent().SysOpLog.Query().Where(sysoplog.PathHasPrefix("/api/v1/boom/")).CountX(ctx)
		if n == 2 || time.Now().After(deadline) {
			if n != 2 {
				t.Fatalf("%d op-log rows for the two write calls, want 2", n)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	op := k.Ent().SysOpLog.Query().Where(sysoplog.Path("/api/v1/boom/panic")).OnlyX(ctx)
	if op.Success || op.ResultCode != 50000 || op.ParamJSON == nil || strings.Contains(*op.ParamJSON, "do-not-store") || !strings.Contains(*op.ParamJSON, "***") {
		t.Fatalf("op-log row = success %v code %d params %v", op.Success, op.ResultCode, op.ParamJSON)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
