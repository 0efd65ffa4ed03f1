// Package vendorhttp is the plain-HTTP plumbing shared by the vendor
// provider plugins: a client with timeouts that never follows redirects and
// caps response bodies, a call helper that reads a bounded body and strips
// URLs (which carry secrets and codes in their queries) from transport
// errors, a JSON decoder that ignores the Content-Type, and settings helpers
// (case-insensitive keys, host overrides).
//
// It imports only the standard library, pluginsdk and the OpenTelemetry
// API (TracingTransport; the exporters are set up by pluginsdk/serve).
package vendorhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/adminkernel/kernel/pluginsdk"
)

// MaxBodyBytes caps every response body read from a vendor.
const MaxBodyBytes = 1 << 20

// DefaultTimeout bounds each outbound call (connect, headers and body).
const DefaultTimeout = 10 * time.Second

// ErrBodyTooLarge is returned when a vendor's response body exceeds
// MaxBodyBytes.
var ErrBodyTooLarge = errors.New("vendor response exceeds the size limit")

// NewClient returns the client used to talk to a vendor: a total timeout per
// call, redirects never followed (the redirect answer itself is returned and
// then fails as an unexpected status), and response bodies capped at
// MaxBodyBytes.
func NewClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = timeout
	tr.TLSHandshakeTimeout = min(timeout, tr.TLSHandshakeTimeout)
	return &http.Client{
		Timeout:   timeout,
		Transport: TracingTransport(tr), // a vendor call is a span of the host's trace
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Response is a vendor answer with its body read in full.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// OK reports a 2xx status.
func (r *Response) OK() bool { return r.Status >= 200 && r.Status < 300 }

// Describe is a short, secret-free description of an unexpected answer for
// ProviderError messages: the status and, for redirects, that it was not
// followed.
func (r *Response) Describe() string {
	if r.Status >= 300 && r.Status < 400 {
		return fmt.Sprintf("HTTP %d (redirect not followed)", r.Status)
	}
	return fmt.Sprintf("HTTP %d", r.Status)
}

// TransportError is a call that produced no usable HTTP answer: the vendor
// could not be reached, a deadline passed or the connection broke. Its
// message names the method and the URL path only (never the query, which
// may carry secrets, tokens or codes).
type TransportError struct {
	Method string
	Path   string
	Err    error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Method, e.Path, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// Do sends req with client and reads the whole body, at most MaxBodyBytes.
//
// A body over the cap yields ErrBodyTooLarge (a vendor answer, not transport
// trouble: callers report it as a domain failure). Any other failure is a
// *TransportError without the URL's query.
func Do(client *http.Client, req *http.Request) (*Response, error) {
	resp, err := client.Do(req) //nolint:gosec // vendor hosts come from the operator's settings
	if err != nil {
		return nil, transportError(req, err)
	}
	defer resp.Body.Close()
	if resp.ContentLength > MaxBodyBytes {
		return nil, ErrBodyTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, transportError(req, err)
	}
	if len(body) > MaxBodyBytes {
		return nil, ErrBodyTooLarge
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

func transportError(req *http.Request, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &TransportError{Method: req.Method, Path: req.URL.Path, Err: err}
}

// Get is Do for a GET of base+path with the query q (q is encoded by
// url.Values, so sorted; vendors' API calls do not depend on order).
func Get(ctx context.Context, client *http.Client, base, path string, q url.Values, header http.Header) (*Response, error) {
	u := base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	return Do(client, req)
}

// Post is Do for a POST of body with contentType to base+path.
func Post(ctx context.Context, client *http.Client, base, path, contentType string, body []byte, header http.Header) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", path, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", contentType)
	return Do(client, req)
}

// DecodeJSON decodes a JSON object from body whatever the Content-Type was
// (WeChat answers JSON as text/plain). A UTF-8 byte-order mark and
// surrounding white space are tolerated; anything but one JSON object is an
// error.
func DecodeJSON(body []byte, v any) error {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return errors.New("the answer is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return errors.New("the answer is not valid JSON")
	}
	if dec.More() {
		return errors.New("the answer has trailing data after the JSON object")
	}
	return nil
}

// Setting returns the value of key in s, matching keys case-insensitively
// and trimming white space; ok is false when the key is absent.
func Setting(s pluginsdk.Settings, key string) (v string, ok bool) {
	if v, ok := s[key]; ok {
		return strings.TrimSpace(v), true
	}
	for k, v := range s {
		if strings.EqualFold(k, key) {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// First returns the first non-empty value among keys (aliases).
func First(s pluginsdk.Settings, keys ...string) string {
	for _, k := range keys {
		if v, _ := Setting(s, k); v != "" {
			return v
		}
	}
	return ""
}

// Base returns the host override named key (an absolute http or https URL
// without query or fragment, trailing slashes removed), or def when the key
// is absent or empty.
func Base(s pluginsdk.Settings, key, def string) (string, error) {
	v, _ := Setting(s, key)
	if v == "" {
		return def, nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%s %q must be an absolute http or https URL without query, fragment or user info", key, v)
	}
	return strings.TrimRight(v, "/"), nil
}

// Bool reads an optional boolean setting (true/false/1/0, any case).
func Bool(s pluginsdk.Settings, key string, def bool) (bool, error) {
	v, _ := Setting(s, key)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s %q is not a boolean", key, v)
	}
	return b, nil
}

// Misconfigured returns a Configure error: a *pluginsdk.ProviderError of
// kind Misconfigured.
func Misconfigured(code, format string, args ...any) error {
	return &pluginsdk.ProviderError{Kind: pluginsdk.Misconfigured, Message: code + ": " + fmt.Sprintf(format, args...)}
}

// ValidState reports whether state is what every vendor accepts: letters
// and digits only, 1 to 128 bytes.
func ValidState(state string) bool {
	if state == "" || len(state) > 128 {
		return false
	}
	for i := 0; i < len(state); i++ {
		c := state[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum {
			return false
		}
	}
	return true
}

// ValidRedirect reports whether uri is an absolute http or https URL.
func ValidRedirect(uri string) bool {
	u, err := url.Parse(uri)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Fragment == ""
}

// ValidCode reports whether a callback code is plausible: 1 to max bytes
// of printable ASCII.
func ValidCode(code string, max int) bool {
	if code == "" || len(code) > max {
		return false
	}
	for i := 0; i < len(code); i++ {
		if code[i] <= ' ' || code[i] >= 0x7f {
			return false
		}
	}
	return true
}

// ValidSubject reports whether a vendor identifier can be a subject: 1 to
// 256 bytes of valid UTF-8 without control characters or surrounding space.
func ValidSubject(s string) bool {
	return s != "" && len(s) <= 256 && utf8.ValidString(s) && strings.TrimSpace(s) == s &&
		!strings.ContainsFunc(s, unicode.IsControl)
}

// Clean makes a vendor-supplied text safe for a ProviderError message or a
// log line: every secret (token, code, client secret) is replaced by ***,
// control characters are dropped and the result is clipped to n bytes.
func Clean(s string, n int, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Fail returns a domain failure as an error value (a *pluginsdk.ProviderError)
// so internal helpers can return one error and Finish can sort it out.
func Fail(kind pluginsdk.ErrorKind, format string, args ...any) error {
	return &pluginsdk.ProviderError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Finish turns the outcome of an exchange into Exchange's results: an
// identity; a *pluginsdk.ProviderError (anywhere in err's chain) as a domain
// failure; a body over the cap as an ExchangeFailed failure; anything else as
// transport trouble, prefixed with the provider code.
func Finish(code string, id pluginsdk.Identity, err error) (pluginsdk.ExchangeResponse, error) {
	var pe *pluginsdk.ProviderError
	switch {
	case err == nil:
		return pluginsdk.Succeed(id), nil
	case errors.As(err, &pe):
		return pluginsdk.ExchangeResponse{Error: pe}, nil
	case errors.Is(err, ErrBodyTooLarge):
		return pluginsdk.Fail(pluginsdk.ExchangeFailed, "the vendor's answer exceeds %d bytes", MaxBodyBytes), nil
	default:
		return pluginsdk.ExchangeResponse{}, fmt.Errorf("%s: %w", code, err)
	}
}
