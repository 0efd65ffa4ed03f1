package resource

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
)

const dateLayout = "2006-01-02"

// invalid is the 48002 error of a field, with the rule it broke.
func invalid(f *field, rule string) *errcode.Error {
	return request.Invalid(f.Name).With("rule", rule)
}

// decodeBody reads a create or update body: the form fields present in it
// (names matched case-insensitively), parsed and checked. Fields absent
// from an update keep their value; on create an absent required field is
// refused.
func (s *spec) decodeBody(body []byte, create bool) (map[string]any, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return nil, request.Invalid("body")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, request.Invalid("body") // trailing data after the object
	}
	lower := make(map[string]json.RawMessage, len(raw))
	for k, v := range raw {
		lower[strings.ToLower(k)] = v
	}
	out := map[string]any{}
	for _, f := range s.fields {
		if !f.Form || f.ReadOnly {
			continue
		}
		v, ok := lower[strings.ToLower(f.Name)]
		if !ok {
			if create && f.Required {
				return nil, invalid(f, "required")
			}
			continue
		}
		val, err := f.parseJSON(v)
		if err != nil {
			return nil, err
		}
		if val == nil && !f.Required && !f.null && f.hasDefault {
			continue // an empty value of a column with a default: the default (create) or unchanged (update)
		}
		if err := f.check(val); err != nil {
			return nil, err
		}
		out[f.col] = val
	}
	return out, nil
}

// parseJSON reads one JSON value of f (null: nil).
func (f *field) parseJSON(v json.RawMessage) (any, error) {
	v = bytes.TrimSpace(v)
	if bytes.Equal(v, []byte("null")) {
		return nil, nil
	}
	switch f.Type {
	case Int, Org:
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil {
			// A string holding a number is accepted (int64 ids travel as strings).
			var s string
			if json.Unmarshal(v, &s) != nil {
				return nil, invalid(f, "type")
			}
			n = json.Number(strings.TrimSpace(s))
		}
		if n == "" {
			return nil, nil
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			return nil, invalid(f, "type")
		}
		return i, nil
	case Decimal:
		var n json.Number
		if err := json.Unmarshal(v, &n); err != nil {
			return nil, invalid(f, "type")
		}
		x, err := n.Float64()
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, invalid(f, "type")
		}
		return round(x, f.Scale), nil
	case Bool:
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return nil, invalid(f, "type")
		}
		return b, nil
	default:
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, invalid(f, "type")
		}
		return f.parseText(s)
	}
}

// parseText reads a value of f from text (query strings, spreadsheet
// cells, JSON strings): "" is nil.
func (f *field) parseText(s string) (any, error) {
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return nil, invalid(f, "type")
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, nil
	}
	switch f.Type {
	case Int, Org:
		i, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return nil, invalid(f, "type")
		}
		return i, nil
	case Decimal:
		x, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, invalid(f, "type")
		}
		return round(x, f.Scale), nil
	case Bool:
		switch strings.ToLower(t) {
		case "true", "1", "yes", "是":
			return true, nil
		case "false", "0", "no", "否":
			return false, nil
		}
		return nil, invalid(f, "type")
	case Date:
		d, err := time.ParseInLocation(dateLayout, t, time.UTC)
		if err != nil || d.Year() < 1000 || d.Year() > 9999 {
			return nil, invalid(f, "type") // MySQL's DATETIME holds years 1000-9999
		}
		return d, nil
	case DateTime:
		d, err := time.Parse(time.RFC3339, t)
		if err != nil || d.UTC().Year() < 1000 || d.UTC().Year() > 9999 {
			return nil, invalid(f, "type")
		}
		return d.UTC(), nil
	case String, Dict:
		return t, nil // one line: surrounding spaces dropped
	default:
		return s, nil
	}
}

// check applies required, length and range rules to a parsed value.
func (f *field) check(v any) error {
	if v == nil {
		if f.Required {
			return invalid(f, "required")
		}
		if !f.null && f.Type != Bool {
			return invalid(f, "required")
		}
		return nil
	}
	switch x := v.(type) {
	case string:
		if f.Max != nil && float64(utf8.RuneCountInString(x)) > *f.Max {
			return invalid(f, "max").With("max", int(*f.Max))
		}
		if f.size > 0 && utf8.RuneCountInString(x) > f.size {
			return invalid(f, "max").With("max", f.size)
		}
	case int64:
		if f.Min != nil && float64(x) < *f.Min {
			return invalid(f, "min").With("min", *f.Min)
		}
		if f.Max != nil && float64(x) > *f.Max {
			return invalid(f, "max").With("max", *f.Max)
		}
		if f.Type == Int && (x > 1<<53 || x < -(1<<53)) {
			return invalid(f, "max")
		}
	case float64:
		if f.Min != nil && x < *f.Min {
			return invalid(f, "min").With("min", *f.Min)
		}
		if f.Max != nil && x > *f.Max {
			return invalid(f, "max").With("max", *f.Max)
		}
	}
	return nil
}

// wire is the JSON value of a column value.
func (f *field) wire(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case time.Time:
		if f.Type == Date {
			return x.UTC().Format(dateLayout)
		}
		return request.EntityTime(x)
	case float64:
		if f.Type == Decimal {
			return round(x, f.Scale)
		}
		return x
	case int64:
		if f.Type == Bool {
			return x != 0
		}
		return x
	}
	return v
}

// text is the spreadsheet text of a column value.
func (f *field) text(v any) string {
	switch x := f.wire(v).(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', f.Scale, 64)
	}
	return ""
}
