// Package request reads what handlers need from a request the way the wire
// contract sends it: JSON bodies with case-insensitive property names,
// case-insensitive query parameters, paging and date filters. Every failure
// is a 48xxx business error, never a panic or a 500.
package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/errcode"
)

// Invalid returns the 48002 error naming the offending field.
func Invalid(field string) *errcode.Error {
	return errcode.New(errcode.RequestInvalid).With("field", field)
}

// UnsupportedMediaType returns the 48006 error (HTTP 415) of a body that is
// not declared as JSON.
func UnsupportedMediaType() *errcode.Error {
	return errcode.New(errcode.UnsupportedMediaType)
}

// JSON decodes the request body into v. A non-empty body whose Content-Type
// is not application/json or application/*+json (parameters such as
// charset allowed) is 48006 / HTTP 415: a form or text/plain body is what a
// cross-site form can send without a CORS preflight, so it is refused before
// it is read. Property names match case-insensitively (encoding/json's
// rule); an empty body, malformed JSON, a wrong type, trailing data or a
// string holding a NUL character (\u0000) is a 48002 error naming the field
// when known.
func JSON(c fiber.Ctx, v any) error {
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return Invalid("body")
	}
	if !IsJSONContentType(c.Request().Header.ContentType()) {
		return UnsupportedMediaType()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Invalid(te.Field)
		}
		return Invalid("body")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Invalid("body")
	}
	if bytes.Contains(body, []byte(`\u0000`)) && hasNUL(body) {
		return Invalid("body")
	}
	return nil
}

// IsJSONContentType reports whether a Content-Type header value declares
// JSON: application/json or application/<anything>+json, any case, with or
// without parameters.
func IsJSONContentType(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	const app, plusJSON = "application/", "+json"
	if len(ct) <= len(app) || !bytes.EqualFold(ct[:len(app)], []byte(app)) {
		return false
	}
	sub := ct[len(app):]
	if bytes.EqualFold(sub, []byte("json")) {
		return true
	}
	return len(sub) > len(plusJSON) && bytes.EqualFold(sub[len(sub)-len(plusJSON):], []byte(plusJSON)) &&
		!bytes.ContainsAny(sub, "/ \t")
}

// hasNUL reports whether a valid JSON document holds a string (key or value)
// with a NUL character: no text column stores it (PostgreSQL refuses it), so
// it is a request error rather than a failed statement.
func hasNUL(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
}

// queryTrace is the TraceQueries hook (nil: one atomic load per call).
var queryTrace atomic.Pointer[func(route, name string)]

// TraceQueries installs fn, called with the route template (Fiber's form,
// e.g. /api/v1/sys/user/:id) and the name of every query parameter a
// handler reads through Query or QueryAll; nil removes it. Tests use it to
// check that the contract document declares what handlers read.
func TraceQueries(fn func(route, name string)) {
	if fn == nil {
		queryTrace.Store(nil)
		return
	}
	queryTrace.Store(&fn)
}

func traceQuery(c fiber.Ctx, name string) {
	if fn := queryTrace.Load(); fn != nil {
		(*fn)(c.Route().Path, name)
	}
}

// Query returns a query parameter matched case-insensitively (the UI sends
// PascalCase, scripts lowercase). The value is copied: it may outlive the
// request.
func Query(c fiber.Ctx, name string) string {
	traceQuery(c, name)
	var out string
	found := false
	for k, v := range c.Request().URI().QueryArgs().All() {
		if !found && strings.EqualFold(string(k), name) {
			out, found = string(v), true
		}
	}
	return out
}

// QueryAll returns every value of a repeated query parameter.
func QueryAll(c fiber.Ctx, name string) []string {
	traceQuery(c, name)
	var out []string
	for k, v := range c.Request().URI().QueryArgs().All() {
		if strings.EqualFold(string(k), name) {
			out = append(out, string(v))
		}
	}
	return out
}

