package oplog_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adminkernel/kernel/host/oplog"
)

func TestRedactJSONMasksSensitiveKeysAtAnyDepth(t *testing.T) {
	in := `{"password":"p","nested":{"apiKey":"k","keep":"v"},"account":"alice",` +
		`"list":[{"Token":"t","n":1.50},{"deep":{"X-Api_Key":[1,2]}}],"headers":{"a":"b"},"ok":true,"none":null}`
	got, err := oplog.RedactJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"password":"***","nested":{"apiKey":"***","keep":"v"},"account":"alice",` +
		`"list":[{"Token":"***","n":1.50},{"deep":{"X-Api_Key":"***"}}],"headers":"***","ok":true,"none":null}`
	if string(got) != want {
		t.Fatalf("RedactJSON =\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{``, `{`, `{"a":1}x`, `{"a":1} {"b":2}`, `nope`} {
		if _, err := oplog.RedactJSON([]byte(bad)); err == nil {
			t.Errorf("RedactJSON(%q) accepted invalid input", bad)
		}
	}
}

func TestBuildParamsAcceptanceExample(t *testing.T) {
	got := oplog.BuildParams(nil, "application/json", []byte(`{"password":"p","nested":{"apiKey":"k"},"name":"n"}`), 8192)
	if got != `{"password":"***","nested":{"apiKey":"***"},"name":"n"}` {
		t.Fatalf("BuildParams = %s", got)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatal(err)
	}
	if v["password"] != "***" || v["nested"].(map[string]any)["apiKey"] != "***" || v["name"] != "n" {
		t.Fatalf("decoded %v", v)
	}
}

func TestBuildParamsShapes(t *testing.T) {
	q := []oplog.Param{{"Current", "1"}, {"access_token", "abc"}, {"id", "1"}, {"id", "2"}}
	tests := []struct {
		name        string
		query       []oplog.Param
		contentType string
		body        string
		want        string
	}{
		{"nothing", nil, "application/json", "  ", ""},
		{"query only", q, "", "", `{"Current":"1","access_token":"***","id":["1","2"]}`},
		{"query and body", q[:2], "application/json", `{"pwd":"x","a":[1]}`,
			`{"_query":{"Current":"1","access_token":"***"},"_body":{"pwd":"***","a":[1]}}`},
		{"not JSON", nil, "text/plain", "hello password=secret", `{"_body":"<21 bytes, not JSON>"}`},
		{"not JSON with query", q[:1], "application/octet-stream", "\x00\x01", `{"_query":{"Current":"1"},"_body":"<2 bytes, not JSON>"}`},
		{"multipart", nil, "multipart/form-data; boundary=x", "--x\r\n...", `{"_body":"<8 bytes, multipart/form-data>"}`},
		{"form", nil, "application/x-www-form-urlencoded", "user=a&Password=s%20t&x=%3C", `{"user":"a","Password":"***","x":"<"}`},
		{"JSON without content type", nil, "", `[{"secretCode":1}]`, `[{"secretCode":"***"}]`},
		{"broken JSON", nil, "application/json", `{"password":"p"`, `{"_body":"<15 bytes, not JSON>"}`},
	}
	for _, tt := range tests {
		got := oplog.BuildParams(tt.query, tt.contentType, []byte(tt.body), 8192)
		if got != tt.want {
			t.Errorf("%s: BuildParams = %s, want %s", tt.name, got, tt.want)
		}
		if got != "" && !json.Valid([]byte(got)) {
			t.Errorf("%s: not valid JSON: %s", tt.name, got)
		}
		if strings.Contains(got, "secret") && tt.name != "JSON without content type" {
			t.Errorf("%s: a secret value is stored: %s", tt.name, got)
		}
	}
}

func TestLongInputIsCutAnnotatedAndStaysValidJSON(t *testing.T) {
	text, _ := json.Marshal(strings.Repeat(`a"b\c`, 4000))
	body := `{"password":"p","text":` + string(text) + `}`
	full := oplog.BuildParams(nil, "application/json", []byte(body), 1<<20)
	if utf8.RuneCountInString(full) < 20000 {
		t.Fatalf("test input too short: %d", len(full))
	}
	const limit = 8192
	got := oplog.BuildParams(nil, "application/json", []byte(body), limit)
	if !json.Valid([]byte(got)) {
		t.Fatalf("cut input is not valid JSON: %.200s", got)
	}
	if n := utf8.RuneCountInString(got); n > limit {
		t.Errorf("cut input has %d characters, limit %d", n, limit)
	}
	var v struct {
		Truncated      bool   `json:"_truncated"`
		OriginalLength int    `json:"_originalLength"`
		Opening        string `json:"_opening"`
	}
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Fatal(err)
	}
	if !v.Truncated || v.OriginalLength != utf8.RuneCountInString(full) {
		t.Errorf("annotation = %+v, original length %d", v, utf8.RuneCountInString(full))
	}
	if !strings.HasPrefix(full, v.Opening) || len(v.Opening) < limit/3 {
		t.Errorf("opening (%d chars) is not a long prefix of the input", len(v.Opening))
	}
	if !strings.HasPrefix(v.Opening, `{"password":"***"`) {
		t.Errorf("the opening is not redacted: %.60s", v.Opening)
	}
}

func TestCut(t *testing.T) {
	s := strings.Repeat("é", 20000)
	got := oplog.Cut(s, 100)
	if !json.Valid([]byte(got)) || utf8.RuneCountInString(got) > 100 {
		t.Fatalf("Cut = %s", got)
	}
	if oplog.Cut("short", 100) != "short" {
		t.Error("short input changed")
	}
	// A limit below the wrapper's own size still gives valid JSON.
	if got := oplog.Cut(strings.Repeat("x", 50), 10); !json.Valid([]byte(got)) || !strings.Contains(got, `"_opening":""`) {
		t.Errorf("tiny limit: %s", got)
	}
	// Control characters and line separators are escaped within budget.
	got = oplog.Cut(strings.Repeat("\x01\u2028\n", 100), 80)
	if !json.Valid([]byte(got)) || utf8.RuneCountInString(got) > 80 {
		t.Errorf("escapes: %s", got)
	}
}

func TestSensitiveNames(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"password", true}, {"refreshToken", true}, {"clientSecret", true},
		{"pendingLink", true}, {"PendingLink", true}, {"ticket", true}, {"loginTicket", true},
		{"bindTicket", true}, {"bindingVerifier", true}, {"bindingChallenge", false},
		{"account", false}, {"name", false}, {"provider", false}, {"pending", false},
	}
	for _, tt := range tests {
		if got := oplog.Sensitive(tt.name); got != tt.want {
			t.Errorf("Sensitive(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	got := oplog.BuildParams([]oplog.Param{{"pendingLink", "pl-secret"}}, "application/json", []byte(`{"pendingLink":"pl-secret","ticket":"tk-secret"}`), 8192)
	if want := `{"_query":{"pendingLink":"***"},"_body":{"pendingLink":"***","ticket":"***"}}`; got != want {
		t.Fatalf("BuildParams = %s, want %s", got, want)
	}
}
