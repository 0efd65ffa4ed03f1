package resource_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	entschema "entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/gofiber/fiber/v3"
	"github.com/xuri/excelize/v2"

	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/resource"
	"github.com/adminkernel/kernel/host/spreadsheet"
)

// gear is a business table with eight fields of every kind.
type gear struct{ ent.Schema }

func (gear) Mixin() []ent.Mixin {
	return []ent.Mixin{schema.IDMixin{}, schema.AuditMixin{}, schema.SoftDeleteMixin{}}
}

func (gear) Annotations() []entschema.Annotation {
	return []entschema.Annotation{entsql.Annotation{Table: "test_gear"}}
}

func (gear) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").MaxRuneLen(32),
		field.String("category").MaxRuneLen(16).Optional(),
		field.Int64("stock").Default(0),
		field.Float("price").Optional(),
		field.Int64("org_id").Optional(),
		field.Bool("enabled").Default(true),
		field.Time("arrived_on").Optional(),
		field.Text("note").Optional(),
	}
}

func (gear) Indexes() []ent.Index {
	return []ent.Index{index.Fields("name", "delete_key").Unique(), index.Fields("is_delete", "create_time", "id")}
}

func gearResource() resource.Resource {
	return resource.Resource{
		Name: "test-gear", Path: "/test/gear", Schema: gear{},
		Label: resource.Text{ZH: "装备", EN: "Gear"}, Org: "orgId",
		Menu: resource.Menu{ID: 1900, ParentID: 0, ModuleID: 2},
		Fields: []resource.Field{
			{Name: "name", Label: resource.Text{ZH: "名称", EN: "Name"}, Required: true, List: true, Form: true, Filter: resource.Contains, Sortable: true, Unique: true},
			{Name: "category", Label: resource.Text{ZH: "类别", EN: "Category"}, Type: resource.Dict, Dict: "org_category", List: true, Form: true, Filter: resource.Eq},
			{Name: "stock", Label: resource.Text{ZH: "库存", EN: "Stock"}, Min: resource.N(0), Max: resource.N(100000), List: true, Form: true, Filter: resource.Range, Sortable: true},
			{Name: "price", Label: resource.Text{ZH: "单价", EN: "Price"}, Scale: 2, Min: resource.N(0), List: true, Form: true},
			{Name: "orgId", Label: resource.Text{ZH: "机构", EN: "Organisation"}, Type: resource.Org, List: true, Form: true, Filter: resource.Eq},
			{Name: "enabled", Label: resource.Text{ZH: "启用", EN: "Enabled"}, List: true, Form: true, Filter: resource.Eq},
			{Name: "arrivedOn", Label: resource.Text{ZH: "到货日", EN: "Arrived on"}, Type: resource.Date, List: true, Form: true, Filter: resource.Range},
			{Name: "note", Label: resource.Text{ZH: "备注", EN: "Note"}, Max: resource.N(200), Form: true},
			{Name: "createTime", Label: resource.Text{ZH: "创建时间", EN: "Created"}, List: true, Sortable: true},
		},
	}
}

func gearModule() host.Module {
	return resource.Attach(host.Module{Name: "TestGear"}, gearResource())
}

const base = "/api/v1/test/gear"

var (
	cPage   = "GET:" + base + "/page"
	cGet    = "GET:" + base + "/{id}"
	cCreate = "POST:" + base
	cUpdate = "PUT:" + base + "/{id}"
	cDelete = "DELETE:" + base + "/{id}"
	cBatch  = "POST:" + base + "/batch-delete"
	cExport = "GET:" + base + "/export"
	cImport = "POST:" + base + "/import/commit"
	cPrev   = "POST:" + base + "/import/preview"
	cTmpl   = "GET:" + base + "/import/template"
	allGear = []string{cPage, cGet, cCreate, cUpdate, cDelete, cBatch, cExport, cImport, cPrev, cTmpl}
)

type paged struct {
	Total int              `json:"total"`
	Items []map[string]any `json:"items"`
}

type env struct {
	t     *testing.T
	k     *kerneltest.Kernel
	admin string
}

