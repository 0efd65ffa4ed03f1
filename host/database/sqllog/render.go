package sqllog

import (
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/internal/textclip"
)

// Masked is what a parameter bound to a sensitive column is rendered as.
const Masked = "'***'"

// DefaultMaxSQLChars is the statement length used when Options.MaxSQLChars
// is not positive (the Service:Database:SqlLog:MaxSqlChars default).
const DefaultMaxSQLChars = 4000

// Render returns query with its parameters inlined, for logs: strings
// quoted (a single quote doubled), nil as NULL, booleans as 1/0, times as quoted
// RFC 3339, byte slices as text, hex or '<N bytes>'. A parameter bound to a
// column whose name is a config.SensitiveName (INSERT column lists, col = ?,
// col <> ?, col IN (?, ...), col BETWEEN ? AND ?, SET col = <expr with ?>,
// lower(col) = ?, quoted and table-qualified names) or passed as a
// sql.NamedArg with such a name is rendered as '***'. Placeholders are $n for
// dialect.Postgres and ? otherwise. Render does not truncate.
func Render(dialectName, query string, args []any) string {
	r, _ := render(dialectName, query, args)
	return r
}

// render is Render plus the indexes of the masked arguments.
func render(dialectName, query string, args []any) (string, map[int]bool) {
	toks := tokenize(query, dialectName)
	cols := placeholderColumns(toks)

	masked := make(map[int]bool)
	for i, t := range toks {
		if t.kind != tkPlaceholder || t.arg < 0 || t.arg >= len(args) {
			continue
		}
		if c, ok := cols[i]; ok && config.SensitiveName(c) {
			masked[t.arg] = true
		}
	}
	for i, a := range args {
		if na, ok := a.(sql.NamedArg); ok && na.Name != "" && config.SensitiveName(na.Name) {
			masked[i] = true
		}
	}

	var b strings.Builder
	b.Grow(len(query) + 16*len(args))
	last := 0
	for _, t := range toks {
		if t.kind != tkPlaceholder || t.arg < 0 || t.arg >= len(args) {
			continue
		}
		b.WriteString(query[last:t.start])
		if masked[t.arg] {
			b.WriteString(Masked)
		} else {
			b.WriteString(renderValue(args[t.arg], dialectName))
		}
		last = t.end
	}
	b.WriteString(query[last:])
	return b.String(), masked
}

// truncate cuts s after max characters (runes, textclip.RuneOffset) and
// appends the original length: "… (N chars)".
func truncate(s string, max int) string {
	if max <= 0 {
		max = DefaultMaxSQLChars
	}
	cut := textclip.RuneOffset(s, max)
	if cut == len(s) {
		return s
	}
	n := utf8.RuneCountInString(s)
	return s[:cut] + "… (" + strconv.Itoa(n) + " chars)"
}

// renderValue renders one parameter value as an SQL literal.
func renderValue(v any, dialectName string) (out string) {
	defer func() {
		// A Valuer or Stringer with a nil receiver may panic: the log line
		// must not take the statement down.
		if recover() != nil {
			out = "'?'"
		}
	}()
	for depth := 0; depth < 8; depth++ {
		switch x := v.(type) {
		case nil:
			return "NULL"
		case sql.NamedArg:
			v = x.Value
			continue
		case bool:
			if x {
				return "1"
			}
			return "0"
		case string:
			return quote(x)
		case []byte:
			return renderBytes(x, dialectName)
		case time.Time:
			return quote(x.Format(time.RFC3339Nano))
		case int:
			return strconv.FormatInt(int64(x), 10)
		case int64:
			return strconv.FormatInt(x, 10)
		case int32:
			return strconv.FormatInt(int64(x), 10)
		case uint64:
			return strconv.FormatUint(x, 10)
		case float64:
			return renderFloat(x, 64)
		case float32:
			return renderFloat(float64(x), 32)
		case driver.Valuer:
			rv := reflect.ValueOf(x)
			if rv.Kind() == reflect.Pointer && rv.IsNil() {
				return "NULL"
			}
			val, err := x.Value()
			if err != nil {
				return "'?'"
			}
			v = val
			continue
		}
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Pointer, reflect.Interface:
			if rv.IsNil() {
				return "NULL"
			}
			v = rv.Elem().Interface()
			continue
		case reflect.Bool:
			v = rv.Bool()
			continue
		case reflect.String:
			return quote(rv.String())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return strconv.FormatInt(rv.Int(), 10)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return strconv.FormatUint(rv.Uint(), 10)
		case reflect.Float32, reflect.Float64:
			return renderFloat(rv.Float(), 64)
		case reflect.Slice:
			if rv.Type().Elem().Kind() == reflect.Uint8 {
				return renderBytes(rv.Bytes(), dialectName)
			}
		}
		if s, ok := v.(fmt.Stringer); ok {
			return quote(s.String())
		}
		return quote(fmt.Sprint(v))
	}
	return quote(fmt.Sprint(v))
}

