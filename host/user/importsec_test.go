package user_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/spreadsheet/sheettest"
)

// TestImportCommitNeedsReauth: the import commit writes users (and their
// roles), as POST /sys/user does, so it is +R: with TOTP on, a session
// without a re-authentication window is refused 403 / 40024 and nothing is
// written; after re-authenticating the same commit goes through. Preview
// and validate only read and stay outside the set.
func TestImportCommitNeedsReauth(t *testing.T) {
	e := setup(t)
	p := e.preview(e.admin, workbook(t, importHeaders, [][]string{{"reauthimp", "R"}}))
	if p.ErrorRows != 0 || len(p.Rows) != 1 {
		t.Fatalf("preview = %+v", p)
	}
	if err := e.k.Settings().Set(t.Context(), "sys.security.totp.enabled", "true"); err != nil {
		t.Fatal(err)
	}
	before := e.liveUsers()
	r := e.do("POST", base+"/import/commit", e.admin, map[string]any{"rows": p.Rows, "strategy": 0})
	if r.Status != http.StatusForbidden || r.Code != int(errcode.ReauthRequired) {
		t.Fatalf("commit without re-authentication = HTTP %d code %d, want 403 40024", r.Status, r.Code)
	}
	if n := e.liveUsers(); n != before {
		t.Fatalf("a refused commit wrote users: %d -> %d", before, n)
	}
	e.expect("validate is not +R", e.do("POST", base+"/import/validate", e.admin, map[string]any{"rows": p.Rows}), 0)
	e.expect("preview is not +R", e.upload(e.admin, "u.xlsx", workbook(t, importHeaders, [][]string{{"reauthimp", "R"}}), ""), 0)
	e.expect("re-authenticate", e.do("POST", "/api/v1/auth/reauth", e.admin, map[string]any{"method": "password", "password": kerneltest.AdminPassword}), 0)
	if res := e.commit(e.admin, p.Rows, 0); res.Inserted != 1 {
		t.Fatalf("commit after re-authentication = %+v", res)
	}
	// The commit's code is among the high-sensitivity defaults.
	var l struct {
		Defaults []string `json:"defaults"`
	}
	e.expect("list", e.do("GET", "/api/v1/sys/mfa/high-sensitivity", e.admin, nil), 0).Decode(t, &l)
	found := false
	for _, c := range l.Defaults {
		found = found || c == "POST:/api/v1/sys/user/import/commit"
	}
	if !found {
		t.Fatalf("defaults lack the import commit: %v", l.Defaults)
	}
}

// heapDuring runs f and returns the peak heap growth during it in MiB
// (peakHeap, bench_test.go). The kernel runs in the test's process, so
// this is the request's memory (and the client's).
func heapDuring(f func()) float64 {
	stop := peakHeap()
	f()
	return float64(stop()) / (1 << 20)
}

// TestImportPreviewBombs (Security III, 2): a ~205 KiB workbook holding a
// 200 MiB cell, in the sheet or in the shared strings, declared honestly
// or with a lying size, is refused by the preview with an envelope error
// (46015, 48002) and the heap grows by less than 64 MiB; a 1 MiB cell is
// 46014; a 10 000-character cell is previewed, flagged too long, and
// answered cut to 256 characters and an ellipsis. The old reader (excelize
// with a 256 MiB unpack limit) took the process to about 2.7 GB and
// answered the 200 MiB cell back.
func TestImportPreviewBombs(t *testing.T) {
	e := setup(t)
	build := func(f func(int64) ([]byte, error), n int64) []byte {
		b, err := f(n)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cell := build(sheettest.CellBomb, 200<<20)
	shared := build(sheettest.SharedStringBomb, 200<<20)
	for _, tc := range []struct {
		name string
		file []byte
		code errcode.Code
	}{
		{"sheet cell 200 MiB", cell, errcode.ImportWorkbookTooLarge},
		{"shared string 200 MiB", shared, errcode.ImportWorkbookTooLarge},
		{"sheet cell 200 MiB, size declared 4 KiB", sheettest.Lie(cell, "xl/worksheets/sheet1.xml", 4096), errcode.RequestInvalid},
		{"shared string 200 MiB, size declared 4 KiB", sheettest.Lie(shared, "xl/sharedStrings.xml", 4096), errcode.RequestInvalid},
		{"sheet cell 1 MiB", build(sheettest.CellBomb, 1<<20), errcode.ImportCellTooLarge},
		{"shared string 1 MiB", build(sheettest.SharedStringBomb, 1<<20), errcode.ImportCellTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r kerneltest.Reply
			start := time.Now()
			heap := heapDuring(func() { r = e.upload(e.admin, "bomb.xlsx", tc.file, "") })
			t.Logf("%d KiB file: HTTP %d code %d %v, %d bytes answered, peak heap +%.1f MiB, %v", len(tc.file)>>10, r.Status, r.Code, r.Args, len(r.Raw), heap, time.Since(start))
			r.ExpectCode(t, tc.name, tc.code)
			if len(r.Raw) > 4<<10 {
				t.Fatalf("answer of %d bytes", len(r.Raw))
			}
			if heap >= 64 {
				t.Fatalf("peak heap +%.1f MiB, want < 64", heap)
			}
		})
	}
	// A long cell within the caps: previewed, flagged, echoed cut.
	long := strings.Repeat("长", 10_000)
	var r kerneltest.Reply
	heap := heapDuring(func() {
		r = e.upload(e.admin, "long.xlsx", workbook(t, importHeaders, [][]string{{long, "N"}, {"ok1", long}}), "")
	})
	e.expect("long cell", r, 0)
	var p preview
	r.Decode(t, &p)
	want := strings.Repeat("长", 256) + "…"
	if len(p.Rows) != 2 || p.Rows[0].Cells["account"] != want || p.Rows[1].Cells["name"] != want {
		t.Fatalf("long cells answered %d rows: %.300s", len(p.Rows), r.Data)
	}
	if codes := errorsOf(p.Rows); !slices.Contains(codes[2], 46008) || !slices.Contains(codes[3], 46008) {
		t.Fatalf("long cells not flagged: %v", codes)
	}
	if len(r.Raw) > 8<<10 {
		t.Fatalf("preview of two long cells answered %d bytes", len(r.Raw))
	}
	t.Logf("two 10 000-character cells: %d bytes answered, peak heap +%.1f MiB", len(r.Raw), heap)
}