func (e *env) ok(what string, r kerneltest.Reply) kerneltest.Reply {
	e.t.Helper()
	return r.ExpectCode(e.t, what, 0)
}

func (e *env) create(tok string, body map[string]any) int64 {
	e.t.Helper()
	var id int64
	r := e.k.Do("POST", base, tok, body)
	if r.Code == 50000 {
		e.t.Log(e.k.Log())
	}
	e.ok(fmt.Sprintf("create %v", body["name"]), r).Decode(e.t, &id)
	return id
}

func (e *env) page(tok, query string) paged {
	e.t.Helper()
	var p paged
	e.ok("page "+query, e.k.Do("GET", base+"/page?"+query, tok, nil)).Decode(e.t, &p)
	return p
}

// scoped creates a user in org with the codes and a role data scope.
func (e *env) scoped(account string, org int64, scopeType int, codes ...string) string {
	e.t.Helper()
	id := e.k.User(account, "User#Passw0rd1", codes...)
	ctx := context.Background()
	e.k.Ent().SysUser.UpdateOneID(id).SetOrgID(org).ExecX(ctx)
	role := e.k.Ent().SysUserRole.Query().AllX(ctx)
	for _, r := range role {
		if r.UserID == id {
			e.ok("scope of "+account, e.k.Do("PUT", "/api/v1/sys/role/datascope", e.admin, map[string]any{"roleId": r.RoleID, "scopeType": scopeType}))
		}
	}
	return e.k.Login(account, "User#Passw0rd1").AccessToken
}

func setup(t *testing.T) *env {
	k := kerneltest.Start(t, nil, gearModule())
	return &env{t: t, k: k, admin: k.Admin()}
}

