package spreadsheet

import (
	"archive/zip"
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/xuri/excelize/v2"

	"github.com/adminkernel/kernel/host/internal/textclip"
)

// Stream writes one worksheet row by row into a temporary file through a
// small buffer, and WriteTo then zips it with the few fixed parts of a
// workbook straight onto the answer. Memory stays flat in the number of
// rows and bytes (the buffer, one row, the zip writer's compressor):
// excelize's StreamWriter keeps up to 16 MiB of sheet XML in memory (a
// constant of the library) before it spills, which is what the export's
// ≤ 32 MiB target could not get under (docs/developers/spreadsheets.md). The output
// is read back with excelize in the tests.
type Stream struct {
	tmp  *os.File
	buf  *bufio.Writer
	cols []string // column letters, A, B, …
	next int      // the next row number
	err  error    // the first write error; later writes are no-ops
	num  []byte   // scratch for number formatting
}

// Styles of the written workbook (cellXfs indexes of styleSheet below).
const (
	styleHeader = 1 // bold on light blue
	styleMarked = 2 // light red fill: a cell an error report points at
)

// streamBuffer is the size of the sheet's write buffer.
const streamBuffer = 64 << 10

// NewStream starts a workbook whose first row holds the titles in bold on
// a light fill, with the given column widths (0: the default width).
func NewStream(titles []string, widths []float64) (*Stream, error) {
	tmp, err := os.CreateTemp("", "adminkernel-sheet-*.xml")
	if err != nil {
		return nil, err
	}
	s := &Stream{tmp: tmp, buf: bufio.NewWriterSize(tmp, streamBuffer), next: 1}
	for i := range titles {
		name, err := excelize.ColumnNumberToName(i + 1)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		s.cols = append(s.cols, name)
	}
	s.str(xml.Header + `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">`)
	if hasWidth(widths) {
		s.str("<cols>")
		for i, w := range widths {
			if w > 0 {
				n := strconv.Itoa(i + 1)
				s.str(`<col min="` + n + `" max="` + n + `" width="` + strconv.FormatFloat(w, 'f', -1, 64) + `" customWidth="1"/>`)
			}
		}
		s.str("</cols>")
	}
	s.str("<sheetData>")
	head := make([]any, len(titles))
	for i, t := range titles {
		head[i] = t
	}
	s.write(head, func(int) int { return styleHeader })
	if s.err != nil {
		_ = s.Close()
		return nil, s.err
	}
	return s, nil
}

func hasWidth(widths []float64) bool {
	for _, w := range widths {
		if w > 0 {
			return true
		}
	}
	return false
}

// Row appends a data row. Values are written as they are (string, *string,
// integer, float, bool, nil for an empty cell; anything else as its text).
// Cells beyond the titles' columns are dropped.
func (s *Stream) Row(cells []any) error {
	s.write(cells, func(int) int { return 0 })
	return s.err
}

// MarkedRow appends a data row whose cells at the marked indexes are
// filled red (the cells an error report points at).
func (s *Stream) MarkedRow(cells []any, marked map[int]bool) error {
	s.write(cells, func(i int) int {
		if marked[i] {
			return styleMarked
		}
		return 0
	})
	return s.err
}

func (s *Stream) str(v string) {
	if s.err == nil {
		_, s.err = s.buf.WriteString(v)
	}
}

// write appends one <row> with a cell per value; style gives each cell's
// style index (0: none).
func (s *Stream) write(cells []any, style func(i int) int) {
	if s.err != nil {
		return
	}
	r := strconv.Itoa(s.next)
	s.next++
	s.str(`<row r="` + r + `">`)
	for i, v := range cells {
		if i >= len(s.cols) {
			break
		}
		if p, ok := v.(*string); ok {
			if p == nil {
				v = nil
			} else {
				v = *p
			}
		}
		st := style(i)
		if v == nil && st == 0 {
			continue
		}
		s.str(`<c r="` + s.cols[i] + r + `"`)
		if st != 0 {
			s.str(` s="` + strconv.Itoa(st) + `"`)
		}
		switch x := v.(type) {
		case nil:
			s.str("/>")
		case bool:
			if x {
				s.str(` t="b"><v>1</v></c>`)
			} else {
				s.str(` t="b"><v>0</v></c>`)
			}
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
			s.str("><v>")
			s.number(x)
			s.str("</v></c>")
		case string:
			s.text(x)
		default:
			s.text(fmt.Sprint(x))
		}
	}
	s.str("</row>")
}

