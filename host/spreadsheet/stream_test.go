package spreadsheet_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/adminkernel/kernel/host/spreadsheet"
)

func written(t *testing.T, titles []string, widths []float64, rows func(s *spreadsheet.Stream)) *excelize.File {
	t.Helper()
	s, err := spreadsheet.NewStream(titles, widths)
	if err != nil {
		t.Fatal(err)
	}
	rows(s)
	var buf bytes.Buffer
	n, err := s.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo = %d, %v (%d bytes)", n, err, buf.Len())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&buf)
	if err != nil {
		t.Fatalf("excelize cannot open the workbook: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// TestStreamRoundTrip: what the stream writes, excelize reads back the
// same: values and their types, escaping, the cell limit, styles, widths.
func TestStreamRoundTrip(t *testing.T) {
	long := strings.Repeat("长", excelize.TotalCellChars+10)
	name := "  spaced  "
	f := written(t, []string{"Text", "Int", "Float", "Bool", "Ptr", "Other"}, []float64{24, 0, 12},
		func(s *spreadsheet.Stream) {
			rows := [][]any{
				{`a<b>&"c'`, 42, 1.5, true, &name, time.Duration(90) * time.Second},
				{"ctl\x01\x1fchar\ttab", int64(-7), float32(0.25), false, (*string)(nil), nil},
				{long, uint8(3), nil, nil, nil, nil, "beyond the titles"},
			}
			for i, r := range rows {
				var err error
				if i == 1 {
					err = s.MarkedRow(r, map[int]bool{0: true, 4: true})
				} else {
					err = s.Row(r)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	got, err := f.GetRows("Sheet1")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Text", "Int", "Float", "Bool", "Ptr", "Other"},
		{`a<b>&"c'`, "42", "1.5", "TRUE", name, "1m30s"},
		{"ctl\uFFFD\uFFFDchar\ttab", "-7", "0.25", "FALSE"},
		{strings.Repeat("长", excelize.TotalCellChars), "3"},
	}
	if len(got) != len(want) {
		t.Fatalf("rows = %d, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			t.Errorf("row %d = %.80q, want %.80q", i+1, got[i], want[i])
		}
	}
	types := map[string]excelize.CellType{"B2": excelize.CellTypeUnset, "A2": excelize.CellTypeInlineString, "D2": excelize.CellTypeBool}
	for cell, want := range types {
		if ct, err := f.GetCellType("Sheet1", cell); err != nil || ct != want {
			t.Errorf("%s type = %v (%v), want %v", cell, ct, err, want)
		}
	}
	// excelize reports a fill's colour only when the workbook has a theme
	// part (this one has none, Excel needs none): the pattern and the
	// fill's index tell the header's, the marked cells' and plain cells
	// apart; the colours themselves are in the fixed styles part.
	style := func(cell string) (bold bool, pattern int, id int) {
		t.Helper()
		id, err := f.GetCellStyle("Sheet1", cell)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		return st.Font != nil && st.Font.Bold, st.Fill.Pattern, id
	}
	for _, c := range []struct {
		cell          string
		bold          bool
		pattern, want int
	}{{"A1", true, 1, 1}, {"F1", true, 1, 1}, {"A3", false, 1, 2}, {"E3", false, 1, 2}, {"B3", false, 0, 0}, {"A2", false, 0, 0}} {
		if bold, pattern, id := style(c.cell); bold != c.bold || pattern != c.pattern || id != c.want {
			t.Errorf("%s: bold %v pattern %d style %d, want %v %d %d", c.cell, bold, pattern, id, c.bold, c.pattern, c.want)
		}
	}
	if w, err := f.GetColWidth("Sheet1", "A"); err != nil || w != 24 {
		t.Errorf("width A = %v %v", w, err)
	}
	if w, err := f.GetColWidth("Sheet1", "C"); err != nil || w != 12 {
		t.Errorf("width C = %v %v", w, err)
	}
}

// TestStreamCloseRemovesItsFile: the temporary sheet is gone after Close,
// whether or not the workbook was written.
func TestStreamCloseRemovesItsFile(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, write := range []bool{false, true} {
		s, err := spreadsheet.NewStream([]string{"A"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Row([]any{"x"}); err != nil {
			t.Fatal(err)
		}
		if write {
			if _, err := s.WriteTo(io.Discard); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		left, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "*"))
		if len(left) != 0 {
			t.Errorf("write=%v: left %v", write, left)
		}
	}
}

// BenchmarkStream writes rows of ten user-like cells and reports the peak
// heap growth while writing and zipping (sampled every millisecond, GOGC
// 10): flat in the number of rows.
func BenchmarkStream(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			for b.Loop() {
				old := debug.SetGCPercent(10)
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := ms.HeapAlloc
				var peak atomic.Uint64
				done := make(chan struct{})
				go func() {
					tk := time.NewTicker(time.Millisecond)
					defer tk.Stop()
					var m runtime.MemStats
					for {
						select {
						case <-done:
							return
						case <-tk.C:
							runtime.ReadMemStats(&m)
							if m.HeapAlloc > peak.Load() {
								peak.Store(m.HeapAlloc)
							}
						}
					}
				}()
				s, err := spreadsheet.NewStream([]string{"Account", "Name", "Phone", "Email", "Gender", "Org", "Position", "Status", "Created", "Remark"}, nil)
				if err != nil {
					b.Fatal(err)
				}
				row := make([]any, 10)
				for i := range n {
					row[0], row[1], row[2], row[3], row[4] = fmt.Sprintf("u%07d", i), "导出用户", "13800000000", "x@example.com", "男"
					row[5], row[6], row[7], row[8], row[9] = "总部/研发", "工程师", true, "2026-11-25 02:00:00", nil
					if err := s.Row(row); err != nil {
						b.Fatal(err)
					}
				}
				size, err := s.WriteTo(io.Discard)
				close(done)
				_ = s.Close()
				debug.SetGCPercent(old)
				if err != nil {
					b.Fatal(err)
				}
				growth := float64(0)
				if p := peak.Load(); p > base {
					growth = float64(p-base) / (1 << 20)
				}
				b.ReportMetric(growth, "peak-heap-MiB")
				b.ReportMetric(float64(size)/(1<<20), "xlsx-MiB")
			}
		})
	}
}