func TestResourceCRUD(t *testing.T) {
	e := setup(t)

	t.Run("description", func(t *testing.T) {
		var d resource.Description
		e.ok("schema", e.k.Do("GET", "/api/v1/sys/resource/test-gear/schema", e.admin, nil)).Decode(t, &d)
		if d.Base != base || d.Label.EN != "Gear" || len(d.Fields) != 9 || d.Codes["create"] != cCreate || len(d.Operations) != 9 {
			t.Fatalf("description = %+v", d)
		}
		if f := d.Fields[2]; f.Name != "stock" || f.Type != resource.Int || f.Filter != resource.Range || *f.Max != 100000 {
			t.Fatalf("stock = %+v", f)
		}
		if f := d.Fields[0]; f.Max == nil || *f.Max != 32 {
			t.Fatalf("name's max comes from the schema (32): %+v", f)
		}
		if f := d.Fields[8]; !f.ReadOnly || f.Type != resource.DateTime {
			t.Fatalf("createTime = %+v", f)
		}
	})

	bolt := e.create(e.admin, map[string]any{"name": "Bolt", "category": "2", "stock": 40, "price": 1.255, "orgId": 4, "arrivedOn": "2026-03-05", "note": "m8"})
	nut := e.create(e.admin, map[string]any{"name": "Nut", "stock": 5, "orgId": "5", "enabled": false})
	e.create(e.admin, map[string]any{"name": "Washer", "stock": 500, "orgId": 4})

	t.Run("detail", func(t *testing.T) {
		var it map[string]any
		e.ok("detail", e.k.Do("GET", fmt.Sprintf("%s/%d", base, bolt), e.admin, nil)).Decode(t, &it)
		want := map[string]any{"name": "Bolt", "category": "2", "stock": 40.0, "price": 1.26, "orgId": 4.0, "orgName": "前端组", "enabled": true, "arrivedOn": "2026-03-05", "note": "m8"}
		for k, v := range want {
			if it[k] != v {
				t.Errorf("%s = %v (%T), want %v", k, it[k], it[k], v)
			}
		}
		if it["createTime"] == nil {
			t.Errorf("no createTime: %v", it)
		}
	})

	t.Run("page filters and sorting", func(t *testing.T) {
		cases := []struct {
			query string
			names []string
		}{
			{"SortField=name&SortOrder=asc", []string{"Bolt", "Nut", "Washer"}},
			{"SortField=stock&SortOrder=desc", []string{"Washer", "Bolt", "Nut"}},
			{"name=OL&SortField=name", []string{"Bolt"}},
			{"stockFrom=5&stockTo=40&SortField=stock", []string{"Nut", "Bolt"}},
			{"orgId=4&SortField=name", []string{"Bolt", "Washer"}},
			{"enabled=false", []string{"Nut"}},
			{"category=2", []string{"Bolt"}},
			{"arrivedOnFrom=2026-03-05&arrivedOnTo=2026-03-05", []string{"Bolt"}},
			{"SortField=name&Size=1&Current=2", []string{"Nut"}},
		}
		for _, c := range cases {
			p := e.page(e.admin, c.query)
			var got []string
			for _, it := range p.Items {
				got = append(got, it["name"].(string))
			}
			if strings.Join(got, ",") != strings.Join(c.names, ",") {
				t.Errorf("%s: %v, want %v", c.query, got, c.names)
			}
		}
		if p := e.page(e.admin, "Size=1"); p.Total != 3 {
			t.Errorf("total = %d", p.Total)
		}
		e.k.Do("GET", base+"/page?stockFrom=abc", e.admin, nil).ExpectCode(t, "bad range", errcode.RequestInvalid)
	})

	t.Run("validation", func(t *testing.T) {
		bad := []struct {
			body  map[string]any
			field string
			code  errcode.Code
		}{
			{map[string]any{"stock": 1, "orgId": 4}, "name", errcode.RequestInvalid},
			{map[string]any{"name": "   ", "orgId": 4}, "name", errcode.RequestInvalid},
			{map[string]any{"name": strings.Repeat("x", 33), "orgId": 4}, "name", errcode.RequestInvalid},
			{map[string]any{"name": "X", "stock": -1, "orgId": 4}, "stock", errcode.RequestInvalid},
			{map[string]any{"name": "X", "stock": 1.5, "orgId": 4}, "stock", errcode.RequestInvalid},
			{map[string]any{"name": "X", "category": "9", "orgId": 4}, "category", errcode.RequestInvalid},
			{map[string]any{"name": "X", "arrivedOn": "05/03/2026", "orgId": 4}, "arrivedOn", errcode.RequestInvalid},
			{map[string]any{"name": "X", "arrivedOn": "0001-01-01", "orgId": 4}, "arrivedOn", errcode.RequestInvalid},
			{map[string]any{"name": "X", "enabled": "yes", "orgId": 4}, "enabled", errcode.RequestInvalid},
			{map[string]any{"name": "X", "note": strings.Repeat("é", 201), "orgId": 4}, "note", errcode.RequestInvalid},
			{map[string]any{"name": "X", "orgId": 999}, "orgId", errcode.OrgNotFound},
		}
		for _, b := range bad {
			r := e.k.Do("POST", base, e.admin, b.body)
			r.ExpectCode(t, fmt.Sprint(b.body), b.code)
			if b.field != "" && r.Args["field"] != b.field {
				t.Errorf("%v: field %v, want %s", b.body, r.Args["field"], b.field)
			}
		}
		e.k.Do("POST", base, e.admin, map[string]any{"name": "Bolt", "orgId": 4}).ExpectCode(t, "duplicate", errcode.ResourceKeyExists)
		e.k.Do("PUT", fmt.Sprintf("%s/%d", base, nut), e.admin, map[string]any{"name": "Bolt"}).ExpectCode(t, "rename onto a key", errcode.ResourceKeyExists)
		form := httptest.NewRequest("POST", base, strings.NewReader("name=x"))
		form.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		form.Header.Set("Authorization", "Bearer "+e.admin)
		e.k.Send(form).ExpectCode(t, "form body", errcode.UnsupportedMediaType)
		e.k.Do("POST", base, e.admin, `{"name":`).ExpectCode(t, "broken json", errcode.RequestInvalid)
		e.k.Do("POST", base, e.admin, `{"name":"T","orgId":4} {}`).ExpectCode(t, "trailing data", errcode.RequestInvalid)
		e.k.Do("POST", base, e.admin, `{"name":"T\u0000","orgId":4}`).ExpectCode(t, "NUL", errcode.RequestInvalid)
		e.k.Do("GET", base+"/123", e.admin, nil).ExpectCode(t, "missing", errcode.ResourceNotFound)
	})

	t.Run("update keeps absent fields", func(t *testing.T) {
		e.ok("update", e.k.Do("PUT", fmt.Sprintf("%s/%d", base, nut), e.admin, map[string]any{"stock": 7, "note": nil}))
		var it map[string]any
		e.ok("detail", e.k.Do("GET", fmt.Sprintf("%s/%d", base, nut), e.admin, nil)).Decode(t, &it)
		if it["stock"] != 7.0 || it["name"] != "Nut" || it["enabled"] != false || it["updateTime"] == nil {
			t.Fatalf("after update: %v", it)
		}
	})

	t.Run("delete, recycle bin, restore, purge", func(t *testing.T) {
		e.ok("delete", e.k.Do("DELETE", fmt.Sprintf("%s/%d", base, bolt), e.admin, nil))
		e.k.Do("DELETE", fmt.Sprintf("%s/%d", base, bolt), e.admin, nil).ExpectCode(t, "twice", errcode.ResourceNotFound)
		if p := e.page(e.admin, ""); p.Total != 2 {
			t.Fatalf("after delete total %d", p.Total)
		}
		// The key is free while Bolt is in the bin.
		again := e.create(e.admin, map[string]any{"name": "Bolt", "orgId": 4})
		var bin paged
		e.ok("bin", e.k.Do("GET", "/api/v1/sys/recycle/test-gear/page", e.admin, nil)).Decode(t, &bin)
		if bin.Total != 1 || bin.Items[0]["name"] != "Bolt" || bin.Items[0]["deletedByName"] == nil {
			t.Fatalf("bin = %+v", bin)
		}
		e.k.Do("POST", fmt.Sprintf("/api/v1/sys/recycle/test-gear/%d/restore", bolt), e.admin, nil).ExpectCode(t, "restore onto a taken key", errcode.RecycleUniqueConflict)
		e.ok("delete the new one", e.k.Do("DELETE", fmt.Sprintf("%s/%d", base, again), e.admin, nil))
		e.ok("restore", e.k.Do("POST", fmt.Sprintf("/api/v1/sys/recycle/test-gear/%d/restore", bolt), e.admin, nil))
		e.ok("purge", e.k.Do("DELETE", fmt.Sprintf("/api/v1/sys/recycle/test-gear/%d", again), e.admin, nil))
		e.k.Do("DELETE", fmt.Sprintf("/api/v1/sys/recycle/test-gear/%d", bolt), e.admin, nil).ExpectCode(t, "purge a live row", errcode.RecycleNotFound)
		if p := e.page(e.admin, ""); p.Total != 3 {
			t.Fatalf("after restore total %d", p.Total)
		}
	})

	t.Run("batch delete is all or nothing", func(t *testing.T) {
		e.k.Do("POST", base+"/batch-delete", e.admin, map[string]any{"ids": []any{nut, 42}}).ExpectCode(t, "one missing", errcode.ResourceNotFound)
		if p := e.page(e.admin, ""); p.Total != 3 {
			t.Fatalf("a refused batch deleted rows: total %d", p.Total)
		}
		e.k.Do("POST", base+"/batch-delete", e.admin, map[string]any{"ids": []any{}}).ExpectCode(t, "empty", errcode.RequestInvalid)
	})

	t.Run("menus are seeded with the codes", func(t *testing.T) {
		var tree []map[string]any
		e.ok("menus", e.k.Do("GET", "/api/v1/sys/menu/tree", e.admin, nil)).Decode(t, &tree)
		found := ""
		var walk func([]map[string]any)
		walk = func(ns []map[string]any) {
			for _, n := range ns {
				if n["component"] == "resource/test-gear" {
					found, _ = n["path"].(string)
				}
				if ch, ok := n["children"].([]any); ok {
					var sub []map[string]any
					for _, c := range ch {
						sub = append(sub, c.(map[string]any))
					}
					walk(sub)
				}
			}
		}
		walk(tree)
		if found != "/r/test-gear" {
			t.Fatalf("no resource page menu (path %q) in %d roots", found, len(tree))
		}
	})
}