func renderFloat(f float64, bits int) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return quote(strconv.FormatFloat(f, 'g', -1, bits))
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// maxHexBytes: longer binary values are rendered as '<N bytes>'.
const maxHexBytes = 32

func renderBytes(b []byte, dialectName string) string {
	if b == nil {
		return "NULL"
	}
	if utf8.Valid(b) && printable(b) {
		return quote(string(b))
	}
	if len(b) > maxHexBytes {
		return "'<" + strconv.Itoa(len(b)) + " bytes>'"
	}
	if dialectName == dialect.Postgres {
		return `'\x` + hex.EncodeToString(b) + "'"
	}
	return "X'" + hex.EncodeToString(b) + "'"
}

// printable reports whether b is text (no control characters other than
// tab, CR and LF).
func printable(b []byte) bool {
	for _, r := range string(b) {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return false
		}
	}
	return true
}

func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// --- tokenizer ---------------------------------------------------------

type tokenKind int

const (
	tkWord        tokenKind = iota // bare identifier or keyword
	tkQuoted                       // "ident", `ident`, [ident]
	tkString                       // 'literal'
	tkNumber                       // 123, 1.5
	tkPlaceholder                  // ?, $n
	tkOp                           // =, <>, <=, ::, +, ...
	tkPunct                        // ( ) , . ;
)

type token struct {
	kind       tokenKind
	start, end int    // byte span in the query
	text       string // identifier name (unquoted), operator or punctuation
	arg        int    // placeholder: argument index (0-based), -1 if none
}

func isWordStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isWordChar(c byte) bool {
	return isWordStart(c) || c >= '0' && c <= '9' || c == '$'
}

