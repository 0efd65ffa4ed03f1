package oplog_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/gofiber/fiber/v3/middleware/requestid"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/exceptionlog"
	"github.com/adminkernel/kernel/host/oplog"
	"github.com/adminkernel/kernel/host/route"
)

func panickingHandler(fiber.Ctx) error { panic("handler blew up") }

// The host's chain in miniature: requestid, Recover, the central error
// handler with the exception recorder, and the op-log middleware before the
// handler. A panic gives 500, one exception row whose stack shows the
// handler, and one failed op-log row.
func TestPanicThroughTheChain(t *testing.T) {
	db := dbtest.OpenMigrated(t, config.DBSqlite)
	log := hclog.NewNullLogger()
	catalog, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	rec := exceptionlog.New(db.Client, log)
	w := oplog.New(oplog.EntInserter(db.Client), oplog.Options{Config: config.OpLog{Sync: true}, Catalog: catalog, Recorder: rec})
	defer func() {
		if err := w.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()

	app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(catalog, log, rec.Record)})
	app.Use(requestid.New(), envelope.Recover())
	r := route.Route{Method: "POST", Path: "/p", Access: route.Session}
	mw := w.Middleware(r)
	if mw == nil {
		t.Fatal("a session POST is not logged")
	}
	app.Post("/p", mw, panickingHandler)
	if w.Middleware(route.Route{Method: "GET", Path: "/g", Access: route.Permission}) != nil {
		t.Error("a GET is logged")
	}
	if w.Middleware(route.Route{Method: "POST", Path: "/a", Access: route.Anonymous}) != nil {
		t.Error("an anonymous POST is logged")
	}
	if w.Middleware(route.Route{Method: "GET", Path: "/e", Access: route.Anonymous, OpLog: true}) == nil {
		t.Error("a marked route is not logged")
	}

	resp, err := app.Test(httptest.NewRequest("POST", "/p", strings.NewReader(`{"password":"x"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 500 {
		t.Fatalf("status %d, want 500", resp.StatusCode)
	}
	ctx := context.Background()
	ex := db.Client.SysExceptionLog.Query().AllX(ctx)
	if len(ex) != 1 {
		t.Fatalf("%d exception rows, want 1", len(ex))
	}
	if ex[0].ExceptionType != "panic(string)" || !strings.Contains(deref(ex[0].StackTrace), "panickingHandler") {
		t.Errorf("exception row: type %q, stack without the handler:\n%.600s", ex[0].ExceptionType, deref(ex[0].StackTrace))
	}
	ops := db.Client.SysOpLog.Query().AllX(ctx)
	if len(ops) != 1 || ops[0].Success || ops[0].ResultCode != int(errcode.SystemError) || deref(ops[0].ParamJSON) != `{"password":"***"}` {
		t.Fatalf("op-log rows: %+v", ops)
	}
}
