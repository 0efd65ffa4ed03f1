// Package sheettest builds xlsx workbooks for the tests, fuzz seeds and
// benchmarks of the spreadsheet reader, hostile ones included: a part may
// hold a run of one byte hundreds of MiB long (a decompression bomb) that
// is deflated without being produced, so a 200 MiB cell costs a few
// hundred KiB and well under a second to build.
package sheettest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"strings"
)

// Part is a part's content: Prefix, then Fill repeated N times, then
// Suffix.
type Part struct {
	Prefix string
	Fill   byte
	N      int64
	Suffix string
	// Store writes the part uncompressed (a fuzz seed whose XML the
	// mutator can reach).
	Store bool
}

// Text is a part without a run.
func Text(s string) Part { return Part{Prefix: s} }

// Size is the part's inflated size.
func (p Part) Size() int64 { return int64(len(p.Prefix)) + p.N + int64(len(p.Suffix)) }

const chunk = 1 << 20

// deflate returns the raw deflate stream of the part and its CRC-32. The
// run is written chunk by chunk with a flush after each; once two chunks
// compress to the same bytes (the window holds nothing but the fill), the
// rest are copies of them.
func (p Part) deflate() ([]byte, uint32, error) {
	var out bytes.Buffer
	fw, err := flate.NewWriter(&out, flate.DefaultCompression)
	if err != nil {
		return nil, 0, err
	}
	crc := crc32.NewIEEE()
	write := func(b []byte) error {
		_, _ = crc.Write(b)
		_, err := fw.Write(b)
		return err
	}
	if err := write([]byte(p.Prefix)); err != nil {
		return nil, 0, err
	}
	if err := fw.Flush(); err != nil {
		return nil, 0, err
	}
	fill := bytes.Repeat([]byte{p.Fill}, chunk)
	left := p.N
	var prev []byte
	for left >= chunk {
		start := out.Len()
		if err := write(fill); err != nil {
			return nil, 0, err
		}
		if err := fw.Flush(); err != nil {
			return nil, 0, err
		}
		left -= chunk
		cur := out.Bytes()[start:]
		if prev != nil && bytes.Equal(prev, cur) {
			// Steady state: the remaining whole chunks are copies.
			for left >= chunk {
				out.Write(prev)
				_, _ = crc.Write(fill)
				left -= chunk
			}
			break
		}
		prev = append(prev[:0], cur...)
	}
	if err := write(fill[:left]); err != nil {
		return nil, 0, err
	}
	if err := write([]byte(p.Suffix)); err != nil {
		return nil, 0, err
	}
	if err := fw.Close(); err != nil {
		return nil, 0, err
	}
	return out.Bytes(), crc.Sum32(), nil
}

// Zip writes the parts, by name, in the order given.
func Zip(names []string, parts map[string]Part) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range names {
		p := parts[name]
		method := zip.Deflate
		data, crc, err := p.deflate()
		if p.Store {
			method = zip.Store
			data = append(append([]byte(p.Prefix), bytes.Repeat([]byte{p.Fill}, int(p.N))...), p.Suffix...)
			crc, err = crc32.ChecksumIEEE(data), nil
		}
		if err != nil {
			return nil, err
		}
		w, err := zw.CreateRaw(&zip.FileHeader{
			Name: name, Method: method, CRC32: crc,
			CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(p.Size()), //nolint:gosec // G115: a test part size is never negative
		})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

const (
	ns     = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"`
	header = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"
)

// Workbook is a one-sheet workbook with the given sheet part and, when sst
// is not nil, a shared-strings part.
func Workbook(sheet Part, sst *Part) ([]byte, error) {
	return workbook(sheet, sst, false)
}

// StoredWorkbook is Workbook with every part stored, not deflated.
func StoredWorkbook(sheet Part, sst *Part) ([]byte, error) {
	return workbook(sheet, sst, true)
}

func workbook(sheet Part, sst *Part, store bool) ([]byte, error) {
	rels := header + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>`
	if sst != nil {
		rels += `<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>`
	}
	rels += `</Relationships>`
	parts := map[string]Part{
		"[Content_Types].xml": Text(header + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>` +
			`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>` +
			`<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>` +
			`</Types>`),
		"_rels/.rels": Text(header + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>` +
			`</Relationships>`),
		"xl/workbook.xml": Text(header + `<workbook ` + ns + ` xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
			`<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`),
		"xl/_rels/workbook.xml.rels": Text(rels),
		"xl/worksheets/sheet1.xml":   sheet,
	}
	names := []string{"[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/_rels/workbook.xml.rels"}
	if sst != nil {
		parts["xl/sharedStrings.xml"] = *sst
		names = append(names, "xl/sharedStrings.xml")
	}
	names = append(names, "xl/worksheets/sheet1.xml")
	if store {
		for n, p := range parts {
			p.Store = true
			parts[n] = p
		}
	}
	return Zip(names, parts)
}