// tokenize splits query into tokens, skipping whitespace and comments.
// Placeholders are $n for PostgreSQL and ? for the other dialects.
func tokenize(q, dialectName string) []token {
	pg := dialectName == dialect.Postgres
	backslash := dialectName == dialect.MySQL
	var toks []token
	qmarks := 0
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '#' && dialectName == dialect.MySQL:
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				i = len(q)
			} else {
				i += end + 4
			}
		case c == '\'':
			start := i
			i = skipQuoted(q, i, '\'', backslash)
			toks = append(toks, token{kind: tkString, start: start, end: i, arg: -1})
		case c == '"' || c == '`':
			start := i
			i = skipQuoted(q, i, c, false)
			name := q[start+1 : max(start+1, i-1)]
			name = strings.ReplaceAll(name, string([]byte{c, c}), string(c))
			toks = append(toks, token{kind: tkQuoted, start: start, end: i, text: name, arg: -1})
		case c == '[' && dialectName == dialect.SQLite:
			start := i
			end := strings.IndexByte(q[i:], ']')
			if end < 0 {
				i = len(q)
			} else {
				i += end + 1
			}
			toks = append(toks, token{kind: tkQuoted, start: start, end: i, text: q[start+1 : max(start+1, i-1)], arg: -1})
		case c == '?' && !pg:
			toks = append(toks, token{kind: tkPlaceholder, start: i, end: i + 1, text: "?", arg: qmarks})
			qmarks++
			i++
		case c == '$' && pg && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			start := i
			i++
			for i < len(q) && q[i] >= '0' && q[i] <= '9' {
				i++
			}
			n, err := strconv.Atoi(q[start+1 : i])
			if err != nil || n < 1 {
				n = 0
			}
			toks = append(toks, token{kind: tkPlaceholder, start: start, end: i, text: q[start:i], arg: n - 1})
		case c >= '0' && c <= '9':
			start := i
			for i < len(q) && (isWordChar(q[i]) || q[i] == '.') {
				i++
			}
			toks = append(toks, token{kind: tkNumber, start: start, end: i, arg: -1})
		case isWordStart(c):
			start := i
			for i < len(q) && isWordChar(q[i]) {
				i++
			}
			toks = append(toks, token{kind: tkWord, start: start, end: i, text: q[start:i], arg: -1})
		case c == '(' || c == ')' || c == ',' || c == '.' || c == ';':
			toks = append(toks, token{kind: tkPunct, start: i, end: i + 1, text: string(c), arg: -1})
			i++
		default:
			start := i
			for i < len(q) && strings.IndexByte("=<>!+-*/%|&^~:@#?", q[i]) >= 0 {
				if q[i] == '?' && !pg {
					break
				}
				if i > start && (q[i] == '-' && i+1 < len(q) && q[i+1] == '-' || q[i] == '/' && i+1 < len(q) && q[i+1] == '*') {
					break
				}
				i++
			}
			if i == start {
				i++
			}
			toks = append(toks, token{kind: tkOp, start: start, end: i, text: q[start:i], arg: -1})
		}
	}
	return toks
}

// skipQuoted returns the index after the quoted section starting at i
// (doubled quotes escape; backslash escapes when backslash is true).
func skipQuoted(q string, i int, quote byte, backslash bool) int {
	i++
	for i < len(q) {
		switch q[i] {
		case '\\':
			if backslash {
				i += 2
				continue
			}
		case quote:
			if i+1 < len(q) && q[i+1] == quote {
				i += 2
				continue
			}
			return i + 1
		}
		i++
	}
	return len(q)
}

// --- placeholder → column ------------------------------------------------

func (t token) is(kw string) bool {
	return t.kind == tkWord && strings.EqualFold(t.text, kw)
}

func (t token) punct(p string) bool {
	return t.kind == tkPunct && t.text == p
}

func (t token) ident() bool {
	return t.kind == tkQuoted || t.kind == tkWord && !keywords[strings.ToUpper(t.text)]
}

// keywords are never taken for column names.
var keywords = map[string]bool{
	"SELECT": true, "FROM": true, "WHERE": true, "AND": true, "OR": true, "NOT": true,
	"ON": true, "SET": true, "WHEN": true, "THEN": true, "ELSE": true, "CASE": true,
	"END": true, "HAVING": true, "BY": true, "AS": true, "IN": true, "IS": true,
	"NULL": true, "LIKE": true, "ILIKE": true, "BETWEEN": true, "VALUES": true,
	"VALUE": true, "LIMIT": true, "OFFSET": true, "RETURNING": true, "UPDATE": true,
	"INSERT": true, "INTO": true, "DELETE": true, "EXISTS": true, "ANY": true, "ALL": true,
	"DISTINCT": true, "JOIN": true, "USING": true, "ORDER": true, "GROUP": true, "UNION": true,
	"TRUE": true, "FALSE": true,
}

// comparison reports whether t binds the value to its left operand's column.
func comparison(t token) bool {
	if t.kind == tkOp {
		switch t.text {
		case "=", "==", "<>", "!=", "<", ">", "<=", ">=", "<=>":
			return true
		}
		return false
	}
	return t.is("LIKE") || t.is("ILIKE") || t.is("GLOB") || t.is("REGEXP")
}

type parser struct {
	toks  []token
	match []int // index of the matching paren, -1 if none
}