func (s *Stream) number(v any) {
	b := s.num[:0]
	switch x := v.(type) {
	case int:
		b = strconv.AppendInt(b, int64(x), 10)
	case int8:
		b = strconv.AppendInt(b, int64(x), 10)
	case int16:
		b = strconv.AppendInt(b, int64(x), 10)
	case int32:
		b = strconv.AppendInt(b, int64(x), 10)
	case int64:
		b = strconv.AppendInt(b, x, 10)
	case uint:
		b = strconv.AppendUint(b, uint64(x), 10)
	case uint8:
		b = strconv.AppendUint(b, uint64(x), 10)
	case uint16:
		b = strconv.AppendUint(b, uint64(x), 10)
	case uint32:
		b = strconv.AppendUint(b, uint64(x), 10)
	case uint64:
		b = strconv.AppendUint(b, x, 10)
	case float32:
		b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
	case float64:
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	s.num = b
	if s.err == nil {
		_, s.err = s.buf.Write(b)
	}
}

// text writes an inline string cell: at most the 32 767 characters a cell
// holds, XML-escaped (characters XML cannot carry become U+FFFD), spaces
// kept.
func (s *Stream) text(v string) {
	s.str(` t="inlineStr"><is><t xml:space="preserve">`)
	if s.err == nil {
		s.err = xml.EscapeText(s.buf, []byte(textclip.Runes(v, excelize.TotalCellChars)))
	}
	s.str("</t></is></c>")
}

// The fixed parts of the workbook around the one worksheet.
var workbookParts = []struct{ name, body string }{
	{"[Content_Types].xml", xml.Header + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
		`<Default Extension="xml" ContentType="application/xml"/>` +
		`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
		`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>` +
		`<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>` +
		`</Types>`},
	{"_rels/.rels", xml.Header + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>` +
		`</Relationships>`},
	{"xl/workbook.xml", xml.Header + `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
		`<sheets><sheet name="` + sheetName + `" sheetId="1" r:id="rId1"/></sheets></workbook>`},
	{"xl/_rels/workbook.xml.rels", xml.Header + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>` +
		`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>` +
		`</Relationships>`},
	{"xl/styles.xml", xml.Header + `<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">` +
		`<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>` +
		`<fills count="4"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill>` +
		`<fill><patternFill patternType="solid"><fgColor rgb="FFDDEBF7"/><bgColor indexed="64"/></patternFill></fill>` +
		`<fill><patternFill patternType="solid"><fgColor rgb="FFFFC7CE"/><bgColor indexed="64"/></patternFill></fill></fills>` +
		`<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>` +
		`<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>` +
		`<cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>` +
		`<xf numFmtId="0" fontId="1" fillId="2" borderId="0" xfId="0" applyFont="1" applyFill="1"/>` +
		`<xf numFmtId="0" fontId="0" fillId="3" borderId="0" xfId="0" applyFill="1"/></cellXfs>` +
		`<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>` +
		`</styleSheet>`},
}

// WriteTo finishes the sheet and writes the workbook to w, the sheet
// copied from its temporary file.
func (s *Stream) WriteTo(w io.Writer) (int64, error) {
	s.str("</sheetData></worksheet>")
	if s.err == nil {
		s.err = s.buf.Flush()
	}
	if s.err != nil {
		return 0, s.err
	}
	if _, err := s.tmp.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	cw := &countingWriter{w: w}
	zw := zip.NewWriter(cw)
	for _, p := range workbookParts {
		f, err := zw.Create(p.name)
		if err != nil {
			return cw.n, err
		}
		if _, err := io.WriteString(f, p.body); err != nil {
			return cw.n, err
		}
	}
	f, err := zw.Create("xl/worksheets/sheet1.xml")
	if err != nil {
		return cw.n, err
	}
	if _, err := io.Copy(f, s.tmp); err != nil {
		return cw.n, err
	}
	err = zw.Close()
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Close removes the stream's temporary file.
func (s *Stream) Close() error {
	_ = s.tmp.Close()
	return os.Remove(s.tmp.Name())
}
