// Package spreadsheet reads and writes the xlsx workbooks of the import and
// export endpoints: a streaming reader of the first sheet bounded by design
// (read.go: caps on every size, checked before and while reading), a
// streamed writer of one-sheet workbooks (stream.go: the
// sheet goes through a small buffer to a temporary file, so memory is flat
// in the number of rows), import templates with drop-down lists, and the
// binary answer (no envelope, the xlsx content type, an attachment name).
package spreadsheet

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v3"
	"github.com/xuri/excelize/v2"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/secheaders"
)

// ContentType is the content type of an xlsx answer (wire contract §1.1).
const ContentType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

// Config keys of the import and export limits (config ids 51 and 52).
const (
	KeyImportMaxRows = "sys.import.maxRows"
	KeyExportMaxRows = "sys.export.maxRows"
)

// Column is the contract's import column: {key, title, required?,
// dictTypeCode?, hint?, width?}.
type Column struct {
	Key          string  `json:"key"`
	Title        string  `json:"title"`
	Required     bool    `json:"required,omitempty"`
	DictTypeCode string  `json:"dictTypeCode,omitempty"`
	Hint         string  `json:"hint,omitempty"`
	Width        float64 `json:"width,omitempty"`
}

// Sheet is a read worksheet: the header row and the data rows (blank rows
// left out), each with its row number in the workbook (1 is the header).
type Sheet struct {
	Headers []string
	Rows    []Row
}

// Row is one data row as read.
type Row struct {
	Number int
	Cells  []string
}

// sheetName is the name of the one worksheet of a written workbook.
const sheetName = "Sheet1"

// Columns picks the export columns a columns query names (a CSV of keys,
// compared case-insensitively; blank: all of them, in their order). An
// unknown key answers 46013 (args column).
func Columns[T any](csv string, all []T, key func(T) string) ([]T, error) {
	if strings.TrimSpace(csv) == "" {
		return all, nil
	}
	var out []T
	seen := map[string]bool{}
	for _, k := range strings.Split(csv, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		i := -1
		for j, c := range all {
			if strings.EqualFold(key(c), k) {
				i = j
				break
			}
		}
		if i < 0 {
			return nil, errcode.New(errcode.ExportColumnInvalid).With("column", k)
		}
		if !seen[key(all[i])] {
			seen[key(all[i])] = true
			out = append(out, all[i])
		}
	}
	if len(out) == 0 {
		return all, nil
	}
	return out, nil
}

// Dict is a drop-down of a template column: the labels offered.
type Dict struct {
	Column int
	Labels []string
}

// Template builds an import template: the titles (required ones marked
// with *), the hints as cell comments, one example row, and drop-down
// lists (from a hidden sheet) on the first rows data rows of the dict
// columns.
func Template(cols []Column, example []string, dicts []Dict, rows int) (*excelize.File, error) {
	f := excelize.NewFile()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
		}
	}()
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"#DDEBF7"}}})
	if err != nil {
		return nil, err
	}
	for i, c := range cols {
		name, err := excelize.CoordinatesToCellName(i+1, 1)
		if err != nil {
			return nil, err
		}
		title := c.Title
		if c.Required {
			title += "*"
		}
		if err := f.SetCellStr(sheetName, name, title); err != nil {
			return nil, err
		}
		if c.Hint != "" {
			if err := f.AddComment(sheetName, excelize.Comment{Cell: name, Author: "AdminKernel", Text: c.Hint}); err != nil {
				return nil, err
			}
		}
		col, err := excelize.ColumnNumberToName(i + 1)
		if err != nil {
			return nil, err
		}
		if c.Width > 0 {
			if err := f.SetColWidth(sheetName, col, col, c.Width); err != nil {
				return nil, err
			}
		}
		// Text cells: phone numbers and accounts keep their leading zeros.
		if i < len(example) {
			ex, _ := excelize.CoordinatesToCellName(i+1, 2)
			if err := f.SetCellStr(sheetName, ex, example[i]); err != nil {
				return nil, err
			}
		}
	}
	last, _ := excelize.CoordinatesToCellName(len(cols), 1)
	if err := f.SetCellStyle(sheetName, "A1", last, bold); err != nil {
		return nil, err
	}
	if len(dicts) > 0 {
		const lists = "lists"
		if _, err := f.NewSheet(lists); err != nil {
			return nil, err
		}
		for j, d := range dicts {
			col, err := excelize.ColumnNumberToName(j + 1)
			if err != nil {
				return nil, err
			}
			for k, l := range d.Labels {
				if err := f.SetCellStr(lists, fmt.Sprintf("%s%d", col, k+1), l); err != nil {
					return nil, err
				}
			}
			if len(d.Labels) == 0 {
				continue
			}
			target, err := excelize.ColumnNumberToName(d.Column + 1)
			if err != nil {
				return nil, err
			}
			dv := excelize.NewDataValidation(true)
			dv.Sqref = fmt.Sprintf("%s2:%s%d", target, target, rows+1)
			dv.SetSqrefDropList(fmt.Sprintf("%s!$%s$1:$%s$%d", lists, col, col, len(d.Labels)))
			if err := f.AddDataValidation(sheetName, dv); err != nil {
				return nil, err
			}
		}
		if err := f.SetSheetVisible(lists, false); err != nil {
			return nil, err
		}
	}
	ok = true
	return f, nil
}

// Send answers the request with a workbook as an attachment named name
// (no envelope). write runs after the handler returned, on the
// connection: whatever can fail with an envelope must have failed before.
// done runs once the workbook is written (or the client went away).
func Send(c fiber.Ctx, name string, write func(w io.Writer) error, done func()) error {
	c.Set(fiber.HeaderContentType, ContentType)
	c.Set(fiber.HeaderContentDisposition, "attachment; filename*=UTF-8''"+url.PathEscape(name))
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXContentTypeOptions, secheaders.NoSniff)
	c.Set(fiber.HeaderContentSecurityPolicy, secheaders.FileCSP)
	return c.SendStreamWriter(func(w *bufio.Writer) {
		defer done()
		// A failure here can only cut the answer short: the status and
		// headers are sent.
		if err := write(w); err == nil {
			_ = w.Flush()
		}
	})
}

// ExportBatch is how many rows one query of an export reads.
const ExportBatch = 1000

// Export streams a workbook of the given columns from batches of rows:
// next returns the batch after the last row of the previous one (nil for
// the first; a keyset, never an offset, so each query is an index range),
// emit writes the cells of a batch's rows with put. It stops at a batch
// shorter than ExportBatch. The answer's write sends the workbook, done
// removes its temporary file; on an error nothing is left behind.
func Export[T any](titles []string, widths []float64, next func(after *T) ([]*T, error), emit func(rows []*T, put func(cells []any) error) error) (write func(io.Writer) error, done func(), err error) {
	st, err := NewStream(titles, widths)
	if err != nil {
		return nil, nil, err
	}
	var last *T
	for {
		rows, err := next(last)
		if err == nil {
			err = emit(rows, st.Row)
		}
		if err != nil {
			_ = st.Close()
			return nil, nil, err
		}
		if len(rows) < ExportBatch {
			break
		}
		last = rows[len(rows)-1]
	}
	return func(w io.Writer) error { _, err := st.WriteTo(w); return err }, func() { _ = st.Close() }, nil
}