// columnBefore returns the column named by the operand ending at token i:
// an identifier (last part of t.col) or a parenthesised call such as
// lower("col") (its first column argument).
func (p *parser) columnBefore(i int) (string, bool) {
	if i < 0 {
		return "", false
	}
	t := p.toks[i]
	if t.ident() {
		return t.text, true
	}
	if t.punct(")") && p.match[i] >= 0 {
		return p.firstColumn(p.match[i]+1, i)
	}
	return "", false
}

// columnAfter returns the column named by the operand starting at token i
// (for "? = col").
func (p *parser) columnAfter(i int) (string, bool) {
	if i >= len(p.toks) || !p.toks[i].ident() {
		return "", false
	}
	for i+2 < len(p.toks) && p.toks[i+1].punct(".") && p.toks[i+2].ident() {
		i += 2
	}
	if i+1 < len(p.toks) && p.toks[i+1].punct("(") {
		return "", false // a function call
	}
	return p.toks[i].text, true
}

// firstColumn returns the first column reference in toks[from:to].
func (p *parser) firstColumn(from, to int) (string, bool) {
	for i := from; i < to; i++ {
		if !p.toks[i].ident() {
			continue
		}
		for i+2 < to && p.toks[i+1].punct(".") && p.toks[i+2].ident() {
			i += 2
		}
		if i+1 < to && p.toks[i+1].punct("(") {
			continue // function name
		}
		return p.toks[i].text, true
	}
	return "", false
}

// placeholderColumns maps the token index of each placeholder to the name of
// the column it binds to, when one can be recognised.
func placeholderColumns(toks []token) map[int]string {
	p := &parser{toks: toks, match: make([]int, len(toks))}
	var stack []int
	for i, t := range toks {
		p.match[i] = -1
		switch {
		case t.punct("("):
			stack = append(stack, i)
		case t.punct(")") && len(stack) > 0:
			open := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			p.match[i], p.match[open] = open, i
		}
	}
	cols := make(map[int]string)
	p.insertColumns(cols)
	p.expressionColumns(cols)
	return cols
}

// insertColumns maps the placeholders of INSERT ... (cols) VALUES (...),
// (...) by position.
func (p *parser) insertColumns(cols map[int]string) {
	toks := p.toks
	for i := 0; i < len(toks); i++ {
		if !toks[i].is("INSERT") && !toks[i].is("REPLACE") {
			continue
		}
		j := i + 1
		for j < len(toks) && (toks[j].is("INTO") || toks[j].is("IGNORE") || toks[j].is("OR") ||
			toks[j].is("REPLACE") || toks[j].is("ABORT") || toks[j].is("ROLLBACK") || toks[j].is("FAIL")) {
			j++
		}
		// table name: ident(.ident)*
		if j >= len(toks) || !toks[j].ident() {
			continue
		}
		j++
		for j+1 < len(toks) && toks[j].punct(".") && toks[j+1].ident() {
			j += 2
		}
		if j < len(toks) && toks[j].is("AS") {
			j += 2
		}
		if j >= len(toks) || !toks[j].punct("(") || p.match[j] < 0 {
			continue
		}
		var names []string
		end := p.match[j]
		elem := ""
		for k := j + 1; k < end; k++ {
			switch {
			case toks[k].punct(","):
				names = append(names, elem)
				elem = ""
			case toks[k].ident():
				elem = toks[k].text
			}
		}
		names = append(names, elem)
		j = end + 1
		if j >= len(toks) || !toks[j].is("VALUES") && !toks[j].is("VALUE") {
			continue
		}
		j++
		for j < len(toks) && toks[j].punct("(") && p.match[j] >= 0 {
			close := p.match[j]
			pos, depth := 0, 0
			for k := j + 1; k < close; k++ {
				t := toks[k]
				switch {
				case t.punct("("):
					depth++
				case t.punct(")"):
					depth--
				case t.punct(",") && depth == 0:
					pos++
				case t.kind == tkPlaceholder && pos < len(names) && names[pos] != "":
					cols[k] = names[pos]
				}
			}
			j = close + 1
			if j < len(toks) && toks[j].punct(",") {
				j++
				continue
			}
			break
		}
		i = j - 1
	}
}

