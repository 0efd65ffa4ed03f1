package spreadsheet_test

import (
	"errors"
	"runtime"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/spreadsheet"
	"github.com/adminkernel/kernel/host/spreadsheet/sheettest"
)

// fuzzMaxRows is the row limit of the fuzzed reads.
const fuzzMaxRows = 1000

// FuzzReadAt reads arbitrary bytes as an xlsx workbook. Invariants: no
// panic; the answer is a sheet or one of the reader's envelope errors
// (48002, 46002, 46003, 46014, 46015), never another error; a sheet keeps
// the caps (rows, columns, cell length); one read takes under 10 s, leaves
// less than 64 MiB more heap in use (the sheet included) and allocates
// less than 1 GiB in all (nothing grows with what the zip claims to hold).
// Seeds: workbooks of sheettest, stored and deflated, with inline and
// shared strings, and one excelize writes.
func FuzzReadAt(f *testing.F) {
	rows := sheettest.SheetXML([]string{"账号", "姓名", "", "x"}, []string{"a1", "b & c"}, nil, []string{"", "", "long"})
	sst := sheettest.Text(`<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2"><si><t>h</t></si><si><r><t>a</t></r><r><t>b</t></r><rPh><t>x</t></rPh></si></sst>`)
	shared := sheettest.Text(`<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` +
		`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" t="n"><v>12</v></c></row><row r="3"><c r="B3" t="s"><v>1</v></c><c r="C3" t="b"><v>1</v></c></row></sheetData></worksheet>`)
	must := func(b []byte, err error) []byte {
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	for _, b := range [][]byte{
		must(sheettest.Workbook(sheettest.Text(rows), nil)),
		must(sheettest.StoredWorkbook(sheettest.Text(rows), nil)),
		must(sheettest.StoredWorkbook(shared, &sst)),
		must(sheettest.Workbook(shared, &sst)),
		must(sheettest.SharedStringBomb(4096)),
	} {
		f.Add(b)
	}
	book, _ := excelizeBook(f)
	f.Add(book)
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		s, err := readBytes(b, fuzzMaxRows)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if took > 10*time.Second {
			t.Fatalf("read took %v", took)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		if alloc > 1<<30 {
			t.Fatalf("allocated %d MiB", alloc>>20)
		}
		if alloc > 64<<20 {
			// Only a read that allocated that much can hold that much:
			// collect and look at what stays in use (the sheet kept).
			runtime.GC()
			runtime.ReadMemStats(&after)
			if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 64<<20 {
				t.Fatalf("heap in use grew by %d MiB", grown>>20)
			}
		}
		runtime.KeepAlive(s)
		if err != nil {
			var e *errcode.Error
			if !errors.As(err, &e) {
				t.Fatalf("not an envelope error: %v", err)
			}
			switch e.Code {
			case errcode.RequestInvalid, errcode.ImportFileEmpty, errcode.ImportRowLimitExceeded, errcode.ImportCellTooLarge, errcode.ImportWorkbookTooLarge:
			default:
				t.Fatalf("unexpected code %d: %v", e.Code, err)
			}
			return
		}
		if s.Headers == nil || len(s.Rows) == 0 || len(s.Rows) > fuzzMaxRows {
			t.Fatalf("sheet of %d rows, headers %v", len(s.Rows), s.Headers)
		}
		last := 0
		for _, r := range append([]spreadsheet.Row{{Number: 0, Cells: s.Headers}}, s.Rows...) {
			if r.Number != 0 && (r.Number <= last || r.Number > spreadsheet.MaxSheetRows) {
				t.Fatalf("row number %d after %d", r.Number, last)
			}
			last = max(last, r.Number)
			if len(r.Cells) > spreadsheet.MaxColumns {
				t.Fatalf("row %d has %d cells", r.Number, len(r.Cells))
			}
			for _, c := range r.Cells {
				if utf8.RuneCountInString(c) > spreadsheet.MaxCellChars {
					t.Fatalf("cell of %d characters", utf8.RuneCountInString(c))
				}
			}
		}
	})
}
