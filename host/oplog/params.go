package oplog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adminkernel/kernel/config"
)

// Masked replaces the value of every parameter whose name is sensitive
// (Sensitive: config.SensitiveName — case-insensitive substring of
// password, pwd, secret, token, credential, header, authorization, apikey,
// api_key, cookie — plus the one-time values of the external login that
// only the operation log sees: pendinglink, ticket, verifier). Only names
// are tested, never values.
const Masked = "***"

// opLogOnlySensitive are name parts masked in the operation log on top of
// config.SensitiveName: the pending-link token (POST
// auth/external/pending-link/claim is op-logged, its body and query carry
// pendingLink) and login and bind tickets (bindTicket). Both are bearer
// values: whoever reads one within its lifetime can redeem it. The binding
// verifier (bindingVerifier, sent with a ticket, pending link or bind
// ticket) is the secret half of the browser binding. TOTP codes, recovery
// codes and challenge ids (POST auth/mfa/bind/complete and auth/mfa/recovery
// are op-logged) are one-time secrets too.
var opLogOnlySensitive = []string{"pendinglink", "ticket", "verifier", "recoverycode", "totpcode", "challengeid"}

// Sensitive reports whether the value of a parameter or JSON key called
// name is masked in the operation log.
func Sensitive(name string) bool {
	if config.SensitiveName(name) {
		return true
	}
	lower := strings.ToLower(name)
	for _, part := range opLogOnlySensitive {
		if strings.Contains(lower, part) {
			return true
		}
	}
	return false
}

// Param is one query or form parameter.
type Param struct{ Key, Value string }

// BuildParams returns the stored input JSON of a request ("" when it carried
// none), redacted and cut to maxChars (see Cut):
//
//   - a JSON body alone is stored as that JSON, with the value of every
//     sensitive key at any depth replaced by "***" (objects and arrays under
//     such a key included); order and numbers are kept, whitespace is not;
//   - query parameters alone are stored as an object of name → value (an
//     array for a repeated name), sensitive names masked;
//   - both: {"_query":{...},"_body":...};
//   - a form body (application/x-www-form-urlencoded) is stored like query
//     parameters;
//   - any other body is never stored, only noted:
//     {"_body":"<N bytes, not JSON>"} (or "<N bytes, multipart/form-data>").
//
// The result is always valid JSON. Every string of the result is a copy:
// nothing refers to the request's buffers.
func BuildParams(query []Param, contentType string, body []byte, maxChars int) string {
	var q, b []byte
	if len(query) > 0 {
		q = paramsJSON(query)
	}
	var bodyIsNote bool
	if len(bytes.TrimSpace(body)) > 0 {
		b, bodyIsNote = bodyJSON(contentType, body)
	}
	var out []byte
	switch {
	case q == nil && b == nil:
		return ""
	case b == nil:
		out = q
	case q == nil && !bodyIsNote:
		out = b
	case q == nil:
		out = append(append([]byte(`{"_body":`), b...), '}')
	default:
		out = append(out, '{')
		if q != nil {
			out = append(out, `"_query":`...)
			out = append(out, q...)
			out = append(out, ',')
		}
		out = append(out, `"_body":`...)
		out = append(out, b...)
		out = append(out, '}')
	}
	return Cut(string(out), maxChars)
}

