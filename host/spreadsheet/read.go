package spreadsheet

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/adminkernel/kernel/host/errcode"
)

// Caps of a read workbook (docs/developers/spreadsheets.md, "Limits"). The reader
// streams the first worksheet and its shared strings with encoding/xml,
// token by token, and keeps only the rows it returns: every cap is checked
// before the bytes it covers are read (the zip directory and the parts'
// declared sizes) and again while reading (the bytes actually inflated,
// counted, since a declared size can lie), so a workbook costs at most
// about MaxSharedStringBytes + MaxRetainedBytes + a few MiB of memory,
// whatever its content.
const (
	// MaxDirectoryBytes bounds the zip's central directory (what
	// archive/zip reads into memory before any part is opened).
	MaxDirectoryBytes = 1 << 20
	// MaxEntries bounds the zip's entries.
	MaxEntries = 10_000
	// MaxUnpackedBytes bounds the bytes inflated from all the parts read
	// (relationships, workbook, shared strings, the worksheet).
	MaxUnpackedBytes = 64 << 20
	// MaxMetaBytes bounds each of the small parts (relationships, the
	// workbook part).
	MaxMetaBytes = 1 << 20
	// MaxSharedStrings bounds the shared-string table's entries.
	MaxSharedStrings = 1 << 20
	// MaxSharedStringBytes bounds the shared-string table's text.
	MaxSharedStringBytes = 16 << 20
	// MaxCellChars is the longest cell text (Excel's own limit).
	MaxCellChars = 32_767
	// maxCellBytes is MaxCellChars in the widest UTF-8.
	maxCellBytes = MaxCellChars * utf8.UTFMax
	// MaxTokenBytes bounds one XML token (a tag with its attributes, a
	// text run, a comment): what encoding/xml holds in memory at once.
	MaxTokenBytes = 512 << 10
	// MaxDepth bounds the nesting of XML elements.
	MaxDepth = 64
	// MaxSheetRows is the highest row number (Excel's).
	MaxSheetRows = 1 << 20
	// MaxColumns is the widest row the reader keeps: a non-blank cell
	// right of it is refused (Excel's own limit is 16 384).
	MaxColumns = 256
	// MaxRetainedBytes bounds what the returned rows hold: each cell's
	// text not from the shared table plus 16 bytes, 48 bytes a row.
	MaxRetainedBytes = 32 << 20
)

// What a 46015 names in args.what.
const (
	limitDirectory     = "directory"
	limitEntries       = "entries"
	limitUnpacked      = "unpackedBytes"
	limitPart          = "partBytes"
	limitSharedStrings = "sharedStrings"
	limitSharedBytes   = "sharedStringBytes"
	limitToken         = "xmlTokenBytes" //nolint:gosec // G101: the name of a cap, not a credential
	limitDepth         = "xmlDepth"
	limitRows          = "rows"
	limitColumns       = "columns"
	limitRetained      = "cellBytes"
)

func tooLarge(what string, max int64) error {
	return errcode.New(errcode.ImportWorkbookTooLarge).With("what", what).With("max", max)
}

func badFile(err error) error {
	e := errcode.New(errcode.RequestInvalid).With("field", "file")
	if err != nil {
		return e.Wrap(err)
	}
	return e
}

func cellTooLarge(row, col int) error {
	name := strconv.Itoa(col + 1)
	if n, err := columnName(col + 1); err == nil {
		name = n
	}
	return errcode.New(errcode.ImportCellTooLarge).With("row", row).With("column", name).With("max", MaxCellChars)
}

// columnName is the letters of a 1-based column number.
func columnName(n int) (string, error) {
	if n < 1 {
		return "", errors.New("column")
	}
	var b []byte
	for n > 0 {
		n--
		b = append([]byte{byte('A' + n%26)}, b...)
		n /= 26
	}
	return string(b), nil
}

