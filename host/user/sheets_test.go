package user_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/xuri/excelize/v2"

	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/host/spreadsheet"
	"github.com/adminkernel/kernel/internal/race"
)

const (
	cImport = "POST:/api/v1/sys/user/import/preview"
	cExport = "GET:/api/v1/sys/user/export"
)

var importCodes = []string{
	"POST:/api/v1/sys/user/import/preview", "POST:/api/v1/sys/user/import/validate",
	"POST:/api/v1/sys/user/import/error-report", "POST:/api/v1/sys/user/import/commit",
}

// importHeaders are the template's titles in order.
var importHeaders = []string{"账号*", "姓名*", "昵称", "手机号", "邮箱", "性别", "机构", "岗位", "状态", "角色编码"}

// workbook builds an xlsx with the header row and rows.
func workbook(t testing.TB, headers []string, rows [][]string) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer func() { _ = f.Close() }()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	put := func(n int, cells []string) {
		vals := make([]any, len(cells))
		for i, c := range cells {
			vals[i] = c
		}
		cell, _ := excelize.CoordinatesToCellName(1, n)
		if err := sw.SetRow(cell, vals); err != nil {
			t.Fatal(err)
		}
	}
	put(1, headers)
	for i, r := range rows {
		put(i+2, r)
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// raw sends a request and returns status, headers and body, whatever the
// body is.
func raw(t testing.TB, k *kerneltest.Kernel, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 8 * time.Minute})
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// upload posts a file to preview.
func (e *env) upload(tok, name string, content []byte, mapping string) kerneltest.Reply {
	e.t.Helper()
	return uploadTo(e.t, e.k, tok, name, content, mapping)
}

// uploadTo posts a multipart file (none when content is nil) and an
// optional mapping to preview.
func uploadTo(tb testing.TB, k *kerneltest.Kernel, tok, name string, content []byte, mapping string) kerneltest.Reply {
	tb.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if content != nil {
		fw, err := mw.CreateFormFile("file", name)
		if err != nil {
			tb.Fatal(err)
		}
		_, _ = fw.Write(content)
	}
	if mapping != "" {
		_ = mw.WriteField("mapping", mapping)
	}
	_ = mw.Close()
	req := httptest.NewRequestWithContext(tb.Context(), "POST", base+"/import/preview", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+tok)
	return k.Send(req)
}

type cellError struct {
	ColumnKey string         `json:"columnKey"`
	Code      int            `json:"code"`
	Args      map[string]any `json:"args"`
}

type importRow struct {
	Index  int               `json:"index"`
	Cells  map[string]string `json:"cells"`
	Errors []cellError       `json:"errors"`
}

type preview struct {
	Headers      []string          `json:"headers"`
	Mapping      map[string]string `json:"mapping"`
	Rows         []importRow       `json:"rows"`
	Total        int               `json:"total"`
	ErrorRows    int               `json:"errorRows"`
	ColumnErrors []cellError       `json:"columnErrors"`
}

type commitResult struct {
	Total, Inserted, Updated, Skipped, Failed int
	Failures                                  []importRow `json:"failures"`
	Passwords                                 []struct {
		Index           int    `json:"index"`
		Account         string `json:"account"`
		InitialPassword string `json:"initialPassword"`
	} `json:"passwords"`
}

func (e *env) preview(tok string, content []byte) preview {
	e.t.Helper()
	r := e.expect("preview", e.upload(tok, "users.xlsx", content, ""), 0)
	var p preview
	r.Decode(e.t, &p)
	return p
}

func (e *env) commit(tok string, rows []importRow, strategy int) commitResult {
	e.t.Helper()
	body, err := json.Marshal(map[string]any{"rows": rows, "strategy": strategy})
	if err != nil {
		e.t.Fatal(err)
	}
	req := httptest.NewRequestWithContext(e.t.Context(), "POST", base+"/import/commit", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	// 10 000 rows under -race on a loaded machine take longer than
	// kerneltest's 60 s client timeout.
	status, h, answer := raw(e.t, e.k, req)
	var r kerneltest.Reply
	if err := json.Unmarshal(answer, &r); err != nil {
		e.t.Fatalf("commit answered %d %q", status, answer)
	}
	r.Status, r.Header = status, h
	e.expect("commit", r, 0)
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		e.t.Fatalf("commit Cache-Control = %q, want no-store", cc)
	}
	var out commitResult
	r.Decode(e.t, &out)
	return out
}

