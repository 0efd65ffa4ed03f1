package compat_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/xuri/excelize/v2"

	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// fixtureFile is one fixtures/NN-area.json.
type fixtureFile struct {
	Area     string    `json:"area"`
	About    string    `json:"about"`
	Fixtures []fixture `json:"fixtures"`

	name string
}

// fixture is one request and what the contract promises for it. See
// fixtures/README.md for every field.
type fixture struct {
	Op        string            `json:"op"`   // "METHOD /template" of ui-operations.txt
	Step      string            `json:"step"` // a helper step the UI does not call (no op)
	Name      string            `json:"name"`
	Do        string            `json:"do"` // "" = http; "open", "idp-login"
	URL       string            `json:"url"`
	User      string            `json:"user"`
	Path      string            `json:"path"`
	Query     map[string]any    `json:"query"`
	Auth      string            `json:"auth"`
	Headers   map[string]string `json:"headers"`
	Body      json.RawMessage   `json:"body"`
	RawBody   *string           `json:"rawBody"`
	Multipart []part            `json:"multipart"`
	Reauth    bool              `json:"reauth"`
	Expect    expectation       `json:"expect"`
	Save      map[string]string `json:"save"`
	Deviation *deviation        `json:"deviation"`
	Pending   string            `json:"pending"`
	// Open names an undocumented mismatch between the kernel and the
	// contract that is not fixed yet: the fixture still runs and is
	// expected to fail (counted and printed as open); a fixture marked
	// open that passes fails, so the mark goes once the mismatch is gone.
	Open string `json:"open"`
}

// part is one multipart field: a value, or a file with its content.
type part struct {
	Name    string     `json:"name"`
	Value   string     `json:"value"`
	File    string     `json:"file"`
	Content string     `json:"content"` // "base64:…", "text:…"
	XLSX    [][]string `json:"xlsx"`    // a one-sheet workbook with these rows
}

type expectation struct {
	Status      int             `json:"status"`
	Code        *int            `json:"code"`
	Data        json.RawMessage `json:"data"`
	Args        json.RawMessage `json:"args"`
	Empty       bool            `json:"empty"`          // HTTP 200 with an empty body
	Binary      string          `json:"binary"`         // a raw stream of this content type, no envelope
	Location    map[string]any  `json:"location"`       // a redirect: query parameters with shapes
	LocationPfx string          `json:"locationPrefix"` // a redirect whose target starts with this
}

// deviation marks a fixture that follows a deviation docs/reference/compatibility.md
// documents instead of the contract.
type deviation struct {
	Anchor string `json:"anchor"` // docs/reference/compatibility.md#heading
	Row    string `json:"row"`    // the topic of the table row
	Note   string `json:"note"`
}

// runner runs fixtures in order against one kernel, with one cookie jar
// (one browser) and the variables earlier fixtures saved.
type runner struct {
	t       *testing.T
	k       *kerneltest.Kernel
	is      *oidctest.Issuer
	vars    map[string]any
	cookies map[string]string
}

// result is the outcome of one fixture.
type result struct {
	f        fixture
	file     string
	problems []string
	skipped  string
	totpOn   bool // sys.security.totp.enabled when the fixture ran
}

func (r result) label() string {
	what := r.f.Op
	if what == "" {
		what = "step: " + r.f.Step
	}
	if r.f.Name != "" {
		what += " (" + r.f.Name + ")"
	}
	return r.file + ": " + what
}

