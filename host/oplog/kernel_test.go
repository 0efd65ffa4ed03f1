package oplog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/exceptionlog"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/oplog"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// wiring stands in for the host until the lead wires the writer in: it
// builds a Writer from the kernel's settings, installs its middleware on the
// route table (exactly what the host does) and adds a few test routes. The
// middleware logs a request once even when installed twice, so these tests
// keep passing once the host installs its own writer too.
type wiring struct{ w *oplog.Writer }

func (wr *wiring) module() host.Module {
	return host.Module{Name: "OpLogTest", Routes: func(d *module.Deps, api *route.Group) error {
		trusted, err := request.ParseTrusted(d.Config.Service.HTTP.TrustedProxies)
		if err != nil {
			return err
		}
		wr.w = oplog.New(oplog.EntInserter(d.Client), oplog.Options{
			Config:  d.Config.Service.Logging.OpLog,
			Trusted: trusted,
			Catalog: d.Catalog,
			Log:     d.Logger("AdminKernel.OpLog"),
		})
		api.Table().Around(wr.w.Middleware)

		g := api.Group("/test/oplog")
		g.Post("/echo", route.Session, func(c fiber.Ctx) error { return envelope.OK(c, true) }).Title = "测试-回显"
		g.Put("/items/{id}", route.Session, func(c fiber.Ctx) error { return envelope.OK(c, request.Param(c, "id")) })
		g.Post("/fail", route.Session, func(fiber.Ctx) error { return errcode.New(errcode.PasswordWrong) })
		g.Post("/panic", route.Session, func(fiber.Ctx) error { panic("kaboom: secret detail") })
		g.Post("/error", route.Session, func(fiber.Ctx) error { return fmt.Errorf("db: %w", context.DeadlineExceeded) })
		g.Get("/read", route.Session, func(c fiber.Ctx) error { return envelope.OK(c, true) })
		g.Get("/export", route.Session, func(c fiber.Ctx) error { return envelope.OK(c, true) }).OpLog = true
		g.Post("/anon", route.Anonymous, func(c fiber.Ctx) error { return envelope.OK(c, true) })
		return nil
	}}
}

// start runs a kernel with the Log module and the test wiring.
func start(t *testing.T, sync bool, env ...string) (*kerneltest.Kernel, *oplog.Writer) {
	t.Helper()
	wr := &wiring{}
	env = append(env, "Service__Logging__OpLog__Sync="+strconv.FormatBool(sync))
	k := kerneltest.Start(t, env, wr.module())
	t.Cleanup(func() { // runs before the kernel closes its database
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = wr.w.Close(ctx)
	})
	return k, wr.w
}