func errorsOf(p []importRow) map[int][]int {
	out := map[int][]int{}
	for _, r := range p {
		for _, e := range r.Errors {
			out[r.Index] = append(out[r.Index], e.Code)
		}
	}
	return out
}

func (e *env) liveUsers() int {
	e.t.Helper()
	return e.k.Ent().SysUser.Query().Where(sysuser.IsDelete(false)).CountX(context.Background())
}

// TestImportTenThousand: a 10 000-row file with 3 bad rows reports exactly
// those rows and commits nothing; the corrected file commits all of them
// in one go; a second commit of the same rows skips, overwrites or fails
// them by strategy. Under the race detector the file has 1 000 rows (the
// same paths, a tenth of the time); make test-matrix runs all 10 000.
func TestImportTenThousand(t *testing.T) {
	e := setup(t)
	n := 10000
	if race.Enabled {
		n = 1000
	}
	rows := make([][]string, n)
	for i := range rows {
		rows[i] = []string{fmt.Sprintf("imp%05d", i), fmt.Sprintf("导入%d", i), "", fmt.Sprintf("1380000%04d", i), "",
			"男", "技术部", "专员", "启用", "scope_all"}
	}
	// File rows count from 2 (row 1 is the header).
	bad1, bad2, bad3 := 99, n/2-1, n*9/10-1
	rows[bad1][1] = ""             // 46005
	rows[bad2][4] = "not-an-email" // 46008
	rows[bad3][0] = rows[0][0]     // 46009
	before := e.liveUsers()

	p := e.preview(e.admin, workbook(t, importHeaders, rows))
	if p.Total != n || p.ErrorRows != 3 || len(p.ColumnErrors) != 0 {
		t.Fatalf("preview total %d errorRows %d columnErrors %v", p.Total, p.ErrorRows, p.ColumnErrors)
	}
	want := map[int][]int{bad1 + 2: {46005}, bad2 + 2: {46008}, bad3 + 2: {46009}}
	if got := errorsOf(p.Rows); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("row errors = %v, want %v", got, want)
	}
	res := e.commit(e.admin, p.Rows, 0)
	if res.Failed != 3 || res.Inserted != 0 || len(res.Failures) != 3 || len(res.Passwords) != 0 {
		t.Fatalf("commit with bad rows = %+v", res)
	}
	if got := e.liveUsers(); got != before {
		t.Fatalf("a failed commit wrote users: %d -> %d", before, got)
	}

	// Corrected: validate says clean, commit inserts every row.
	rows[bad1][1] = "修正"
	rows[bad2][4] = "ok@example.com"
	rows[bad3][0] = "imp-fixed"
	p = e.preview(e.admin, workbook(t, importHeaders, rows))
	if p.ErrorRows != 0 {
		t.Fatalf("corrected preview errorRows = %d: %v", p.ErrorRows, errorsOf(p.Rows))
	}
	r := e.expect("validate", e.do("POST", base+"/import/validate", e.admin, map[string]any{"rows": p.Rows}), 0)
	var v preview
	r.Decode(t, &v)
	if v.ErrorRows != 0 || v.Total != n {
		t.Fatalf("validate = total %d errorRows %d", v.Total, v.ErrorRows)
	}
	res = e.commit(e.admin, p.Rows, 0)
	if res.Inserted != n || res.Failed != 0 || res.Total != n || len(res.Passwords) != n {
		t.Fatalf("commit = inserted %d failed %d total %d passwords %d", res.Inserted, res.Failed, res.Total, len(res.Passwords))
	}
	if got := e.liveUsers(); got != before+n {
		t.Fatalf("users after commit = %d, want %d", got, before+n)
	}
	// The reported password works once, and must be changed.
	pw := res.Passwords[7]
	if pw.Account != "imp00007" || len(pw.InitialPassword) < 20 {
		t.Fatalf("password entry = %+v", pw)
	}
	if tp := e.k.Login(pw.Account, pw.InitialPassword); !tp.MustChangePassword {
		t.Fatal("an imported account must change its password")
	}
	got := e.page(e.admin, url.Values{"Account": {"imp00007"}})
	if len(got.Items) != 1 || *got.Items[0].OrgName != "技术部" || *got.Items[0].PositionName != "专员" || *got.Items[0].Gender != "1" {
		t.Fatalf("imported user = %+v", got.Items)
	}
	if d := e.get(e.admin, got.Items[0].ID); !slices.Equal(d.RoleIDs, []int64{2}) {
		t.Fatalf("imported roles = %v, want [2]", d.RoleIDs)
	}

	// Again: every account exists now.
	p = e.preview(e.admin, workbook(t, importHeaders, rows[:10]))
	if p.ErrorRows != 10 || p.Rows[0].Errors[0].Code != 46010 {
		t.Fatalf("preview of existing accounts = %d %v", p.ErrorRows, p.Rows[0].Errors)
	}
	if res := e.commit(e.admin, p.Rows, 0); res.Skipped != 10 || res.Inserted != 0 {
		t.Fatalf("skip = %+v", res)
	}
	if res := e.commit(e.admin, p.Rows, 2); res.Failed != 10 || res.Failures[0].Errors[0].Code != 46010 {
		t.Fatalf("error strategy = %+v", res)
	}
	p.Rows[0].Cells["name"] = "覆盖"
	p.Rows[0].Cells["enabled"] = "停用"
	if res := e.commit(e.admin, p.Rows, 1); res.Updated != 10 || res.Inserted != 0 || len(res.Passwords) != 0 {
		t.Fatalf("overwrite = %+v", res)
	}
	if got := e.page(e.admin, url.Values{"Account": {"imp00000"}}); got.Items[0].Name != "覆盖" || got.Items[0].Enabled {
		t.Fatalf("overwritten user = %+v", got.Items[0])
	}
}

