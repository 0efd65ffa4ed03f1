package spreadsheet_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/spreadsheet"
	"github.com/adminkernel/kernel/host/spreadsheet/sheettest"
)

// bombSize is the cell of the bombs: the 200 MiB of the finding.
const bombSize = 200 << 20

func readBytes(b []byte, maxRows int) (*spreadsheet.Sheet, error) {
	return spreadsheet.ReadAt(bytes.NewReader(b), int64(len(b)), maxRows)
}

func codeOf(err error) (errcode.Code, map[string]any) {
	var e *errcode.Error
	if errors.As(err, &e) {
		return e.Code, e.Args
	}
	return -1, nil
}

// excelizeBook writes a workbook with excelize (shared strings, numbers,
// booleans, blank rows and cells, spaces) and returns it with what
// excelize itself reads from it (RawCellValue, trimmed, blank rows out).
func excelizeBook(t testing.TB) ([]byte, [][]string) {
	t.Helper()
	f := excelize.NewFile()
	defer func() { _ = f.Close() }()
	set := func(cell string, v any) {
		if err := f.SetCellValue("Sheet1", cell, v); err != nil {
			t.Fatal(err)
		}
	}
	set("A1", "账号*")
	set("B1", " 姓名 ")
	set("D1", "手机号")
	set("A2", "zhangsan")
	set("B2", "张三")
	set("D2", 13800000000)
	set("A4", "lisi & <co>")
	set("C4", true)
	set("D4", 3.25)
	set("A5", "  ")
	set("B6", strings.Repeat("长", 300))
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()), excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	rows, err := g.GetRows("Sheet1", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), rows
}