// loadFixtures reads fixtures/*.json in name order.
func loadFixtures(t *testing.T) []fixtureFile {
	t.Helper()
	loadShapes(t)
	names, err := filepath.Glob(filepath.Join("fixtures", "[0-9][0-9]-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var out []fixtureFile
	for _, n := range names {
		raw, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var ff fixtureFile
		if err := dec.Decode(&ff); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		ff.name = filepath.Base(n)
		out = append(out, ff)
	}
	return out
}

// namedShapes are the shapes of fixtures/shapes.json, referred to as
// "#Name" (or "#Name?") from any fixture.
var namedShapes map[string]any

func loadShapes(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("fixtures", "shapes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		About  string          `json:"about"`
		Shapes json.RawMessage `json:"shapes"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("shapes.json: %v", err)
	}
	m, ok := decodeShape(doc.Shapes).(map[string]any)
	if !ok {
		t.Fatal("shapes.json: shapes is not an object")
	}
	namedShapes = m
}

// loadUIOperations reads fixtures/ui-operations.txt.
func loadUIOperations(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("fixtures", "ui-operations.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var ops []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(strings.Fields(line)) != 2 {
			t.Fatalf("ui-operations.txt: %q is not METHOD PATH", line)
		}
		if seen[line] {
			t.Fatalf("ui-operations.txt: %q twice", line)
		}
		seen[line] = true
		ops = append(ops, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ops
}

var refPattern = regexp.MustCompile(`\$\{([^}]+)\}`)

// value resolves one reference: a saved variable, or a generator
// ($sms: the last SMS code the development sender logged; $totp:v and
// $totp+1:v: the TOTP code of the seed in v for this or the next step).
func (r *runner) value(name string) (any, error) {
	switch {
	case name == "$sms":
		all := smsCode.FindAllStringSubmatch(r.k.Log(), -1)
		if len(all) == 0 {
			return nil, errors.New("no SMS code in the kernel log")
		}
		return all[len(all)-1][1], nil
	case strings.HasPrefix(name, "$totp"):
		step, v, _ := strings.Cut(strings.TrimPrefix(name, "$totp"), ":")
		seed, ok := r.vars[v].(string)
		if !ok {
			return nil, fmt.Errorf("no TOTP seed in %q", v)
		}
		at := time.Now()
		if step != "" {
			n, err := strconv.Atoi(step)
			if err != nil {
				return nil, fmt.Errorf("TOTP step %q", step)
			}
			at = at.Add(time.Duration(n) * 30 * time.Second)
		}
		return totp.GenerateCodeCustom(seed, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	}
	v, ok := r.vars[name]
	if !ok {
		return nil, fmt.Errorf("variable %q is not set (an earlier fixture failed or was skipped)", name)
	}
	return v, nil
}

var smsCode = regexp.MustCompile(`code=(\d{6})`)

// subst replaces the references in s: a string that is one reference
// becomes the variable's JSON value (a number stays a number).
func (r *runner) subst(v any) (any, error) {
	switch x := v.(type) {
	case string:
		if m := refPattern.FindStringSubmatch(x); m != nil && m[0] == x {
			return r.value(m[1])
		}
		var err error
		out := refPattern.ReplaceAllStringFunc(x, func(ref string) string {
			val, e := r.value(ref[2 : len(ref)-1])
			if e != nil {
				err = e
				return ""
			}
			return plain(val)
		})
		return out, err
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			s, err := r.subst(e)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			s, err := r.subst(e)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	return v, nil
}

func (r *runner) substString(s string) (string, error) {
	v, err := r.subst(s)
	if err != nil {
		return "", err
	}
	return plain(v), nil
}

// plain writes a value into a path or a query: numbers without exponent.
func plain(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return ""
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// reply is one answer as the runner sees it.
type reply struct {
	status int
	header http.Header
	raw    []byte
	env    map[string]any // nil unless the body is a JSON object
}

// send issues the request with the jar's cookies and applies Set-Cookie.
func (r *runner) send(req *http.Request) (reply, error) {
	for n, v := range r.cookies {
		req.AddCookie(&http.Cookie{Name: n, Value: v}) //nolint:gosec // a request Cookie header carries names and values only
	}
	resp, err := r.k.App().Test(req, fiber.TestConfig{Timeout: 60 * time.Second})
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, line := range resp.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			return reply{}, fmt.Errorf("set-cookie %q: %w", line, err)
		}
		if c.MaxAge < 0 || c.Value == "" {
			delete(r.cookies, c.Name)
		} else {
			r.cookies[c.Name] = c.Value
		}
	}
	rep := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var m map[string]any
		if dec.Decode(&m) == nil {
			rep.env = m
		}
	}
	return rep, nil
}

// run runs one fixture and reports its problems.
func (r *runner) run(f fixture) []string {
	switch f.Do {
	case "idp-login":
		target, err := r.substString(f.URL)
		if err != nil {
			return []string{err.Error()}
		}
		cb := r.is.Login(r.t, target, f.User)
		for name, from := range f.Save {
			if from != "callback" {
				return []string{"idp-login saves only \"callback\""}
			}
			r.vars[name] = oidctest.Callback(cb)
		}
		return nil
	case "", "open":
	default:
		return []string{"unknown do " + f.Do}
	}
	req, err := r.request(f)
	if err != nil {
		return []string{err.Error()}
	}
	rep, err := r.send(req)
	if err != nil {
		return []string{err.Error()}
	}
	probs := r.check(f, rep)
	if len(probs) > 0 {
		return probs
	}
	for name, from := range f.Save {
		v, err := pick(rep, from)
		if err != nil {
			probs = append(probs, fmt.Sprintf("save %s from %s: %v", name, from, err))
			continue
		}
		r.vars[name] = v
	}
	return probs
}

// request builds the HTTP request of a fixture.
func (r *runner) request(f fixture) (*http.Request, error) {
	method, target := "GET", f.Path
	if f.Op != "" {
		m, tpl, _ := strings.Cut(f.Op, " ")
		method = m
		if target == "" {
			target = tpl
		}
	}
	if f.Do == "open" {
		u, err := r.substString(f.URL)
		if err != nil {
			return nil, err
		}
		pu, err := url.Parse(u)
		if err != nil {
			return nil, err
		}
		target = pu.RequestURI()
	} else {
		if strings.HasPrefix(f.Path, "GET ") || strings.HasPrefix(f.Path, "POST ") {
			method, target, _ = strings.Cut(f.Path, " ")
		}
		var err error
		if target, err = r.substString(target); err != nil {
			return nil, err
		}
		if strings.Contains(target, "{") {
			return nil, fmt.Errorf("path %s has an unfilled parameter", target)
		}
	}
	if len(f.Query) > 0 {
		q, err := r.subst(f.Query)
		if err != nil {
			return nil, err
		}
		vals := url.Values{}
		for k, v := range q.(map[string]any) {
			if list, ok := v.([]any); ok {
				for _, e := range list {
					vals.Add(k, plain(e))
				}
				continue
			}
			vals.Set(k, plain(v))
		}
		target += "?" + vals.Encode()
	}
	var body io.Reader
	contentType := ""
	switch {
	case f.RawBody != nil:
		body, contentType = strings.NewReader(*f.RawBody), "application/json"
	case len(f.Body) > 0:
		dec := json.NewDecoder(bytes.NewReader(f.Body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		v, err := r.subst(v)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		body, contentType = bytes.NewReader(raw), "application/json"
	case len(f.Multipart) > 0:
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for _, p := range f.Multipart {
			if p.File == "" {
				v, err := r.substString(p.Value)
				if err != nil {
					return nil, err
				}
				if err := w.WriteField(p.Name, v); err != nil {
					return nil, err
				}
				continue
			}
			content, err := fileContent(p)
			if err != nil {
				return nil, err
			}
			fw, err := w.CreateFormFile(p.Name, p.File)
			if err != nil {
				return nil, err
			}
			if _, err := fw.Write(content); err != nil {
				return nil, err
			}
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		body, contentType = &buf, w.FormDataContentType()
	}
	req := httptest.NewRequestWithContext(r.t.Context(), method, target, body)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (compat fixtures)")
	for k, v := range f.Headers {
		req.Header.Set(k, v)
	}
	switch f.Auth {
	case "", "anonymous":
	default:
		tok, ok := r.vars[f.Auth].(string)
		if !ok || tok == "" {
			return nil, fmt.Errorf("auth %q: no token saved under that name", f.Auth)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return req, nil
}

// fileContent is the bytes of a multipart file part.
func fileContent(p part) ([]byte, error) {
	if p.XLSX != nil {
		x := excelize.NewFile()
		defer func() { _ = x.Close() }()
		for i, row := range p.XLSX {
			for j, cell := range row {
				name, err := excelize.CoordinatesToCellName(j+1, i+1)
				if err != nil {
					return nil, err
				}
				if err := x.SetCellStr("Sheet1", name, cell); err != nil {
					return nil, err
				}
			}
		}
		var buf bytes.Buffer
		if err := x.Write(&buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	kind, v, _ := strings.Cut(p.Content, ":")
	switch kind {
	case "base64":
		return base64.StdEncoding.DecodeString(v)
	case "text":
		return []byte(v), nil
	}
	return nil, fmt.Errorf("file part %s: content %q is neither base64: nor text:", p.Name, p.Content)
}

// check compares a reply with the fixture's expectation.
func (r *runner) check(f fixture, rep reply) []string {
	e := f.Expect
	var probs []string
	want := e.Status
	if want == 0 {
		want = 200
	}
	if rep.status != want {
		probs = append(probs, fmt.Sprintf("HTTP %d, want %d (%s)", rep.status, want, clip(rep.raw)))
		return probs
	}
	switch {
	case e.Location != nil || e.LocationPfx != "":
		loc := rep.header.Get("Location")
		target, err := r.substString(e.LocationPfx)
		if err != nil {
			return []string{err.Error()}
		}
		if !strings.HasPrefix(loc, target) {
			probs = append(probs, fmt.Sprintf("Location %q, want a prefix %q", loc, target))
		}
		u, err := url.Parse(loc)
		if err != nil {
			return append(probs, "Location: "+err.Error())
		}
		for k, shape := range e.Location {
			got, present := u.Query()[k]
			var gv any
			if present {
				gv = got[0]
			}
			probs = append(probs, conform("location.query."+k, gv, present, shape)...)
		}
		return probs
	case e.Empty:
		if len(bytes.TrimSpace(rep.raw)) != 0 {
			probs = append(probs, fmt.Sprintf("body %s, want an empty body", clip(rep.raw)))
		}
		return probs
	case e.Binary != "":
		ct := rep.header.Get("Content-Type")
		if e.Binary != "*" && !strings.HasPrefix(ct, e.Binary) {
			probs = append(probs, fmt.Sprintf("Content-Type %q, want %q (%s)", ct, e.Binary, clip(rep.raw)))
		}
		if len(rep.raw) == 0 || rep.raw[0] == '{' {
			probs = append(probs, fmt.Sprintf("body %s, want a raw stream", clip(rep.raw)))
		}
		return probs
	}
	if rep.env == nil {
		return append(probs, fmt.Sprintf("body %s is not an envelope", clip(rep.raw)))
	}
	code := 0
	if e.Code != nil {
		code = *e.Code
	}
	gotCode, _ := rep.env["code"].(json.Number).Int64()
	if int(gotCode) != code {
		return append(probs, fmt.Sprintf("code %d, want %d (%s)", gotCode, code, clip(rep.raw)))
	}
	// The envelope itself (§1.1).
	probs = append(probs, conform("code", rep.env["code"], true, "int")...)
	msgKey, _ := rep.env["msgKey"].(string)
	if code == 0 && msgKey != "common.success" {
		probs = append(probs, fmt.Sprintf("msgKey %q, want common.success", msgKey))
	}
	if code != 0 && !strings.HasPrefix(msgKey, "error.") {
		probs = append(probs, fmt.Sprintf("msgKey %q, want an error.* key", msgKey))
	}
	if args, has := rep.env["args"]; code == 0 && has && args != nil {
		probs = append(probs, fmt.Sprintf("args %s on success, want null or none", plainJSON(args)))
	}
	if msg, _ := rep.env["message"].(string); code != 0 && msg == "" {
		probs = append(probs, "message missing on failure (it defaults to the msgKey, §1.1)")
	}
	data, hasData := rep.env["data"]
	if code != 0 {
		if hasData && data != nil {
			probs = append(probs, fmt.Sprintf("data %s on failure, want null", clip(rep.raw)))
		}
	} else if !hasData {
		probs = append(probs, "data missing")
	}
	for _, c := range []struct {
		field string
		shape json.RawMessage
	}{{"data", e.Data}, {"args", e.Args}} {
		if len(c.shape) == 0 {
			continue
		}
		shape, err := r.subst(decodeShape(c.shape))
		if err != nil {
			probs = append(probs, err.Error())
			continue
		}
		got, has := rep.env[c.field]
		probs = append(probs, conform(c.field, got, has, shape)...)
	}
	return probs
}

func decodeShape(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "invalid shape: " + err.Error()
	}
	return v
}

func clip(b []byte) string {
	const n = 300
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

var (
	entityTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?$`)
	offsetTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)$`)
)

// conform checks got (present or not) against a shape (fixtures/README.md,
// "Shapes") and names the field of every mismatch.
func conform(at string, got any, present bool, shape any) []string {
	switch s := shape.(type) {
	case string:
		typ, optional := strings.CutSuffix(s, "?")
		if name, ok := strings.CutPrefix(typ, "#"); ok {
			named, ok := namedShapes[name]
			if !ok {
				return []string{at + ": unknown named shape " + s}
			}
			if optional && (!present || got == nil) {
				return nil
			}
			return conform(at, got, present, named)
		}
		if !present {
			if optional {
				return nil
			}
			return []string{at + ": missing, want " + s}
		}
		if got == nil {
			if optional || typ == "null" || typ == "any" {
				return nil
			}
			return []string{at + ": null, want " + s}
		}
		if ok, why := isType(typ, got); !ok {
			return []string{fmt.Sprintf("%s: %s, want %s%s", at, describe(got), s, why)}
		}
		return nil
	case []any:
		if len(s) != 1 {
			return []string{at + ": an array shape holds one element shape"}
		}
		return conform(at, got, present, map[string]any{"$array": s[0]})
	case map[string]any:
		if !present || got == nil {
			if opt, _ := s["$optional"].(bool); opt {
				return nil
			}
			if !present {
				return []string{at + ": missing"}
			}
			return []string{at + ": null, want " + describeShape(s)}
		}
		if all, ok := s["$all"].([]any); ok {
			var out []string
			for _, one := range all {
				out = append(out, conform(at, got, present, one)...)
			}
			return out
		}
		if elem, ok := s["$contains"]; ok {
			list, ok := got.([]any)
			if !ok {
				return []string{fmt.Sprintf("%s: %s, want an array", at, describe(got))}
			}
			for _, e := range list {
				if len(conform(at, e, true, elem)) == 0 {
					return nil
				}
			}
			return []string{fmt.Sprintf("%s: no element matches %s", at, plainJSON(elem))}
		}
		if v, ok := s["$eq"]; ok {
			if !sameJSON(v, got) {
				return []string{fmt.Sprintf("%s: %s, want %s", at, plainJSON(got), plainJSON(v))}
			}
			return nil
		}
		if elem, ok := s["$page"]; ok {
			return conform(at, got, present, map[string]any{
				"current": "int", "size": "int", "total": "int", "pages": "int",
				"items": map[string]any{"$array": elem, "min": s["min"]},
			})
		}
		if elem, ok := s["$array"]; ok {
			list, ok := got.([]any)
			if !ok {
				return []string{fmt.Sprintf("%s: %s, want an array", at, describe(got))}
			}
			if n, ok := s["min"].(json.Number); ok {
				if m, _ := n.Int64(); int64(len(list)) < m {
					return []string{fmt.Sprintf("%s: %d elements, want at least %d", at, len(list), m)}
				}
			}
			var out []string
			for i, e := range list {
				out = append(out, conform(fmt.Sprintf("%s[%d]", at, i), e, true, elem)...)
				if len(out) > 5 {
					break
				}
			}
			return out
		}
		if elem, ok := s["$map"]; ok {
			obj, ok := got.(map[string]any)
			if !ok {
				return []string{fmt.Sprintf("%s: %s, want an object", at, describe(got))}
			}
			var out []string
			for k, v := range obj {
				out = append(out, conform(at+"."+k, v, true, elem)...)
			}
			return out
		}
		obj, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %s, want an object", at, describe(got))}
		}
		keys := make([]string, 0, len(s))
		for k := range s {
			if k != "$optional" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			v, has := obj[k]
			out = append(out, conform(at+"."+k, v, has, s[k])...)
		}
		return out
	}
	return []string{fmt.Sprintf("%s: bad shape %v", at, shape)}
}

func describeShape(s map[string]any) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// isType reports whether a present, non-null JSON value has the type.
func isType(typ string, v any) (bool, string) {
	switch typ {
	case "any":
		return true, ""
	case "null":
		return v == nil, ""
	case "string":
		_, ok := v.(string)
		return ok, ""
	case "bool":
		_, ok := v.(bool)
		return ok, ""
	case "number":
		_, ok := v.(json.Number)
		return ok, ""
	case "int", "int64":
		n, ok := v.(json.Number)
		if !ok {
			return false, ""
		}
		i, err := n.Int64()
		if err != nil {
			return false, " (not an integer)"
		}
		if typ == "int" && (i > math.MaxInt32 || i < math.MinInt32) {
			return false, " (beyond int32)"
		}
		if i > 1<<53 || i < -(1<<53) {
			return false, " (beyond 2^53)"
		}
		return true, ""
	case "object":
		_, ok := v.(map[string]any)
		return ok, ""
	case "array":
		_, ok := v.([]any)
		return ok, ""
	case "date-time":
		s, ok := v.(string)
		return ok && entityTime.MatchString(s), " (ISO-8601 without an offset, §1.2)"
	case "date-time-offset":
		s, ok := v.(string)
		return ok && offsetTime.MatchString(s), " (ISO-8601 with an offset, §1.2)"
	case "sha256":
		s, ok := v.(string)
		_, err := hex.DecodeString(s)
		return ok && len(s) == 64 && err == nil, ""
	}
	return false, " (unknown type " + typ + ")"
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", clip([]byte(x)))
	case bool:
		return fmt.Sprintf("bool %v", x)
	case json.Number:
		return "number " + x.String()
	case []any:
		return fmt.Sprintf("array of %d", len(x))
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func sameJSON(a, b any) bool {
	return plainJSON(a) == plainJSON(b)
}

func plainJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// pick reads a saved value out of a reply: "data.a.b", "data[0].id",
// "data.items[account=x].id" (the first element whose field equals x),
// "args.challengeId", "header.Name", "location" or "location.query.name".
func pick(rep reply, from string) (any, error) {
	switch {
	case strings.HasPrefix(from, "header."):
		return rep.header.Get(strings.TrimPrefix(from, "header.")), nil
	case from == "location":
		return rep.header.Get("Location"), nil
	case strings.HasPrefix(from, "location.query."):
		u, err := url.Parse(rep.header.Get("Location"))
		if err != nil {
			return nil, err
		}
		v := u.Query().Get(strings.TrimPrefix(from, "location.query."))
		if v == "" {
			return nil, fmt.Errorf("no %s in %s", from, u)
		}
		return v, nil
	case from == "sha256(raw)":
		sum := sha256.Sum256(rep.raw)
		return hex.EncodeToString(sum[:]), nil
	}
	if rep.env == nil {
		return nil, errors.New("the reply is not an envelope")
	}
	var cur any = rep.env
	for _, seg := range splitPath(from) {
		switch {
		case strings.HasPrefix(seg, "["):
			sel := seg[1 : len(seg)-1]
			list, ok := cur.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: not an array", seg)
			}
			if field, want, ok := strings.Cut(sel, "="); ok {
				var found any
				for _, e := range list {
					if m, ok := e.(map[string]any); ok && plain(m[field]) == want {
						found = e
						break
					}
				}
				if found == nil {
					return nil, fmt.Errorf("no element with %s", sel)
				}
				cur = found
				continue
			}
			i, err := strconv.Atoi(sel)
			if err != nil || i < 0 || i >= len(list) {
				return nil, fmt.Errorf("index %s out of %d elements", sel, len(list))
			}
			cur = list[i]
		default:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not an object", seg)
			}
			v, ok := m[seg]
			if !ok {
				return nil, fmt.Errorf("no field %s", seg)
			}
			cur = v
		}
	}
	return cur, nil
}

// splitPath splits "data.items[0].id" into data, items, [0], id.
func splitPath(p string) []string {
	var out []string
	for _, dot := range strings.Split(p, ".") {
		for dot != "" {
			i := strings.Index(dot, "[")
			switch {
			case i < 0:
				out = append(out, dot)
				dot = ""
			case i > 0:
				out = append(out, dot[:i])
				dot = dot[i:]
			default:
				j := strings.Index(dot, "]")
				if j < 0 {
					out = append(out, dot)
					dot = ""
					continue
				}
				out = append(out, dot[:j+1])
				dot = dot[j+1:]
			}
		}
	}
	return out
}