// TestImportCodes: each import code, and the file limits.
func TestImportCodes(t *testing.T) {
	e := setup(t)
	e.create(e.admin, map[string]any{"account": "taken", "name": "Taken"})
	good := []string{"u1", "U1", "", "", "", "", "", "", "", ""}
	tests := []struct {
		name string
		cell int
		val  string
		code int
	}{
		{"required account", 0, "", 46005},
		{"account format", 0, "a b", 46008},
		{"required name", 1, "", 46005},
		{"phone format", 3, "12-34", 46008},
		{"email format", 4, "x@", 46008},
		{"gender not in the dictionary", 5, "外星", 46006},
		{"unknown org", 6, "不存在的部门", 46007},
		{"unknown position", 7, "宇航员", 46007},
		{"status not in the dictionary", 8, "也许", 46006},
		{"unknown role", 9, "no_such_role", 46007},
		{"account in the database", 0, "taken", 46010},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			row := slices.Clone(good)
			row[tc.cell] = tc.val
			p := e.preview(e.admin, workbook(t, importHeaders, [][]string{row}))
			if p.ErrorRows != 1 || len(p.Rows[0].Errors) != 1 || p.Rows[0].Errors[0].Code != tc.code {
				t.Fatalf("errors = %+v, want one %d", p.Rows[0].Errors, tc.code)
			}
		})
	}
	// Labels and values of the dictionaries, org and position by code.
	p := e.preview(e.admin, workbook(t, importHeaders, [][]string{{"u2", "U2", "", "+8613800000000", "u2@example.com", "2", "smart_fe", "lead", "0", "scope_all, scope_self"}}))
	if p.ErrorRows != 0 {
		t.Fatalf("values by code: %v", p.Rows[0].Errors)
	}
	// Duplicates in the file name the first row.
	p = e.preview(e.admin, workbook(t, importHeaders, [][]string{good, {"U1", "again"}}))
	if p.ErrorRows != 1 || p.Rows[1].Errors[0].Code != 46009 || p.Rows[1].Errors[0].Args["row"] != float64(2) {
		t.Fatalf("duplicate in file: %+v", p.Rows)
	}
	// A missing required column, a mapping that supplies it.
	p = e.preview(e.admin, workbook(t, []string{"登录名", "姓名"}, [][]string{{"u3", "U3"}}))
	if len(p.ColumnErrors) != 1 || p.ColumnErrors[0].Code != 46004 || p.ColumnErrors[0].ColumnKey != "account" {
		t.Fatalf("column errors = %+v", p.ColumnErrors)
	}
	r := e.expect("mapped preview", e.upload(e.admin, "u.xlsx", workbook(t, []string{"登录名", "姓名"}, [][]string{{"u3", "U3"}}), `{"登录名":"account"}`), 0)
	r.Decode(t, &p)
	if len(p.ColumnErrors) != 0 || p.Rows[0].Cells["account"] != "u3" || p.Mapping["登录名"] != "account" {
		t.Fatalf("mapped preview = %+v", p)
	}
	e.expect("bad mapping", e.upload(e.admin, "u.xlsx", workbook(t, importHeaders, [][]string{good}), `{"账号":"password"}`), 48002)
	e.expect("mapping not JSON", e.upload(e.admin, "u.xlsx", workbook(t, importHeaders, [][]string{good}), `{`), 48002)
	e.expect("header only", e.upload(e.admin, "u.xlsx", workbook(t, importHeaders, nil), ""), 46002)
	e.expect("no file", e.upload(e.admin, "u.xlsx", nil, `{}`), 44001)
	e.expect("empty file", e.upload(e.admin, "u.xlsx", []byte{}, ""), 44001)
	e.expect("not xlsx by name", e.upload(e.admin, "u.csv", []byte("a,b"), ""), 44003)
	e.expect("not xlsx inside", e.upload(e.admin, "u.xlsx", []byte("plain text"), ""), 48002)
	e.expect("validate nothing", e.do("POST", base+"/import/validate", e.admin, map[string]any{"rows": []any{}}), 46002)
	e.expect("bad strategy", e.do("POST", base+"/import/commit", e.admin, map[string]any{"rows": []importRow{{Index: 2, Cells: map[string]string{"account": "x", "name": "y"}}}, "strategy": 7}), 48002)

	// The file area's size limit (checked before the workbook is opened).
	if err := e.k.Settings().Set(context.Background(), "sys.upload.maxSizeMb", "1"); err != nil {
		t.Fatal(err)
	}
	e.expect("over the upload limit", e.upload(e.admin, "u.xlsx", make([]byte, 1<<20+1), ""), 44002)
	if err := e.k.Settings().Set(context.Background(), "sys.import.maxRows", "2"); err != nil {
		t.Fatal(err)
	}
	three := [][]string{{"a1", "A"}, {"a2", "A"}, {"a3", "A"}}
	e.expect("row limit (file)", e.upload(e.admin, "u.xlsx", workbook(t, importHeaders, three), ""), 46003)
	rows := []importRow{{Index: 2, Cells: map[string]string{"account": "a1", "name": "A"}}, {Index: 3, Cells: map[string]string{"account": "a2", "name": "A"}}, {Index: 4, Cells: map[string]string{"account": "a3", "name": "A"}}}
	e.expect("row limit (validate)", e.do("POST", base+"/import/validate", e.admin, map[string]any{"rows": rows}), 46003)
	e.expect("row limit (commit)", e.do("POST", base+"/import/commit", e.admin, map[string]any{"rows": rows}), 46003)
}