// SheetXML is a worksheet of rows of inline-string cells.
func SheetXML(rows ...[]string) string {
	var b strings.Builder
	b.WriteString(header + `<worksheet ` + ns + `><sheetData>`)
	for _, r := range rows {
		b.WriteString(`<row>`)
		for _, c := range r {
			b.WriteString(`<c t="inlineStr"><is><t>`)
			_ = xmlEscape(&b, c)
			b.WriteString(`</t></is></c>`)
		}
		b.WriteString(`</row>`)
	}
	b.WriteString(`</sheetData></worksheet>`)
	return b.String()
}

func xmlEscape(w io.Writer, s string) error {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	_, err := r.WriteString(w, s)
	return err
}

// Headers is the header row the bombs carry (the user import's two
// required columns).
var Headers = []string{"账号", "姓名"}

// CellBomb is a workbook whose second row's first cell is an inline
// string of n bytes of 'A' (a deflated run: about n/1000 bytes).
func CellBomb(n int64) ([]byte, error) {
	head := header + `<worksheet ` + ns + `><sheetData>` +
		`<row r="1"><c r="A1" t="inlineStr"><is><t>` + Headers[0] + `</t></is></c><c r="B1" t="inlineStr"><is><t>` + Headers[1] + `</t></is></c></row>` +
		`<row r="2"><c r="A2" t="inlineStr"><is><t>`
	tail := `</t></is></c><c r="B2" t="inlineStr"><is><t>x</t></is></c></row></sheetData></worksheet>`
	return Workbook(Part{Prefix: head, Fill: 'A', N: n, Suffix: tail}, nil)
}

// SharedStringBomb is a workbook whose second row's first cell is shared
// string 0, n bytes of 'A'.
func SharedStringBomb(n int64) ([]byte, error) {
	sheet := header + `<worksheet ` + ns + `><sheetData>` +
		`<row r="1"><c r="A1" t="inlineStr"><is><t>` + Headers[0] + `</t></is></c><c r="B1" t="inlineStr"><is><t>` + Headers[1] + `</t></is></c></row>` +
		`<row r="2"><c r="A2" t="s"><v>0</v></c><c r="B2" t="inlineStr"><is><t>x</t></is></c></row></sheetData></worksheet>`
	sst := Part{Prefix: header + `<sst ` + ns + ` count="1" uniqueCount="1"><si><t>`, Fill: 'A', N: n, Suffix: `</t></si></sst>`}
	return Workbook(Text(sheet), &sst)
}

// Lie rewrites the uncompressed size the central directory declares for
// the entry name (the reader must not trust it). The local header keeps
// its own; archive/zip reads the directory's.
func Lie(xlsx []byte, name string, size uint32) []byte {
	out := append([]byte(nil), xlsx...)
	sig := []byte{'P', 'K', 1, 2}
	for i := 0; i+46 <= len(out); i++ {
		if !bytes.Equal(out[i:i+4], sig) {
			continue
		}
		n := int(binary.LittleEndian.Uint16(out[i+28:]))
		if i+46+n <= len(out) && string(out[i+46:i+46+n]) == name {
			binary.LittleEndian.PutUint32(out[i+24:], size)
		}
	}
	return out
}
