package oplog_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/xuri/excelize/v2"

	"github.com/adminkernel/kernel/ent/sysoplog"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/spreadsheet"
)

// TestOpLogExport: the export holds the page's rows (same filters, newest
// first) in the columns asked for (the default profile otherwise), answers
// 46013 and 46012, needs its code, and is itself operation-logged.
func TestOpLogExport(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	admin := k.Admin()
	opID := k.User("operator", "Oper#Passw0rd1")
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := range 2500 { // more than two batches
		c := k.Ent().SysOpLog.Create().SetTitle(fmt.Sprintf("op-%d", i%5)).SetHTTPMethod("POST").
			SetPath(fmt.Sprintf("/api/v1/x/%d", i)).SetResultCode(i % 2).SetSuccess(i%2 == 0).SetElapsedMs(int64(i)).
			SetCreateTime(base.Add(time.Duration(i/3) * time.Second)) // equal times: the keyset breaks ties by id
		if i%4 == 0 {
			c.SetOperatorID(opID)
		}
		c.ExecX(ctx)
	}
	download := func(tok, query string) (int, []byte, string) {
		req := httptest.NewRequestWithContext(t.Context(), "GET", "/api/v1/sys/log/op/export?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 60 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, resp.Header.Get("Content-Type")
	}
	rowsOf := func(q url.Values) [][]string {
		t.Helper()
		status, body, ct := download(admin, q.Encode())
		if status != 200 || ct != spreadsheet.ContentType {
			t.Fatalf("export %v = %d %s %s", q, status, ct, body)
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
	type item struct {
		Title        string  `json:"title"`
		Path         string  `json:"path"`
		OperatorName *string `json:"operatorName"`
	}
	cases := []url.Values{
		{"Title": {"op-1"}},
		{"Success": {"true"}, "Path": {"/api/v1/x/1"}},
		{"OperatorId": {fmt.Sprint(opID)}},
		{"StartTime": {base.Add(100 * time.Second).Format("2006-01-02 15:04:05")}, "EndTime": {base.Add(200 * time.Second).Format("2006-01-02 15:04:05")}},
	}
	for _, q := range cases {
		t.Run(q.Encode(), func(t *testing.T) {
			var items []item
			for cur := 1; ; cur++ {
				pq := url.Values{}
				for k, v := range q {
					pq[k] = v
				}
				pq.Set("Size", "200")
				pq.Set("Current", fmt.Sprint(cur))
				r := k.Do("GET", "/api/v1/sys/log/op/page?"+pq.Encode(), admin, nil).Expect(t, "page", 200, 0)
				var p struct {
					Items []item `json:"items"`
				}
				r.Decode(t, &p)
				items = append(items, p.Items...)
				if len(p.Items) < 200 {
					break
				}
			}
			eq := url.Values{}
			for k, v := range q {
				eq[k] = v
			}
			eq.Set("columns", "title,Path,OperatorName")
			rows := rowsOf(eq)
			if !slices.Equal(rows[0], []string{"操作", "请求路径", "操作人"}) {
				t.Fatalf("header = %v", rows[0])
			}
			if len(rows)-1 != len(items) || len(items) == 0 {
				t.Fatalf("export has %d rows, the page %d", len(rows)-1, len(items))
			}
			for i, it := range items {
				r := append(rows[i+1], "", "", "")
				op := ""
				if it.OperatorName != nil {
					op = *it.OperatorName
				}
				if r[0] != it.Title || r[1] != it.Path || r[2] != op {
					t.Fatalf("row %d = %v, page %+v", i, rows[i+1], it)
				}
			}
		})
	}
	// The default profile: every column but ExceptionMessage.
	if rows := rowsOf(url.Values{"Title": {"op-1"}}); len(rows[0]) != 9 || slices.Contains(rows[0], "异常信息") {
		t.Fatalf("default columns = %v", rows[0])
	}
	k.Do("GET", "/api/v1/sys/log/op/export?columns=Title,ParamJson", admin, nil).Expect(t, "bad column", 200, 46013)
	if err := k.Settings().Set(ctx, "sys.export.maxRows", "100"); err != nil {
		t.Fatal(err)
	}
	k.Do("GET", "/api/v1/sys/log/op/export", admin, nil).Expect(t, "too many rows", 200, 46012)
	tok := k.Login("operator", "Oper#Passw0rd1").AccessToken
	k.Do("GET", "/api/v1/sys/log/op/export?Title=op-1", tok, nil).Expect(t, "without the code", 403, 41001)
	deadline := time.Now().Add(10 * time.Second)
	for k.Ent().SysOpLog.Query().Where(sysoplog.Path("/api/v1/sys/log/op/export")).CountX(ctx) < 7 {
		if time.Now().After(deadline) {
			t.Fatal("the exports are not in the operation log")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