// TestImportScopeAndAuthority: a restricted administrator imports only
// into orgs of their scope (46011), grants only delegatable roles (41004)
// and only what they hold (41006), and cannot overwrite users outside
// their scope; the import endpoints need their codes.
func TestImportScopeAndAuthority(t *testing.T) {
	e := setup(t)
	outside, _ := e.create(e.admin, map[string]any{"account": "outsider", "name": "O", "orgId": 6})
	_ = outside
	// Own org and below (3 = 技术部: 3, 4, 5).
	_, tok := e.scoped("lead", 3, 3, nil, append(slices.Clone(importCodes), cPage)...)
	cases := []struct {
		name string
		row  []string
		code int
	}{
		{"org outside the scope", []string{"s1", "S", "", "", "", "", "产品部"}, 46011},
		{"no org", []string{"s2", "S"}, 46011},
		{"role not delegatable", []string{"s3", "S", "", "", "", "", "前端组", "", "", "scope_all"}, 41004},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := e.preview(tok, workbook(t, importHeaders, [][]string{tc.row}))
			if p.ErrorRows != 1 || p.Rows[0].Errors[0].Code != tc.code {
				t.Fatalf("errors = %+v, want %d", p.Rows[0].Errors, tc.code)
			}
		})
	}
	// A delegatable role carrying codes the caller does not hold: 41006.
	e.expect("mark delegatable", e.do("PUT", "/api/v1/sys/role/2", e.admin, map[string]any{"name": "全部数据", "code": "scope_all", "sort": 2, "enabled": true, "isDelegatable": true}), 0)
	p := e.preview(tok, workbook(t, importHeaders, [][]string{{"s4", "S", "", "", "", "", "前端组", "", "", "scope_all"}}))
	if p.ErrorRows != 1 || p.Rows[0].Errors[0].Code != 41006 {
		t.Fatalf("authority errors = %+v", p.Rows[0].Errors)
	}
	// In scope: commits.
	p = e.preview(tok, workbook(t, importHeaders, [][]string{{"s5", "S", "", "", "", "", "后端组"}}))
	if res := e.commit(tok, p.Rows, 0); res.Inserted != 1 {
		t.Fatalf("scoped commit = %+v", res)
	}
	// Overwriting a user outside the scope: 41005 on the account.
	p = e.preview(e.admin, workbook(t, importHeaders, [][]string{{"outsider", "X", "", "", "", "", "后端组"}}))
	if res := e.commit(tok, p.Rows, 1); res.Failed != 1 || res.Failures[0].Errors[0].Code != 41005 {
		t.Fatalf("overwrite outside scope = %+v", res)
	}
	if e.get(e.admin, outside).Name != "O" {
		t.Fatal("a refused overwrite changed the user")
	}
	// Without the codes: 403.
	_, none := e.scoped("nobody", 3, 3, nil, cPage)
	e.upload(none, "u.xlsx", workbook(t, importHeaders, [][]string{{"z", "Z"}}), "").Expect(t, "preview without code", 403, 41001)
	e.do("POST", base+"/import/commit", none, map[string]any{"rows": p.Rows}).Expect(t, "commit without code", 403, 41001)
	e.do("GET", base+"/export", none, nil).Expect(t, "export without code", 403, 41001)
	// The template needs a session only.
	req := httptest.NewRequestWithContext(t.Context(), "GET", base+"/import/template", nil)
	req.Header.Set("Authorization", "Bearer "+none)
	status, h, body := raw(t, e.k, req)
	if status != 200 || h.Get("Content-Type") != spreadsheet.ContentType {
		t.Fatalf("template = %d %s", status, h.Get("Content-Type"))
	}
	f, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	head, _ := f.GetRows("Sheet1")
	if len(head) != 2 || !slices.Equal(head[0], importHeaders) || head[1][0] != "zhangsan" {
		t.Fatalf("template rows = %v", head)
	}
	dvs, err := f.GetDataValidations("Sheet1")
	if err != nil || len(dvs) != 2 {
		t.Fatalf("template drop-downs = %d (%v)", len(dvs), err)
	}
	req = httptest.NewRequestWithContext(t.Context(), "GET", base+"/import/template", nil)
	if status, _, _ := raw(t, e.k, req); status != 401 {
		t.Fatalf("anonymous template = %d, want 401", status)
	}
}