func TestResourceDataScope(t *testing.T) {
	e := setup(t)
	own := e.create(e.admin, map[string]any{"name": "Own", "orgId": 4})
	other := e.create(e.admin, map[string]any{"name": "Other", "orgId": 5})
	// Scope type 2: the caller's own organisation (4).
	tok := e.scoped("fe", 4, 2, allGear...)

	if p := e.page(tok, ""); p.Total != 1 || p.Items[0]["name"] != "Own" {
		t.Fatalf("scoped page = %+v", p)
	}
	cases := []struct {
		what, method, path string
		body               any
		code               errcode.Code
	}{
		{"detail outside", "GET", fmt.Sprintf("%s/%d", base, other), nil, errcode.ResourceNotFound},
		{"update outside", "PUT", fmt.Sprintf("%s/%d", base, other), map[string]any{"stock": 1}, errcode.ResourceNotFound},
		{"delete outside", "DELETE", fmt.Sprintf("%s/%d", base, other), nil, errcode.ResourceNotFound},
		{"batch with one outside", "POST", base + "/batch-delete", map[string]any{"ids": []any{own, other}}, errcode.ResourceNotFound},
		{"create outside", "POST", base, map[string]any{"name": "X", "orgId": 5}, errcode.OrgOutOfScope},
		{"create without org", "POST", base, map[string]any{"name": "X"}, errcode.OrgOutOfScope},
		{"move own row out", "PUT", fmt.Sprintf("%s/%d", base, own), map[string]any{"orgId": 5}, errcode.OrgOutOfScope},
	}
	for _, c := range cases {
		e.k.Do(c.method, c.path, tok, c.body).ExpectCode(t, c.what, c.code)
	}
	if p := e.page(e.admin, ""); p.Total != 2 {
		t.Fatalf("refused writes changed rows: %d", p.Total)
	}
	e.ok("update inside", e.k.Do("PUT", fmt.Sprintf("%s/%d", base, own), tok, map[string]any{"stock": 3}))
	e.create(tok, map[string]any{"name": "Mine", "orgId": 4})

	// Another table's key outside the scope: an import overwrite cannot
	// reach it.
	e.k.Do("POST", base+"/import/commit", tok, map[string]any{"strategy": "overwrite",
		"rows": []any{map[string]any{"row": 2, "values": map[string]any{"name": "Other", "orgId": 4}}}}).ExpectCode(t, "overwrite outside", errcode.ResourceKeyExists)

	// Without codes: 403 on the routes, 41007 on the description.
	none := e.scoped("nobody", 4, 2)
	e.k.Do("GET", base+"/page", none, nil).ExpectCode(t, "page without code", errcode.NoPermission)
	e.k.Do("GET", "/api/v1/sys/resource/test-gear/schema", none, nil).ExpectCode(t, "description without codes", errcode.AreaPermissionRequired)
	e.ok("description with codes", e.k.Do("GET", "/api/v1/sys/resource/test-gear/schema", tok, nil))

	// The bin lists only what the scope holds.
	e.ok("delete own", e.k.Do("DELETE", fmt.Sprintf("%s/%d", base, own), tok, nil))
	e.ok("admin deletes other", e.k.Do("DELETE", fmt.Sprintf("%s/%d", base, other), e.admin, nil))
	binTok := e.scoped("binner", 4, 2, append([]string{"GET:/api/v1/sys/recycle/{type}/page"}, allGear...)...)
	var bin paged
	e.ok("scoped bin", e.k.Do("GET", "/api/v1/sys/recycle/test-gear/page", binTok, nil)).Decode(t, &bin)
	if bin.Total != 1 || bin.Items[0]["name"] != "Own" {
		t.Fatalf("scoped bin = %+v", bin)
	}
}

