package envelope_test

import (
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
)

// TestOKMatchesMarshal: the pre-encoded success envelope is byte for byte
// what json.Marshal gives for the Envelope, for every kind of data, also
// when pooled buffers are reused after large and failed answers.
func TestOKMatchesMarshal(t *testing.T) {
	type item struct {
		ID   int64     `json:"id,string"`
		Name string    `json:"name"`
		At   time.Time `json:"at"`
		Tags []string  `json:"tags,omitempty"`
	}
	at := time.Date(2026, 11, 21, 10, 0, 0, 123, time.UTC)
	cases := []struct {
		name string
		data any
	}{
		{"nil", nil},
		{"bool", true},
		{"number", 42},
		{"html is escaped", "<script>&\u2028</script>"},
		{"struct", item{ID: 1 << 60, Name: "超级管理员", At: at}},
		{"slice", []item{{ID: 1, At: at, Tags: []string{"a"}}, {ID: 2}}},
		{"map", map[string]any{"b": 1, "a": []int{}, "c": nil}},
		{"large", strings.Repeat("x", 200<<10)},
		{"small after large", "y"},
	}
	var mu sync.Mutex
	var current any
	app := fiber.New()
	app.Get("/", func(c fiber.Ctx) error {
		mu.Lock()
		data := current
		mu.Unlock()
		return envelope.OK(c, data)
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			current = tc.data
			mu.Unlock()
			resp, err := app.Test(httptest.NewRequest("GET", "/", nil))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			want, err := json.Marshal(envelope.Envelope{Code: errcode.Success, MsgKey: envelope.SuccessKey, Data: tc.data})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("body\n%.300s\nwant\n%.300s", got, want)
			}
			if ct := resp.Header.Get(fiber.HeaderContentType); ct != fiber.MIMEApplicationJSONCharsetUTF8 {
				t.Errorf("Content-Type = %q", ct)
			}
			if resp.StatusCode != 200 {
				t.Errorf("status %d", resp.StatusCode)
			}
		})
	}
}

// TestOKUnencodable: data json cannot encode is the handler's error (the
// central handler answers 500 / 50000), with no partial success body.
func TestOKUnencodable(t *testing.T) {
	var n atomic.Int32
	app := newApp(t, &n)
	app.Get("/chan", func(c fiber.Ctx) error { return envelope.OK(c, map[string]any{"ok": 1, "c": make(chan int)}) })
	resp, err := app.Test(httptest.NewRequest("GET", "/chan", nil))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var b body
	if err := json.Unmarshal(raw, &b); err != nil || resp.StatusCode != 500 || b.Code != int(errcode.SystemError) {
		t.Fatalf("status %d body %s (%v), want 500 / 50000", resp.StatusCode, raw, err)
	}
	if strings.Contains(string(raw), `"ok"`) {
		t.Fatalf("a partial success body leaked: %s", raw)
	}
	if n.Load() != 1 {
		t.Fatalf("unhandled recorded %d times, want 1", n.Load())
	}
}