// TestErrorReport: the report carries every row with its errors beside it.
func TestErrorReport(t *testing.T) {
	e := setup(t)
	rows := []importRow{
		{Index: 2, Cells: map[string]string{"account": "ok1", "name": "OK"}},
		{Index: 3, Cells: map[string]string{"account": "bad", "name": "", "email": "nope"}},
		// Longer than a cell may hold: cut, not a 500.
		{Index: 4, Cells: map[string]string{"account": "long", "name": strings.Repeat("长", 40000)}},
	}
	body, _ := json.Marshal(map[string]any{"rows": rows})
	req := httptest.NewRequestWithContext(t.Context(), "POST", base+"/import/error-report", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.admin)
	req.Header.Set("Accept-Language", "en-US")
	status, h, out := raw(t, e.k, req)
	if status != 200 || h.Get("Content-Type") != spreadsheet.ContentType {
		t.Fatalf("error report = %d %s %s", status, h.Get("Content-Type"), out)
	}
	f, err := excelize.OpenReader(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	got, _ := f.GetRows("Sheet1")
	if len(got) != 4 || got[1][0] != "2" || got[2][0] != "3" || len([]rune(got[3][2])) != excelize.TotalCellChars {
		t.Fatalf("report rows = %v", got)
	}
	last := got[2][len(got[2])-1]
	if !strings.Contains(last, "46005") || !strings.Contains(last, "46008") || !strings.Contains(last, "required") {
		t.Fatalf("report errors of row 3 = %q", last)
	}
	if len(got[1]) == len(importHeaders)+2 && got[1][len(got[1])-1] != "" {
		t.Fatalf("a clean row has errors: %v", got[1])
	}
	e.expect("empty report", e.do("POST", base+"/import/error-report", e.admin, map[string]any{"rows": []any{}}), 46002)
}

// exported downloads an export and returns its rows.
func exported(t *testing.T, e *env, tok, path string) [][]string {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), "GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	status, h, body := raw(t, e.k, req)
	if status != 200 || h.Get("Content-Type") != spreadsheet.ContentType {
		t.Fatalf("%s = %d %s %s", path, status, h.Get("Content-Type"), body)
	}
	f, err := excelize.OpenReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	rows, err := f.GetRows("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestUserExport: the export has the page's rows (filters, data scope,
// order), the columns asked for, and its codes; it is operation-logged.
func TestUserExport(t *testing.T) {
	e := setup(t)
	for i := range 1203 { // more than one batch of the export
		org := 4
		if i%3 == 0 {
			org = 6
		}
		e.k.Ent().SysUser.Create().SetAccount(fmt.Sprintf("exp%04d", i)).SetName(fmt.Sprintf("E%d", i)).
			SetOrgID(int64(org)).SetGender("2").SetPasswordHash("x").ExecX(context.Background())
	}
	check := func(tok string, q url.Values) {
		t.Helper()
		q.Set("columns", "Account,name,OrgName,Gender")
		rows := exported(t, e, tok, base+"/export?"+q.Encode())
		q.Del("columns")
		q.Set("Size", "200")
		var p page
		for cur := 1; ; cur++ {
			q.Set("Current", fmt.Sprint(cur))
			pg := e.page(tok, q)
			p.Total = pg.Total
			p.Items = append(p.Items, pg.Items...)
			if len(pg.Items) < 200 {
				break
			}
		}
		if len(rows)-1 != p.Total || p.Total != len(p.Items) {
			t.Fatalf("export %v has %d rows, the page %d (%d items)", q, len(rows)-1, p.Total, len(p.Items))
		}
		if !slices.Equal(rows[0], []string{"账号", "姓名", "机构", "性别"}) {
			t.Fatalf("header = %v", rows[0])
		}
		for i, it := range p.Items {
			org := ""
			if it.OrgName != nil {
				org = *it.OrgName
			}
			r := append(rows[i+1], "", "", "", "")
			if r[0] != it.Account || r[1] != it.Name || r[2] != org {
				t.Fatalf("row %d = %v, page item %+v", i, rows[i+1], it)
			}
		}
	}
	check(e.admin, url.Values{})
	check(e.admin, url.Values{"OrgId": {"6"}})
	check(e.admin, url.Values{"Account": {"exp00"}})
	_, tok := e.scoped("exporter", 3, 3, nil, cExport, cPage)
	check(tok, url.Values{})
	if rows := exported(t, e, e.admin, base+"/export?Account=exp0001&columns=Gender"); len(rows) != 2 || rows[1][0] != "女" {
		t.Fatalf("gender label = %v", rows)
	}
	if rows := exported(t, e, e.admin, base+"/export?Account=exp0001"); len(rows[0]) != 12 {
		t.Fatalf("default columns = %v", rows[0])
	}
	e.expect("bad column", e.do("GET", base+"/export?columns=Account,PasswordHash", e.admin, nil), 46013)
	if err := e.k.Settings().Set(context.Background(), "sys.export.maxRows", "10"); err != nil {
		t.Fatal(err)
	}
	e.expect("too many rows", e.do("GET", base+"/export", e.admin, nil), 46012)
	exported(t, e, e.admin, base+"/export?Account=exp0001")
	// Exports are operation-logged (the writer is asynchronous).
	poll.Until(t, 10*time.Second, "the exports in the operation log", func() bool {
		return e.k.Ent().SysOpLog.Query().Where(sysoplog.Path(base+"/export"), sysoplog.HTTPMethod("GET")).CountX(context.Background()) >= 9
	})
}