func get(t *testing.T, k *kerneltest.Kernel, path, tok string) []byte {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept-Language", "en-US")
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != spreadsheet.ContentType {
		t.Fatalf("GET %s = %d %s %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return b
}

func TestResourceSheets(t *testing.T) {
	e := setup(t)
	e.create(e.admin, map[string]any{"name": "Bolt", "category": "2", "stock": 40, "price": 1.5, "orgId": 4})
	e.create(e.admin, map[string]any{"name": "Nut", "stock": 5, "orgId": 5})

	t.Run("export", func(t *testing.T) {
		b := get(t, e.k, base+"/export?"+url.Values{"name": {"bol"}, "columns": {"name,category,orgId,stock"}}.Encode(), e.admin)
		sh, err := spreadsheet.Read(bytes.NewReader(b), 100)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(sh.Headers, "|") != "Name|Category|Organisation|Stock" || len(sh.Rows) != 1 ||
			strings.Join(sh.Rows[0].Cells, "|") != "Bolt|部门|前端组|40" {
			t.Fatalf("export = %v %v", sh.Headers, sh.Rows)
		}
		e.k.Do("GET", base+"/export?columns=secret", e.admin, nil).ExpectCode(t, "unknown column", errcode.ExportColumnInvalid)
	})

	t.Run("template, preview, commit", func(t *testing.T) {
		tmpl := get(t, e.k, base+"/import/template", e.admin)
		if _, err := spreadsheet.Read(bytes.NewReader(tmpl), 500); err != nil {
			t.Fatalf("template: %v", err)
		}
		x := excelize.NewFile()
		rows := [][]any{
			{"Name", "Category", "Stock", "Organisation"},
			{"Bolt", "小组", 41, 4},    // exists
			{"Screw", "部门", 3, 4},    // new
			{"Pin", "", -2, 4},       // error: stock
			{"Screw", "", 1, 4},      // duplicate in the file
			{"Rivet", "", 1, 999999}, // unknown org
		}
		for i, r := range rows {
			cell, _ := excelize.CoordinatesToCellName(1, i+1)
			if err := x.SetSheetRow("Sheet1", cell, &r); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := x.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("file", "gear.xlsx")
		_, _ = fw.Write(buf.Bytes())
		_ = mw.Close()
		req := httptest.NewRequest("POST", base+"/import/preview", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+e.admin)
		var pv resource.Preview
		e.ok("preview", e.k.Send(req)).Decode(t, &pv)
		if pv.Total != 5 || pv.ErrorCount != 3 || pv.Existing != 1 {
			t.Fatalf("preview = %+v", pv)
		}
		if !pv.Rows[0].Exists || len(pv.Rows[0].Errors) != 0 || pv.Rows[0].Values["category"] != "3" {
			t.Fatalf("existing row = %+v", pv.Rows[0])
		}
		if pv.Rows[2].Errors[0].Field != "stock" || pv.Rows[3].Errors[0].Code != errcode.ImportDuplicateInFile || pv.Rows[4].Errors[0].Code != errcode.OrgNotFound {
			t.Fatalf("errors = %+v", pv.Rows[2:])
		}
		commit := func(strategy string) kerneltest.Reply {
			return e.k.Do("POST", base+"/import/commit", e.admin, map[string]any{"strategy": strategy,
				"rows": []any{map[string]any{"row": 2, "values": pv.Rows[0].Values}, map[string]any{"row": 3, "values": pv.Rows[1].Values}}})
		}
		commit("fail").ExpectCode(t, "fail on an existing key", errcode.ResourceKeyExists)
		if p := e.page(e.admin, ""); p.Total != 2 {
			t.Fatalf("a failed import wrote rows: %d", p.Total)
		}
		var res resource.CommitResult
		e.ok("skip", commit("skip")).Decode(t, &res)
		if res != (resource.CommitResult{Created: 1, Skipped: 1}) {
			t.Fatalf("skip = %+v", res)
		}
		e.ok("overwrite", commit("overwrite")).Decode(t, &res)
		if res != (resource.CommitResult{Updated: 2}) {
			t.Fatalf("overwrite = %+v", res)
		}
		p := e.page(e.admin, "name=bolt")
		if p.Items[0]["stock"] != 41.0 || p.Items[0]["category"] != "3" {
			t.Fatalf("overwritten Bolt = %v", p.Items[0])
		}
	})
}