// TestReadAtMatchesExcelize: what the streaming reader returns is what
// excelize reads from the same file (cells trimmed, trailing blanks and
// blank rows left out, row numbers kept).
func TestReadAtMatchesExcelize(t *testing.T) {
	b, want := excelizeBook(t)
	s, err := readBytes(b, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	got = append(got, s.Headers)
	numbers := []int{}
	for _, r := range s.Rows {
		got = append(got, r.Cells)
		numbers = append(numbers, r.Number)
	}
	var exp [][]string
	for _, r := range want {
		for i := range r {
			r[i] = strings.TrimSpace(r[i])
		}
		for len(r) > 0 && r[len(r)-1] == "" {
			r = r[:len(r)-1]
		}
		if len(r) > 0 {
			exp = append(exp, r)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(exp) {
		t.Fatalf("rows = %q\nexcelize = %q", got, exp)
	}
	if fmt.Sprint(numbers) != "[2 4 6]" {
		t.Fatalf("row numbers = %v, want [2 4 6]", numbers)
	}
	if _, err := readBytes(b, 2); err == nil {
		t.Fatal("3 data rows with maxRows 2 read")
	} else if c, _ := codeOf(err); c != errcode.ImportRowLimitExceeded {
		t.Fatalf("row limit = %v", err)
	}
}

// TestReadAtInlineAndShared reads the parts sheettest writes (inline
// strings, a shared-string table).
func TestReadAtInlineAndShared(t *testing.T) {
	b, err := sheettest.Workbook(sheettest.Text(sheettest.SheetXML([]string{"a", "b"}, []string{"1", "x &amp; y"})), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := readBytes(b, 10)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.Headers, s.Rows) != "[a b] [{2 [1 x &amp; y]}]" {
		t.Fatalf("got %v %v", s.Headers, s.Rows)
	}
	small, err := sheettest.SharedStringBomb(10)
	if err != nil {
		t.Fatal(err)
	}
	s, err = readBytes(small, 10)
	if err != nil {
		t.Fatal(err)
	}
	if s.Rows[0].Cells[0] != "AAAAAAAAAA" {
		t.Fatalf("shared string = %q", s.Rows[0].Cells[0])
	}
}

// peak runs f and returns the highest HeapInuse above the heap before it
// (sampled every millisecond) and the bytes it allocated.
func peak(f func()) (peakMiB, allocMiB float64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var high atomic.Uint64
	high.Store(before.HeapInuse)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				if m.HeapInuse > high.Load() {
					high.Store(m.HeapInuse)
				}
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if after.HeapInuse > high.Load() {
		high.Store(after.HeapInuse)
	}
	return float64(high.Load()-min(high.Load(), before.HeapInuse)) / (1 << 20), float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20)
}

// TestReadAtBombs: a 200 MiB cell in the sheet or in the shared strings,
// declared honestly or with a lying size, a cell over the cell cap, 60 MiB
// of white space, more rows than a sheet has and deep nesting all end in an envelope error, with the
// heap growing by less than 64 MiB.
func TestReadAtBombs(t *testing.T) {
	cell, err := sheettest.CellBomb(bombSize)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := sheettest.SharedStringBomb(bombSize)
	if err != nil {
		t.Fatal(err)
	}
	big, err := sheettest.CellBomb(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	over, err := sheettest.CellBomb(spreadsheet.MaxCellChars + 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := `<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`
	blank, err := sheettest.Workbook(sheettest.Part{Prefix: rows, Fill: ' ', N: 60 << 20, Suffix: `</sheetData></worksheet>`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	many, err := sheettest.Workbook(sheettest.Text(rows+strings.Repeat("<row/>", spreadsheet.MaxSheetRows+1)+`</sheetData></worksheet>`), nil)
	if err != nil {
		t.Fatal(err)
	}
	deep, err := sheettest.Workbook(sheettest.Text(rows+strings.Repeat("<x>", 100_000)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		file []byte
		code errcode.Code
		what string
	}{
		{"sheet cell 200 MiB", cell, errcode.ImportWorkbookTooLarge, "partBytes"},
		{"shared string 200 MiB", shared, errcode.ImportWorkbookTooLarge, "sharedStringBytes"},
		{"sheet cell 200 MiB, declared 4 KiB", sheettest.Lie(cell, "xl/worksheets/sheet1.xml", 4096), errcode.RequestInvalid, ""},
		{"shared string 200 MiB, declared 4 KiB", sheettest.Lie(shared, "xl/sharedStrings.xml", 4096), errcode.RequestInvalid, ""},
		{"sheet cell 1 MiB", big, errcode.ImportCellTooLarge, ""},
		{"sheet cell 32 768 characters", over, errcode.ImportCellTooLarge, ""},
		{"60 MiB of blanks", blank, errcode.ImportWorkbookTooLarge, "xmlTokenBytes"},
		{"a million blank rows", many, errcode.ImportWorkbookTooLarge, "rows"},
		{"100 000 nested elements", deep, errcode.ImportWorkbookTooLarge, "xmlDepth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			start := time.Now()
			heap, alloc := peak(func() { _, err = readBytes(tc.file, 10_000) })
			c, args := codeOf(err)
			if c != tc.code || (tc.what != "" && args["what"] != tc.what) {
				t.Fatalf("err = %v (%d %v), want %d %s", err, c, args, tc.code, tc.what)
			}
			t.Logf("%d KiB file: %v, peak heap +%.1f MiB, allocated %.1f MiB, %v", len(tc.file)>>10, err, heap, alloc, time.Since(start))
			if heap >= 64 {
				t.Fatalf("peak heap +%.1f MiB, want < 64", heap)
			}
		})
	}
}

// BenchmarkReadBomb reads the 200 MiB-cell workbooks (about 200 KiB each)
// and reports the peak heap growth of one read (peak-MiB).
func BenchmarkReadBomb(b *testing.B) {
	cell, err := sheettest.CellBomb(bombSize)
	if err != nil {
		b.Fatal(err)
	}
	liar := sheettest.Lie(cell, "xl/worksheets/sheet1.xml", 4096)
	shared, err := sheettest.SharedStringBomb(bombSize)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		file []byte
	}{{"cell", cell}, {"lyingSize", liar}, {"sharedString", shared}} {
		b.Run(bc.name, func(b *testing.B) {
			var high float64
			b.ReportAllocs()
			for b.Loop() {
				h, _ := peak(func() {
					if _, err := readBytes(bc.file, 10_000); err == nil {
						b.Fatal("the bomb was read")
					}
				})
				high = max(high, h)
			}
			b.ReportMetric(high, "peak-MiB")
		})
	}
}