// QueryInt64 parses an optional int64 query parameter.
func QueryInt64(c fiber.Ctx, name string) (*int64, error) {
	s := strings.TrimSpace(Query(c, name))
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, Invalid(name)
	}
	return &n, nil
}

// QueryBool parses an optional boolean query parameter.
func QueryBool(c fiber.Ctx, name string) (*bool, error) {
	s := strings.TrimSpace(Query(c, name))
	if s == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return nil, Invalid(name)
	}
	return &b, nil
}

// dateLayouts are the three forms the UI and the samples send.
var dateLayouts = []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02", time.RFC3339}

// QueryTime parses an optional date filter (YYYY-MM-DD, YYYY-MM-DD HH:MM:SS,
// YYYY-MM-DDTHH:MM:SS or RFC 3339) in server-local time. The result is in
// server-local time (an RFC 3339 offset such as -23:59, which PostgreSQL
// refuses, is converted away); an instant outside the years 1 to 9999 (in
// local time or UTC, which is what the MySQL driver accepts) is 48002.
func QueryTime(c fiber.Ctx, name string) (*time.Time, error) {
	s := strings.TrimSpace(Query(c, name))
	if s == "" {
		return nil, nil
	}
	for _, layout := range dateLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			t = t.In(time.Local)
			if y, u := t.Year(), t.UTC().Year(); y < 1 || y > 9999 || u < 1 || u > 9999 {
				return nil, Invalid(name)
			}
			return &t, nil
		}
	}
	return nil, Invalid(name)
}

// ParamInt64 parses a path parameter as a positive int64.
func ParamInt64(c fiber.Ctx, name string) (int64, error) {
	n, err := strconv.ParseInt(c.Params(name), 10, 64)
	if err != nil || n <= 0 {
		return 0, Invalid(name)
	}
	return n, nil
}

// Param returns a path parameter, copied.
func Param(c fiber.Ctx, name string) string {
	return strings.Clone(c.Params(name))
}

// Page is the contract's PageInputBase.
type Page struct {
	Current   int
	Size      int
	SortField string
	Desc      bool
}

// Offset is the number of rows to skip. It saturates instead of
// overflowing: a page far past the end is empty, never a negative offset.
func (p Page) Offset() int {
	if p.Current <= 1 || p.Size <= 0 {
		return 0
	}
	if p.Current-1 > math.MaxInt/p.Size {
		return math.MaxInt
	}
	return (p.Current - 1) * p.Size
}

// Paging reads Current, Size, SortField and SortOrder. Current <= 0 is 1,
// Size <= 0 is 20, Size above maxSize is 48001 with args size and max. A
// query parameter holding a NUL character or invalid UTF-8 is 48002 naming
// it: the filters of a paged list go to the database, and PostgreSQL
// refuses both.
func Paging(c fiber.Ctx, maxSize int) (Page, error) {
	p := Page{Current: 1, Size: 20}
	for k, v := range c.Request().URI().QueryArgs().All() {
		if bytes.IndexByte(v, 0) >= 0 || !utf8.Valid(v) {
			return p, Invalid(string(k))
		}
	}
	if s := strings.TrimSpace(Query(c, "Current")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return p, Invalid("Current")
		}
		if n > 0 {
			p.Current = n
		}
	}
	if s := strings.TrimSpace(Query(c, "Size")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return p, Invalid("Size")
		}
		if n > maxSize {
			return p, errcode.New(errcode.PageSizeExceeded).With("size", n).With("max", maxSize)
		}
		if n > 0 {
			p.Size = n
		}
	}
	p.SortField = Query(c, "SortField")
	p.Desc = strings.EqualFold(strings.TrimSpace(Query(c, "SortOrder")), "desc")
	return p, nil
}

// PagedList is the contract's paged response.
type PagedList[T any] struct {
	Current int `json:"current"`
	Size    int `json:"size"`
	Total   int `json:"total"`
	Pages   int `json:"pages"`
	Items   []T `json:"items"`
}