// frame is the state of one parenthesis level in expressionColumns.
type frame struct {
	col       string // column the whole level's values bind to (IN list, col = f(...))
	setActive bool   // inside a SET clause at this level
	setCol    string // current SET target
}

// expressionColumns maps the remaining placeholders from comparisons, IN
// lists, BETWEEN and SET assignments.
func (p *parser) expressionColumns(cols map[int]string) {
	toks := p.toks
	stack := []frame{{}}
	between := make(map[int]string) // placeholder index → column, for "BETWEEN ? AND ?"
	for i, t := range toks {
		top := &stack[len(stack)-1]
		switch {
		case t.punct("("):
			f := frame{col: stack[len(stack)-1].col}
			if c, ok := p.frameColumn(i); ok {
				f.col = c
			}
			stack = append(stack, f)
		case t.punct(")"):
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case t.is("SET"):
			top.setActive, top.setCol = true, ""
		case t.is("WHERE") || t.is("RETURNING") || t.is("FROM") || t.is("LIMIT") || t.is("ORDER") || t.punct(";"):
			top.setActive, top.setCol = false, ""
		case t.punct(",") && top.setActive:
			top.setCol = ""
		case t.kind == tkOp && t.text == "=" && top.setActive && top.setCol == "":
			if c, ok := p.columnBefore(i - 1); ok {
				top.setCol = c
			}
		case t.kind == tkPlaceholder:
			// Each rule that applies names a column: a direct comparison,
			// the enclosing IN list or compared call, the enclosing SET
			// target, and (from insertColumns) the INSERT column. The first
			// one found is kept unless a later one is sensitive, so a value
			// is masked when any reading binds it to a sensitive column
			// ("VALUES (?, (SELECT 1 ... WHERE token = ?))").
			var buf [3]string
			names := buf[:0]
			if c, ok := p.placeholderColumn(i, between); ok {
				names = append(names, c)
			}
			if top.col != "" {
				names = append(names, top.col)
			}
			for k := len(stack) - 1; k >= 0; k-- {
				if stack[k].setActive {
					if stack[k].setCol != "" {
						names = append(names, stack[k].setCol)
					}
					break
				}
			}
			for _, c := range names {
				if prev, done := cols[i]; !done || config.SensitiveName(c) && !config.SensitiveName(prev) {
					cols[i] = c
				}
			}
		}
	}
}

// placeholderColumn applies the direct rules to the placeholder at i:
// "col <op> ?", "? <op> col", "col BETWEEN ? AND ?".
func (p *parser) placeholderColumn(i int, between map[int]string) (string, bool) {
	toks := p.toks
	if i >= 1 {
		prev := toks[i-1]
		if comparison(prev) {
			k := i - 2
			if prev.is("LIKE") || prev.is("ILIKE") {
				if k >= 0 && toks[k].is("NOT") {
					k--
				}
			}
			if c, ok := p.columnBefore(k); ok {
				return c, true
			}
		}
		if prev.is("BETWEEN") {
			k := i - 2
			if k >= 0 && toks[k].is("NOT") {
				k--
			}
			if c, ok := p.columnBefore(k); ok {
				between[i] = c
				return c, true
			}
		}
		if prev.is("AND") && i >= 2 {
			if c, ok := between[i-2]; ok {
				return c, true
			}
		}
	}
	if i+2 < len(toks) && comparison(toks[i+1]) {
		if c, ok := p.columnAfter(i + 2); ok {
			return c, true
		}
	}
	return "", false
}

// frameColumn returns the column the values inside the parenthesis opened at
// i bind to: "col IN (", "col NOT IN (", "col = (", "col = f(".
func (p *parser) frameColumn(i int) (string, bool) {
	toks := p.toks
	k := i - 1
	if k < 0 {
		return "", false
	}
	if toks[k].is("IN") {
		k--
		if k >= 0 && toks[k].is("NOT") {
			k--
		}
		return p.columnBefore(k)
	}
	if toks[k].ident() && toks[k].kind == tkWord { // function name
		k--
	}
	if k >= 1 && comparison(toks[k]) {
		return p.columnBefore(k - 1)
	}
	return "", false
}