func opRows(t *testing.T, k *kerneltest.Kernel) []*ent.SysOpLog {
	t.Helper()
	rows, err := k.Ent().SysOpLog.Query().Order(ent.Asc(sysoplog.FieldCreateTime), ent.Asc(sysoplog.FieldID)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func TestSyncModeWritesRedactedRowBeforeTheResponse(t *testing.T) {
	k, _ := start(t, true)
	admin := k.Admin()
	req := httptest.NewRequest("POST", "/api/v1/test/oplog/echo?token=abc&q=1",
		strings.NewReader(`{"password":"p","nested":{"apiKey":"k"},"name":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("User-Agent", "oplog-test/2.0")
	k.Send(req).Expect(t, "echo", 200, 0)

	rows := opRows(t, k) // no waiting: Sync writes before the response
	if len(rows) != 1 {
		t.Fatalf("%d op-log rows right after the response, want 1", len(rows))
	}
	r := rows[0]
	if r.Title != "测试-回显" || r.HTTPMethod != "POST" || r.Path != "/api/v1/test/oplog/echo" {
		t.Errorf("title/method/path = %q %q %q", r.Title, r.HTTPMethod, r.Path)
	}
	want := `{"_query":{"token":"***","q":"1"},"_body":{"password":"***","nested":{"apiKey":"***"},"name":"x"}}`
	if deref(r.ParamJSON) != want {
		t.Errorf("paramJson = %s\nwant        %s", deref(r.ParamJSON), want)
	}
	if !r.Success || r.ResultCode != 0 || r.ExceptionMessage != nil {
		t.Errorf("success %v code %d message %v", r.Success, r.ResultCode, r.ExceptionMessage)
	}
	if deref(r.OperatorID) != 1 || deref(r.UserAgent) != "oplog-test/2.0" || deref(r.IP) == "" {
		t.Errorf("operator %v ua %v ip %v", r.OperatorID, r.UserAgent, r.IP)
	}
	if r.ElapsedMs < 0 || time.Since(r.CreateTime) > time.Minute {
		t.Errorf("elapsed %d create time %v", r.ElapsedMs, r.CreateTime)
	}
}

func TestLongInputIsStoredCutAndValid(t *testing.T) {
	k, _ := start(t, true)
	admin := k.Admin()
	body, _ := json.Marshal(map[string]string{"password": "p", "text": strings.Repeat("x", 20000)})
	k.Do("POST", "/api/v1/test/oplog/echo", admin, string(body)).Expect(t, "echo", 200, 0)
	p := deref(opRows(t, k)[0].ParamJSON)
	if !json.Valid([]byte(p)) {
		t.Fatalf("stored input is not valid JSON: %.200s", p)
	}
	var v struct {
		Truncated      bool   `json:"_truncated"`
		OriginalLength int    `json:"_originalLength"`
		Opening        string `json:"_opening"`
	}
	if err := json.Unmarshal([]byte(p), &v); err != nil {
		t.Fatal(err)
	}
	if !v.Truncated || v.OriginalLength < 20000 || !strings.HasPrefix(v.Opening, `{"password":"***","text":"xxx`) {
		t.Errorf("annotation %v %d opening %.40s", v.Truncated, v.OriginalLength, v.Opening)
	}
	if n := utf8.RuneCountInString(p); n > oplog.DefaultParamMaxChars {
		t.Errorf("stored %d characters, limit %d", n, oplog.DefaultParamMaxChars)
	}
}

func TestWhatIsLoggedAndOutcomes(t *testing.T) {
	k, _ := start(t, true)
	admin := k.Admin()
	k.Do("GET", "/api/v1/test/oplog/read", admin, nil).Expect(t, "read", 200, 0)
	k.Do("POST", "/api/v1/test/oplog/anon", "", `{}`).Expect(t, "anonymous write", 200, 0)
	k.Do("POST", "/api/v1/test/oplog/echo", "", `{}`).Expect(t, "refused write", 401, int(errcode.TokenInvalid))
	if rows := opRows(t, k); len(rows) != 0 {
		t.Fatalf("reads, anonymous and refused calls were logged: %d rows (%s %s)", len(rows), rows[0].HTTPMethod, rows[0].Path)
	}

	k.Do("GET", "/api/v1/test/oplog/export", admin, nil).Expect(t, "marked GET", 200, 0)
	k.Do("POST", "/api/v1/test/oplog/fail", admin, nil).Expect(t, "business error", 200, int(errcode.PasswordWrong))
	k.Do("POST", "/api/v1/test/oplog/panic", admin, nil).Expect(t, "panic", 500, int(errcode.SystemError))
	k.Do("POST", "/api/v1/test/oplog/error", admin, nil).Expect(t, "error", 500, int(errcode.SystemError))
	k.Do("PUT", "/api/v1/test/oplog/items/42", admin, `{"n":1}`).Expect(t, "put", 200, 0)

	rows := opRows(t, k)
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5", len(rows))
	}
	byPath := map[string]*ent.SysOpLog{}
	for _, r := range rows {
		byPath[r.Path] = r
	}
	if r := byPath["/api/v1/test/oplog/export"]; r == nil || r.Title != "GET /api/v1/test/oplog/export" || !r.Success {
		t.Errorf("marked GET row: %+v", r)
	}
	if r := byPath["/api/v1/test/oplog/fail"]; r == nil || r.Success || r.ResultCode != int(errcode.PasswordWrong) ||
		deref(r.ExceptionMessage) != k.Catalog().MsgKey(errcode.PasswordWrong) {
		t.Errorf("business error row: %+v", r)
	}
	if r := byPath["/api/v1/test/oplog/panic"]; r == nil || r.Success || r.ResultCode != int(errcode.SystemError) ||
		deref(r.ExceptionMessage) != "panic(string)" {
		t.Errorf("panic row: %+v (message %q)", r, deref(r.ExceptionMessage))
	}
	if r := byPath["/api/v1/test/oplog/error"]; r == nil || r.ResultCode != int(errcode.SystemError) ||
		deref(r.ExceptionMessage) != "context.deadlineExceededError" {
		t.Errorf("error row: message %q", deref(r.ExceptionMessage))
	}
	if r := byPath["/api/v1/test/oplog/items/42"]; r == nil || r.Title != "PUT /api/v1/test/oplog/items/{id}" || deref(r.ParamJSON) != `{"n":1}` {
		t.Errorf("put row: %+v", r)
	}
	for _, r := range rows {
		if strings.Contains(deref(r.ExceptionMessage), "secret detail") {
			t.Errorf("error detail stored: %q", deref(r.ExceptionMessage))
		}
	}
}

// Asynchronous mode: requests return at once and every row ends up stored
// with the values of its own request (they were copied before the handler
// returned, although fasthttp reuses its buffers for the next requests).
func TestAsyncModeStoresCopiedValues(t *testing.T) {
	k, w := start(t, false)
	admin := k.Admin()
	const n = 60
	for i := range n {
		req := httptest.NewRequest("PUT", fmt.Sprintf("/api/v1/test/oplog/items/%d?v=%d", i, i), strings.NewReader(fmt.Sprintf(`{"i":%d}`, i)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("User-Agent", fmt.Sprintf("ua-%d", i))
		k.Send(req).Expect(t, "put", 200, 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil { // drains the queue
		t.Fatal(err)
	}
	// Poll as well: once the host installs its own writer, that one records.
	var rows []*ent.SysOpLog
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if rows = opRows(t, k); len(rows) >= n || time.Now().After(deadline) {
			break
		}
	}
	if len(rows) != n {
		t.Fatalf("%d rows, want %d (dropped %d, lost %d)", len(rows), n, w.Dropped(), w.Lost())
	}
	for _, r := range rows {
		id := strings.TrimPrefix(r.Path, "/api/v1/test/oplog/items/")
		want := fmt.Sprintf(`{"_query":{"v":"%s"},"_body":{"i":%s}}`, id, id)
		if deref(r.ParamJSON) != want || deref(r.UserAgent) != "ua-"+id {
			t.Errorf("row for %s: param %s ua %s", r.Path, deref(r.ParamJSON), deref(r.UserAgent))
		}
	}
}

type page[T any] struct {
	Current int `json:"current"`
	Size    int `json:"size"`
	Total   int `json:"total"`
	Pages   int `json:"pages"`
	Items   []T `json:"items"`
}

func TestOpLogPageFiltersAndPaging(t *testing.T) {
	k, _ := start(t, true)
	admin := k.Admin()
	ctx := context.Background()
	base := time.Date(2026, 3, 10, 12, 0, 0, 0, time.Local)
	one := int64(1)
	for i := range 25 {
		c := k.Ent().SysOpLog.Create().SetTitle(fmt.Sprintf("alpha %d", i)).SetHTTPMethod("POST").
			SetPath(fmt.Sprintf("/api/v1/sys/user/%d", i)).SetSuccess(i%5 != 0).SetResultCode(0).
			SetCreateTime(base.Add(time.Duration(i) * time.Hour))
		if i%2 == 0 {
			c.SetOperatorID(one)
		}
		c.ExecX(ctx)
	}
	k.Ent().SysOpLog.Create().SetTitle("beta").SetHTTPMethod("DELETE").SetPath("/api/v1/sys/role/9").
		SetSuccess(true).SetCreateTime(base.AddDate(0, 1, 0)).ExecX(ctx)

	get := func(query string) page[oplog.Item] {
		t.Helper()
		var p page[oplog.Item]
		k.Do("GET", "/api/v1/sys/log/op/page?"+query, admin, nil).Expect(t, query, 200, 0).Decode(t, &p)
		return p
	}
	p := get("Current=2&Size=10")
	if p.Total != 26 || p.Pages != 3 || len(p.Items) != 10 || p.Current != 2 {
		t.Fatalf("paging: total %d pages %d items %d", p.Total, p.Pages, len(p.Items))
	}
	all := get("size=100")
	if all.Items[0].Title != "beta" || all.Items[1].Title != "alpha 24" {
		t.Errorf("not newest first: %s, %s", all.Items[0].Title, all.Items[1].Title)
	}
	if p := get("Title=alpha%202&size=100"); p.Total != 6 { // alpha 2, 20-24
		t.Errorf("Title filter: %d rows", p.Total)
	}
	if p := get("Path=/sys/role"); p.Total != 1 || p.Items[0].Title != "beta" {
		t.Errorf("Path filter: %+v", p)
	}
	if p := get("Success=false&size=100"); p.Total != 5 {
		t.Errorf("Success filter: %d rows", p.Total)
	}
	p = get("OperatorId=1&size=100")
	if p.Total != 13 {
		t.Errorf("OperatorId filter: %d rows", p.Total)
	}
	if name := deref(p.Items[0].OperatorName); name != "超级管理员" {
		t.Errorf("operatorName = %q", name)
	}
	if p := get("StartTime=2026-03-10%2015:00:00&EndTime=2026-03-10%2020:00:00"); p.Total != 6 {
		t.Errorf("time range (inclusive): %d rows", p.Total)
	}
	if p := get("StartTime=2026-04-01&size=5"); p.Total != 1 {
		t.Errorf("StartTime date only: %d rows", p.Total)
	}
	if p := get("SortField=title&SortOrder=asc&size=1"); p.Items[0].Title != "alpha 0" {
		t.Errorf("SortField title asc: %s", p.Items[0].Title)
	}
	k.Do("GET", "/api/v1/sys/log/op/page?Success=maybe", admin, nil).Expect(t, "bad bool", 400, int(errcode.RequestInvalid))
	k.Do("GET", "/api/v1/sys/log/op/page?Size=1000", admin, nil).Expect(t, "too big", 200, int(errcode.PageSizeExceeded))
}

func TestExceptionLogPageAndClear(t *testing.T) {
	k, _ := start(t, true)
	admin := k.Admin()
	ctx := context.Background()
	base := time.Date(2026, 5, 1, 8, 0, 0, 0, time.Local)
	one := int64(1)
	for i, typ := range []string{"panic(string)", "*github.com/lib/pq.Error", "*net.OpError", "panic(runtime.boundsError)"} {
		c := k.Ent().SysExceptionLog.Create().SetHTTPMethod("POST").SetPath(fmt.Sprintf("/api/v1/sys/area%d/x", i)).
			SetExceptionType(typ).SetMessage("m").SetStackTrace("s").SetCreateTime(base.Add(time.Duration(i) * time.Minute))
		if i == 3 {
			c.SetOperatorID(one)
		}
		c.ExecX(ctx)
	}
	get := func(query string) page[exceptionlog.Item] {
		t.Helper()
		var p page[exceptionlog.Item]
		k.Do("GET", "/api/v1/sys/log/exception/page?"+query, admin, nil).Expect(t, query, 200, 0).Decode(t, &p)
		return p
	}
	p := get("")
	if p.Total != 4 || p.Items[0].ExceptionType != "panic(runtime.boundsError)" || deref(p.Items[0].OperatorName) != "超级管理员" {
		t.Fatalf("page: %+v", p)
	}
	if p := get("ExceptionType=panic"); p.Total != 2 {
		t.Errorf("ExceptionType filter: %d", p.Total)
	}
	if p := get("Path=area1"); p.Total != 1 || p.Items[0].ExceptionType != "*github.com/lib/pq.Error" {
		t.Errorf("Path filter: %+v", p)
	}
	if p := get("StartTime=2026-05-01T08:01:00&EndTime=2026-05-01T08:02:00"); p.Total != 2 {
		t.Errorf("time range: %d", p.Total)
	}
	if p := get("Size=3&Current=2"); len(p.Items) != 1 || p.Pages != 2 {
		t.Errorf("paging: %+v", p)
	}

	var ok bool
	k.Do("DELETE", "/api/v1/sys/log/exception", admin, nil).Expect(t, "clear", 200, 0).Decode(t, &ok)
	if !ok {
		t.Error("data = false")
	}
	if n := k.Ent().SysExceptionLog.Query().CountX(ctx); n != 0 {
		t.Errorf("%d exception rows left", n)
	}
	rows := opRows(t, k)
	if len(rows) != 1 || rows[0].Title != "op.DELETE:/api/v1/sys/log/exception" || rows[0].HTTPMethod != "DELETE" ||
		rows[0].Path != "/api/v1/sys/log/exception" || !rows[0].Success || deref(rows[0].OperatorID) != 1 {
		t.Fatalf("the clearing is not in the operation log: %+v", rows)
	}

	// Clearing the operation log leaves only its own entry.
	k.Do("DELETE", "/api/v1/sys/log/op", admin, nil).Expect(t, "clear op", 200, 0)
	rows = opRows(t, k)
	if len(rows) != 1 || rows[0].Title != "op.DELETE:/api/v1/sys/log/op" {
		t.Fatalf("after clearing: %d rows (%v)", len(rows), rows)
	}
}

func TestPermissionsAndMenus(t *testing.T) {
	k, _ := start(t, true)
	k.User("reader", "Reader#Pass1", "GET:/api/v1/sys/log/op/page")
	reader := k.Login("reader", "Reader#Pass1").AccessToken
	k.Do("GET", "/api/v1/sys/log/op/page", reader, nil).Expect(t, "granted page", 200, 0)
	k.Do("GET", "/api/v1/sys/log/exception/page", reader, nil).Expect(t, "ungranted page", 403, int(errcode.NoPermission))
	k.Do("DELETE", "/api/v1/sys/log/op", reader, nil).Expect(t, "ungranted clear", 403, int(errcode.NoPermission))
	k.Do("GET", "/api/v1/sys/log/op/page", "", nil).Expect(t, "anonymous", 401, int(errcode.TokenInvalid))

	// Every permission-gated route of the module has a seeded button and
	// every seeded code of the module names such a route.
	gated := map[string]bool{}
	for _, r := range k.Routes() {
		if r.Module == oplog.Name && r.Access == route.Permission {
			gated[r.PermissionCode()] = true
		}
	}
	menus := k.Ent().SysMenu.Query().Where(sysmenu.IDIn(520, 521, 525, 526, 530, 531, 535)).AllX(context.Background())
	if len(menus) != 7 {
		t.Fatalf("%d of 7 menus seeded", len(menus))
	}
	seeded := map[string]bool{}
	for _, m := range menus {
		for _, c := range authz.SplitCodes(m.Permission) {
			seeded[c] = true
			if !gated[c] {
				t.Errorf("menu %d grants %s, which is no route of the module", m.ID, c)
			}
		}
	}
	for c := range gated {
		if !seeded[c] {
			t.Errorf("route %s has no seeded button", c)
		}
	}
	if len(gated) != 5 {
		t.Errorf("%d gated routes, want 5", len(gated))
	}
}