// paramsJSON writes parameters as an object in first-seen order; a repeated
// name becomes an array.
func paramsJSON(ps []Param) []byte {
	var keys []string
	vals := make(map[string][]string, len(ps))
	for _, p := range ps {
		if _, ok := vals[p.Key]; !ok {
			keys = append(keys, p.Key)
		}
		v := p.Value
		if Sensitive(p.Key) {
			v = Masked
		}
		vals[p.Key] = append(vals[p.Key], v)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(&b, k)
		b.WriteByte(':')
		vs := vals[k]
		if len(vs) == 1 {
			writeString(&b, vs[0])
			continue
		}
		b.WriteByte('[')
		for j, v := range vs {
			if j > 0 {
				b.WriteByte(',')
			}
			writeString(&b, v)
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.Bytes()
}

// bodyJSON returns the stored form of a body and whether it is only a note
// (a JSON string such as "<12 bytes, not JSON>").
func bodyJSON(contentType string, body []byte) ([]byte, bool) {
	mt, _, _ := mime.ParseMediaType(contentType)
	mt = strings.ToLower(mt)
	switch {
	case mt == "application/x-www-form-urlencoded":
		if ps, ok := parseForm(body); ok {
			return paramsJSON(ps), false
		}
	case strings.HasPrefix(mt, "multipart/"):
		return note(len(body), mt), true
	default:
		if out, err := RedactJSON(body); err == nil {
			return out, false
		}
	}
	return note(len(body), "not JSON"), true
}

func note(n int, what string) []byte {
	var b bytes.Buffer
	writeString(&b, "<"+strconv.Itoa(n)+" bytes, "+what+">")
	return b.Bytes()
}

func parseForm(body []byte) ([]Param, bool) {
	var out []Param
	for _, pair := range strings.Split(string(body), "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return nil, false
		}
		out = append(out, Param{Key: k, Value: v})
	}
	return out, true
}

// errNotJSON: the input is not one JSON value.
var errNotJSON = errors.New("not a single JSON value")

// RedactJSON rewrites one JSON value compactly, keeping the order of keys and
// the text of numbers, with the value of every object key that is a
// sensitive name (at any depth) replaced by "***". Input that is not exactly
// one valid JSON value is an error.
func RedactJSON(in []byte) ([]byte, error) {
	if !json.Valid(in) {
		return nil, errNotJSON
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var b bytes.Buffer
	b.Grow(len(in))
	if err := redactValue(dec, &b); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errNotJSON
	}
	return b.Bytes(), nil
}

func redactValue(dec *json.Decoder, b *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	return redactToken(dec, b, tok)
}

func redactToken(dec *json.Decoder, b *bytes.Buffer, tok json.Token) error {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			b.WriteByte('{')
			first := true
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, ok := kt.(string)
				if !ok {
					return errNotJSON
				}
				if !first {
					b.WriteByte(',')
				}
				first = false
				writeString(b, key)
				b.WriteByte(':')
				if Sensitive(key) {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					writeString(b, Masked)
					continue
				}
				if err := redactValue(dec, b); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // '}'
				return err
			}
			b.WriteByte('}')
		case '[':
			b.WriteByte('[')
			first := true
			for dec.More() {
				if !first {
					b.WriteByte(',')
				}
				first = false
				if err := redactValue(dec, b); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return err
			}
			b.WriteByte(']')
		default:
			return errNotJSON
		}
	case string:
		writeString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case nil:
		b.WriteString("null")
	default:
		return errNotJSON
	}
	return nil
}

// Cut returns s unchanged when it has at most maxChars characters (runes).
// A longer s is replaced by a valid JSON object that keeps its opening and
// the original length:
//
//	{"_truncated":true,"_originalLength":20000,"_opening":"{\"name\":\"abc..."}
//
// sized so that the whole object has at most maxChars characters (when
// maxChars is too small even for the wrapper, the opening is empty).
func Cut(s string, maxChars int) string {
	n := utf8.RuneCountInString(s)
	if maxChars <= 0 || n <= maxChars {
		return s
	}
	head := `{"_truncated":true,"_originalLength":` + strconv.Itoa(n) + `,"_opening":"`
	const tail = `"}`
	budget := maxChars - len(head) - len(tail)
	var b bytes.Buffer
	b.Grow(len(head) + len(tail) + max(budget, 0)*2)
	b.WriteString(head)
	for _, r := range s {
		cost := escapedLen(r)
		if cost > budget {
			break
		}
		budget -= cost
		writeRune(&b, r)
	}
	b.WriteString(tail)
	return b.String()
}

// writeString writes s as a JSON string without HTML escaping; invalid
// UTF-8 becomes U+FFFD.
func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		writeRune(b, r)
	}
	b.WriteByte('"')
}

const hexDigits = "0123456789abcdef"

func writeRune(b *bytes.Buffer, r rune) {
	switch {
	case r == '"':
		b.WriteString(`\"`)
	case r == '\\':
		b.WriteString(`\\`)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\t':
		b.WriteString(`\t`)
	case r < 0x20 || r == '\u2028' || r == '\u2029':
		b.WriteString(`\u`)
		b.WriteByte(hexDigits[r>>12&0xF])
		b.WriteByte(hexDigits[r>>8&0xF])
		b.WriteByte(hexDigits[r>>4&0xF])
		b.WriteByte(hexDigits[r&0xF])
	default:
		b.WriteRune(r) // utf8.RuneError for invalid input: U+FFFD
	}
}

// escapedLen is the number of characters writeRune produces for r.
func escapedLen(r rune) int {
	switch {
	case r == '"', r == '\\', r == '\n', r == '\r', r == '\t':
		return 2
	case r < 0x20 || r == '\u2028' || r == '\u2029':
		return 6
	default:
		return 1
	}
}
