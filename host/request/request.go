// Package request reads what handlers need from a request the way the wire
// contract sends it: JSON bodies with case-insensitive property names,
// case-insensitive query parameters, paging and date filters. Every failure
// is a 48xxx business error, never a panic or a 500.
package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/errcode"
)

// Invalid returns the 48002 error naming the offending field.
func Invalid(field string) *errcode.Error {
	return errcode.New(errcode.RequestInvalid).With("field", field)
}

// JSON decodes the request body into v. Property names match
// case-insensitively (encoding/json's rule); an empty body, malformed JSON,
// a wrong type or trailing data is a 48002 error naming the field when known.
func JSON(c fiber.Ctx, v any) error {
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return Invalid("body")
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
	return nil
}

// Query returns a query parameter matched case-insensitively (the UI sends
// PascalCase, scripts lowercase). The value is copied: it may outlive the
// request.
func Query(c fiber.Ctx, name string) string {
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
// YYYY-MM-DDTHH:MM:SS or RFC 3339) in server-local time.
func QueryTime(c fiber.Ctx, name string) (*time.Time, error) {
	s := strings.TrimSpace(Query(c, name))
	if s == "" {
		return nil, nil
	}
	for _, layout := range dateLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
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

// Offset is the number of rows to skip.
func (p Page) Offset() int { return (p.Current - 1) * p.Size }

// Paging reads Current, Size, SortField and SortOrder. Current <= 0 is 1,
// Size <= 0 is 20, Size above maxSize is 48001 with args size and max.
func Paging(c fiber.Ctx, maxSize int) (Page, error) {
	p := Page{Current: 1, Size: 20}
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