// ReadAt reads the first worksheet of an xlsx workbook of size bytes: the
// header row (the first non-blank one) and at most maxRows non-blank data
// rows, cells trimmed. A workbook that is not xlsx answers 48002 (field
// file), one without a header or data row 46002, more than maxRows data
// rows 46003 (args max), a cell above MaxCellChars 46014 (args row, column,
// max), a workbook over one of the other caps 46015 (args what, max).
func ReadAt(ra io.ReaderAt, size int64, maxRows int) (*Sheet, error) {
	if err := checkDirectory(ra, size); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, badFile(err)
	}
	if len(zr.File) > MaxEntries {
		return nil, tooLarge(limitEntries, MaxEntries)
	}
	rd := &reader{files: map[string]*zip.File{}, left: MaxUnpackedBytes, maxRows: maxRows}
	for _, f := range zr.File {
		name := strings.TrimPrefix(strings.ReplaceAll(f.Name, `\`, "/"), "/")
		if _, dup := rd.files[name]; !dup {
			rd.files[name] = f
		}
	}
	return rd.read()
}

// Read reads a workbook from r, which must also be an io.ReaderAt with a
// Size (a *bytes.Reader, an uploaded multipart file through SizedReaderAt).
// Kept for callers holding the bytes.
func Read(r *bytes.Reader, maxRows int) (*Sheet, error) {
	return ReadAt(r, r.Size(), maxRows)
}

// checkDirectory finds the zip's end-of-central-directory record the way
// archive/zip does and refuses, before archive/zip reads it, a directory
// above MaxDirectoryBytes or more than MaxEntries (archive/zip reads every
// header of the directory into memory) and a zip64 archive (no workbook
// within these caps needs one).
func checkDirectory(ra io.ReaderAt, size int64) error {
	const endLen = 22
	if size < endLen {
		return badFile(errors.New("zip: too short"))
	}
	n := min(size, endLen+65535)
	buf := make([]byte, n)
	if _, err := ra.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return badFile(err)
	}
	p := -1
	for i := len(buf) - endLen; i >= 0; i-- {
		if buf[i] == 'P' && buf[i+1] == 'K' && buf[i+2] == 5 && buf[i+3] == 6 {
			if i+endLen+int(binary.LittleEndian.Uint16(buf[i+20:])) <= len(buf) {
				p = i
				break
			}
		}
	}
	if p < 0 {
		return badFile(errors.New("zip: no directory"))
	}
	d := buf[p:]
	records := binary.LittleEndian.Uint16(d[10:])
	dirSize := binary.LittleEndian.Uint32(d[12:])
	dirOffset := binary.LittleEndian.Uint32(d[16:])
	if records == 0xffff || dirSize == 0xffff || dirOffset == 0xffffffff {
		return badFile(errors.New("zip: zip64 archive"))
	}
	if dirSize > MaxDirectoryBytes {
		return tooLarge(limitDirectory, MaxDirectoryBytes)
	}
	if int(records) > MaxEntries {
		return tooLarge(limitEntries, MaxEntries)
	}
	return nil
}

// reader is one read of a workbook.
type reader struct {
	files   map[string]*zip.File
	left    int64 // unpacked bytes still allowed
	maxRows int

	sst      []byte   // the shared strings' text, one after the other
	sstEnds  []uint32 // where each shared string ends in sst
	retained int64
}

// part is an open part: its inflated bytes counted against the reader's
// budget and the part's own cap, whichever comes first.
type part struct {
	rc    io.ReadCloser
	rd    *reader
	left  int64 // bytes the part may still inflate
	limit string
	max   int64
}

func (p *part) Read(b []byte) (int, error) {
	if p.left <= 0 || p.rd.left <= 0 {
		// One byte more than allowed tells a part that ends exactly at
		// the cap from one that goes on.
		var one [1]byte
		n, err := p.rc.Read(one[:])
		if n == 0 {
			if err == nil || err == io.EOF {
				return 0, io.EOF
			}
			return 0, badFile(err)
		}
		if p.rd.left <= 0 {
			return 0, tooLarge(limitUnpacked, MaxUnpackedBytes)
		}
		return 0, tooLarge(p.limit, p.max)
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	if int64(len(b)) > p.rd.left {
		b = b[:p.rd.left]
	}
	n, err := p.rc.Read(b)
	p.left -= int64(n)
	p.rd.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		err = badFile(err)
	}
	return n, err
}

// open opens a part whose declared size is within max and the reader's
// budget; nil, nil when the workbook has no such part.
func (rd *reader) open(name, limit string, max int64) (*part, error) {
	f := rd.files[name]
	if f == nil {
		return nil, nil
	}
	if f.UncompressedSize64 > uint64(max) { //nolint:gosec // G115: max is a positive cap
		return nil, tooLarge(limit, max)
	}
	if f.UncompressedSize64 > uint64(rd.left) { //nolint:gosec // G115: rd.left is never negative
		return nil, tooLarge(limitUnpacked, MaxUnpackedBytes)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, badFile(err)
	}
	// archive/zip refuses to inflate past the declared size; the part
	// counts on its own as well.
	return &part{rc: rc, rd: rd, left: int64(f.UncompressedSize64), limit: limit, max: max}, nil //nolint:gosec // G115: at most rd.left (checked above)
}

// tokens reads the XML of a part one bounded token at a time.
type tokens struct {
	dec   *xml.Decoder
	src   *boundedBytes
	depth int
}

// boundedBytes is the decoder's input: a buffered reader that fails once
// one token took more than MaxTokenBytes (the decoder is reset between
// tokens), so no text run, tag or comment grows beyond it in memory.
type boundedBytes struct {
	r     io.Reader
	buf   []byte
	i, n  int
	since int
	err   error
}

func (b *boundedBytes) ReadByte() (byte, error) {
	if b.i == b.n {
		if b.err != nil {
			return 0, b.err
		}
		b.i = 0
		b.n, b.err = b.r.Read(b.buf)
		if b.n == 0 {
			if b.err == nil {
				b.err = io.ErrNoProgress
			}
			return 0, b.err
		}
	}
	if b.since >= MaxTokenBytes {
		return 0, tooLarge(limitToken, MaxTokenBytes)
	}
	b.since++
	c := b.buf[b.i]
	b.i++
	return c, nil
}

func (b *boundedBytes) Read(p []byte) (int, error) {
	// encoding/xml reads through ReadByte when the reader has it.
	if len(p) == 0 {
		return 0, nil
	}
	c, err := b.ReadByte()
	if err != nil {
		return 0, err
	}
	p[0] = c
	return 1, nil
}

func newTokens(p *part) *tokens {
	src := &boundedBytes{r: p, buf: make([]byte, 32<<10)}
	dec := xml.NewDecoder(src)
	dec.Strict = true
	return &tokens{dec: dec, src: src}
}

// next returns the next token (io.EOF at the end). Names keep their
// prefix in Space; callers compare Local.
func (t *tokens) next() (xml.Token, error) {
	t.src.since = 0
	tok, err := t.dec.RawToken()
	if err != nil {
		var e *errcode.Error
		if errors.As(err, &e) {
			return nil, err
		}
		if errors.Is(err, io.EOF) {
			if t.depth != 0 {
				return nil, badFile(io.ErrUnexpectedEOF)
			}
			return nil, io.EOF
		}
		return nil, badFile(err)
	}
	switch tok.(type) {
	case xml.StartElement:
		t.depth++
		if t.depth > MaxDepth {
			return nil, tooLarge(limitDepth, MaxDepth)
		}
	case xml.EndElement:
		t.depth--
		if t.depth < 0 {
			return nil, badFile(errors.New("xml: unbalanced end element"))
		}
	}
	return tok, nil
}

// tokenCap reports whether err is the MaxTokenBytes refusal (inside a
// cell's text it is answered as the cell's 46014).
func tokenCap(err error) bool {
	var e *errcode.Error
	return errors.As(err, &e) && e.Code == errcode.ImportWorkbookTooLarge && e.Args["what"] == limitToken
}

func attr(e xml.StartElement, local string) (string, bool) {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value, true
		}
	}
	return "", false
}

// rels reads a relationships part: Id → (Type, Target resolved against
// the directory of the part it belongs to).
type rel struct{ typ, target string }

func (rd *reader) rels(name, baseDir string) (map[string]rel, error) {
	p, err := rd.open(name, limitPart, MaxMetaBytes)
	if err != nil || p == nil {
		return nil, err
	}
	defer func() { _ = p.rc.Close() }()
	out := map[string]rel{}
	t := newTokens(p)
	for {
		tok, err := t.next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "Relationship" {
			id, _ := attr(se, "Id")
			typ, _ := attr(se, "Type")
			target, _ := attr(se, "Target")
			if mode, _ := attr(se, "TargetMode"); strings.EqualFold(mode, "External") {
				continue
			}
			if strings.HasPrefix(target, "/") {
				target = strings.TrimPrefix(path.Clean(target), "/")
			} else {
				target = strings.TrimPrefix(path.Clean(path.Join(baseDir, target)), "/")
			}
			if _, dup := out[id]; !dup && len(out) < MaxEntries {
				out[id] = rel{typ: typ, target: target}
			}
		}
	}
}

func relOfType(rels map[string]rel, suffix string) string {
	for _, r := range rels {
		if strings.HasSuffix(r.typ, suffix) {
			return r.target
		}
	}
	return ""
}

// firstSheet reads the workbook part and returns the r:id of its first
// sheet.
func (rd *reader) firstSheet(name string) (string, error) {
	p, err := rd.open(name, limitPart, MaxMetaBytes)
	if err != nil {
		return "", err
	}
	if p == nil {
		return "", badFile(errors.New("xlsx: no workbook part"))
	}
	defer func() { _ = p.rc.Close() }()
	t := newTokens(p)
	for {
		tok, err := t.next()
		if errors.Is(err, io.EOF) {
			return "", errcode.New(errcode.ImportFileEmpty)
		}
		if err != nil {
			return "", err
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "sheet" {
			for _, a := range se.Attr {
				if a.Name.Local == "id" && a.Name.Space != "" {
					return a.Value, nil
				}
			}
			return "", badFile(errors.New("xlsx: sheet without r:id"))
		}
	}
}

func (rd *reader) read() (*Sheet, error) {
	root, err := rd.rels("_rels/.rels", "")
	if err != nil {
		return nil, err
	}
	wb := relOfType(root, "/officeDocument")
	if wb == "" {
		wb = "xl/workbook.xml"
	}
	dir := path.Dir(wb)
	wbRels, err := rd.rels(path.Join(dir, "_rels", path.Base(wb)+".rels"), dir)
	if err != nil {
		return nil, err
	}
	id, err := rd.firstSheet(wb)
	if err != nil {
		return nil, err
	}
	sheet, ok := wbRels[id]
	if !ok || rd.files[sheet.target] == nil {
		return nil, badFile(errors.New("xlsx: first sheet not found"))
	}
	if sst := relOfType(wbRels, "/sharedStrings"); sst != "" {
		if err := rd.sharedStrings(sst); err != nil {
			return nil, err
		}
	}
	return rd.sheet(sheet.target)
}

// text accumulates the text of one cell or shared string, refusing it
// past maxCellBytes.
type text struct {
	b       []byte
	tooLong bool
}

func (x *text) add(s []byte) {
	if x.tooLong {
		return
	}
	if len(x.b)+len(s) > maxCellBytes {
		x.tooLong = true
		return
	}
	x.b = append(x.b, s...)
}

func (x *text) reset() { x.b, x.tooLong = x.b[:0], false }

// valid reports whether the text is within MaxCellChars.
func (x *text) valid() bool {
	return !x.tooLong && utf8.RuneCount(x.b) <= MaxCellChars
}

// sharedStrings reads the shared-string table: each <si>'s text is its
// <t> and the <t> of its runs (<r>), phonetic runs (<rPh>) left out, as
// excelize reads it.
func (rd *reader) sharedStrings(name string) error {
	p, err := rd.open(name, limitSharedBytes, MaxUnpackedBytes)
	if err != nil || p == nil {
		return err
	}
	defer func() { _ = p.rc.Close() }()
	// The text is at most the part's declared size (archive/zip inflates
	// no more): sized once, the table never grows by doubling.
	rd.sst = make([]byte, 0, min(int64(MaxSharedStringBytes), p.left))
	t := newTokens(p)
	var (
		cur              text
		inSI, inT, inPh  bool
		phDepth, siDepth int
	)
	for {
		tok, err := t.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if inT && tokenCap(err) {
				return errcode.New(errcode.ImportCellTooLarge).With("sharedString", len(rd.sstEnds)).With("max", MaxCellChars)
			}
			return err
		}
		switch x := tok.(type) {
		case xml.StartElement:
			switch x.Name.Local {
			case "sst":
				if v, ok := attr(x, "uniqueCount"); ok && rd.sstEnds == nil {
					if n, err := strconv.Atoi(v); err == nil && n > 0 {
						rd.sstEnds = make([]uint32, 0, min(n, MaxSharedStrings, int(p.left/8)))
					}
				}
			case "si":
				if !inSI {
					inSI, siDepth = true, t.depth
					cur.reset()
				}
			case "rPh":
				if inSI && !inPh {
					inPh, phDepth = true, t.depth
				}
			case "t":
				inT = inSI && !inPh
			}
		case xml.CharData:
			if inT {
				cur.add(x)
			}
		case xml.EndElement:
			switch {
			case x.Name.Local == "t":
				inT = false
			case inPh && t.depth < phDepth:
				inPh = false
			case inSI && t.depth < siDepth:
				inSI = false
				if !cur.valid() {
					return errcode.New(errcode.ImportCellTooLarge).With("sharedString", len(rd.sstEnds)).With("max", MaxCellChars)
				}
				if len(rd.sstEnds) == MaxSharedStrings {
					return tooLarge(limitSharedStrings, MaxSharedStrings)
				}
				if len(rd.sst)+len(cur.b) > MaxSharedStringBytes {
					return tooLarge(limitSharedBytes, MaxSharedStringBytes)
				}
				rd.sst = append(rd.sst, cur.b...)
				rd.sstEnds = append(rd.sstEnds, uint32(len(rd.sst))) //nolint:gosec // G115: the shared strings are capped far below 4 GiB
			}
		}
	}
}

// shared returns shared string i, sharing the table's memory (the table is
// not written to once read).
func (rd *reader) shared(i int) (string, bool) {
	if i < 0 || i >= len(rd.sstEnds) {
		return "", false
	}
	start := uint32(0)
	if i > 0 {
		start = rd.sstEnds[i-1]
	}
	end := rd.sstEnds[i]
	if end == start {
		return "", true
	}
	return unsafe.String(&rd.sst[start], int(end-start)), true //nolint:gosec // G103: rd.sst is only appended to, so the bytes under a returned string never change
}

// cellRef splits a cell reference (A1) into its 0-based column and row;
// ok false when it is not one.
func cellRef(ref string) (col, row int, ok bool) {
	i := 0
	for i < len(ref) && i < 3 && ref[i] >= 'A' && ref[i] <= 'Z' {
		col = col*26 + int(ref[i]-'A'+1)
		i++
	}
	if i == 0 || i == len(ref) {
		return 0, 0, false
	}
	row, err := strconv.Atoi(ref[i:])
	if err != nil || row < 1 {
		return 0, 0, false
	}
	return col - 1, row, true
}

// sheet streams the worksheet: <row r> elements, each <c r t> with its
// <v> or inline <is><t>, values as excelize's RawCellValue gives them
// (shared strings looked up, everything else as written).
func (rd *reader) sheet(name string) (*Sheet, error) {
	p, err := rd.open(name, limitPart, MaxUnpackedBytes)
	if err != nil {
		return nil, err
	}
	defer func() { _ = p.rc.Close() }()
	t := newTokens(p)
	out := &Sheet{}
	var (
		rowNum           int
		cells            []string
		inRow, inCell    bool
		cellCol, lastCol int
		cellType         string
		inV, inIsT, inIs bool
		val              text
		hasVal           bool
	)
	finishRow := func() error {
		// Trailing blanks dropped; a blank row is skipped.
		n := len(cells)
		for n > 0 && cells[n-1] == "" {
			n--
		}
		if n == 0 {
			return nil
		}
		row := append([]string(nil), cells[:n]...)
		rd.retained += int64(48 + 16*n)
		if rd.retained > MaxRetainedBytes {
			return tooLarge(limitRetained, MaxRetainedBytes)
		}
		if out.Headers == nil {
			out.Headers = row
			return nil
		}
		if len(out.Rows) == rd.maxRows {
			return errcode.New(errcode.ImportRowLimitExceeded).With("max", rd.maxRows)
		}
		out.Rows = append(out.Rows, Row{Number: rowNum, Cells: row})
		return nil
	}
	finishCell := func() error {
		if !val.valid() {
			return cellTooLarge(rowNum, cellCol)
		}
		var v string
		switch {
		case !hasVal:
		case cellType == "s":
			i, err := strconv.Atoi(strings.TrimSpace(string(val.b)))
			s, ok := rd.shared(i)
			if err != nil || !ok {
				return badFile(errors.New("xlsx: bad shared string index"))
			}
			v = strings.TrimSpace(s)
		default:
			v = strings.TrimSpace(string(val.b))
			rd.retained += int64(len(v))
		}
		if v == "" {
			return nil
		}
		if cellCol >= MaxColumns {
			return tooLarge(limitColumns, MaxColumns)
		}
		for len(cells) <= cellCol {
			cells = append(cells, "")
		}
		cells[cellCol] = v
		return nil
	}
	for {
		tok, err := t.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if (inV || inIsT) && tokenCap(err) {
				return nil, cellTooLarge(rowNum, cellCol)
			}
			return nil, err
		}
		switch x := tok.(type) {
		case xml.StartElement:
			switch x.Name.Local {
			case "row":
				if inRow {
					return nil, badFile(errors.New("xlsx: nested row"))
				}
				n := rowNum + 1
				if r, ok := attr(x, "r"); ok {
					v, err := strconv.Atoi(r)
					if err != nil || v <= rowNum {
						return nil, badFile(errors.New("xlsx: bad row number"))
					}
					n = v
				}
				if n > MaxSheetRows {
					return nil, tooLarge(limitRows, MaxSheetRows)
				}
				rowNum, inRow, cells, lastCol = n, true, cells[:0], -1
			case "c":
				if !inRow || inCell {
					return nil, badFile(errors.New("xlsx: cell outside a row"))
				}
				col := lastCol + 1
				if r, ok := attr(x, "r"); ok {
					c, row, ok := cellRef(r)
					if !ok || row != rowNum || c <= lastCol {
						return nil, badFile(errors.New("xlsx: bad cell reference"))
					}
					col = c
				}
				if col >= 16384 {
					return nil, badFile(errors.New("xlsx: column out of range"))
				}
				cellType, _ = attr(x, "t")
				inCell, cellCol, lastCol, hasVal = true, col, col, false
				val.reset()
			case "v":
				inV = inCell
			case "is":
				inIs = inCell
			case "t":
				inIsT = inIs
			}
		case xml.CharData:
			if inV || inIsT {
				hasVal = true
				val.add(x)
			}
		case xml.EndElement:
			switch x.Name.Local {
			case "v":
				inV = false
				hasVal = true
			case "t":
				if inIsT {
					hasVal = true
				}
				inIsT = false
			case "is":
				inIs = false
			case "c":
				if inCell {
					inCell = false
					if err := finishCell(); err != nil {
						return nil, err
					}
				}
			case "row":
				if inRow {
					inRow = false
					if err := finishRow(); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if out.Headers == nil || len(out.Rows) == 0 {
		return nil, errcode.New(errcode.ImportFileEmpty)
	}
	return out, nil
}