// NewPagedList wraps one page of items.
func NewPagedList[T any](p Page, total int, items []T) PagedList[T] {
	if items == nil {
		items = []T{}
	}
	pages := 0
	if p.Size > 0 {
		pages = (total + p.Size - 1) / p.Size
	}
	return PagedList[T]{Current: p.Current, Size: p.Size, Total: total, Pages: pages, Items: items}
}

// EntityTimeLayout is the contract's entity DateTime (createTime, ...):
// ISO-8601 without an offset, in server-local time.
const EntityTimeLayout = "2006-01-02T15:04:05"

// EntityTime formats an entity timestamp.
func EntityTime(t time.Time) string { return t.Local().Format(EntityTimeLayout) }

// EntityTimePtr formats an optional entity timestamp.
func EntityTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := EntityTime(*t)
	return &s
}

// Audit are the fields every contract entity carries about its life
// (isDelete, createTime, createUserId, updateTime, updateUserId); a
// response type embeds it where the contract lists them.
type Audit struct {
	IsDelete     bool    `json:"isDelete"`
	CreateTime   string  `json:"createTime"`
	CreateUserID *int64  `json:"createUserId"`
	UpdateTime   *string `json:"updateTime"`
	UpdateUserID *int64  `json:"updateUserId"`
}

// AuditOf fills Audit from an entity's columns.
func AuditOf(isDelete bool, created time.Time, createdBy *int64, updated *time.Time, updatedBy *int64) Audit {
	return Audit{IsDelete: isDelete, CreateTime: EntityTime(created), CreateUserID: createdBy,
		UpdateTime: EntityTimePtr(updated), UpdateUserID: updatedBy}
}

// OffsetTimeLayout is the contract's DateTimeOffset (expiresAt,
// refreshExpiresAt, ping.at): ISO-8601 with the offset, in server-local
// time, whole seconds.
const OffsetTimeLayout = time.RFC3339

// EntityStamp is a time that goes on the wire as an entity DateTime
// (EntityTimeLayout, server-local, no offset), for items whose Go code
// works with the time itself (session lists). It reads back in that form
// or RFC 3339.
type EntityStamp struct{ time.Time }

// MarshalJSON writes the entity form.
func (s EntityStamp) MarshalJSON() ([]byte, error) {
	return quoteTime(s.Local(), EntityTimeLayout), nil
}

// UnmarshalJSON reads the entity form (server-local) or RFC 3339.
func (s *EntityStamp) UnmarshalJSON(b []byte) error {
	return unmarshalStamp(b, EntityTimeLayout, &s.Time)
}

// OffsetStamp is a time that goes on the wire as a DateTimeOffset
// (OffsetTimeLayout).
type OffsetStamp struct{ time.Time }

// MarshalJSON writes the offset form.
func (s OffsetStamp) MarshalJSON() ([]byte, error) {
	return quoteTime(s.Local(), OffsetTimeLayout), nil
}

// quoteTime formats t as a JSON string in one allocation (the ping's
// answer carries one).
func quoteTime(t time.Time, layout string) []byte {
	b := make([]byte, 0, len(layout)+10)
	b = append(b, '"')
	b = t.AppendFormat(b, layout)
	return append(b, '"')
}

// UnmarshalJSON reads RFC 3339 (with or without fractions).
func (s *OffsetStamp) UnmarshalJSON(b []byte) error {
	return unmarshalStamp(b, time.RFC3339Nano, &s.Time)
}

func unmarshalStamp(b []byte, layout string, t *time.Time) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return err
	}
	for _, l := range []string{layout, time.RFC3339Nano} {
		if v, err := time.ParseInLocation(l, str, time.Local); err == nil {
			*t = v
			return nil
		}
	}
	return fmt.Errorf("time %q is neither %s nor RFC 3339", str, layout)
}
