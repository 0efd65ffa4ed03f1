package host

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/envelope"
)

func TestRequestIDs(t *testing.T) {
	a, b := newRequestIDs(), newRequestIDs()
	if a.prefix == b.prefix {
		t.Fatal("two processes' generators share a prefix")
	}
	shape := regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-z]+$`)
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				id := string(a.appendNext(nil))
				mu.Lock()
				dup := seen[id]
				seen[id] = true
				mu.Unlock()
				if dup || !shape.MatchString(id) {
					t.Errorf("id %q: duplicate %v or not of the expected shape", id, dup)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != 4000 {
		t.Fatalf("%d distinct ids, want 4000", len(seen))
	}
}

func TestRequestIDMiddleware(t *testing.T) {
	app := fiber.New()
	app.Use(newRequestIDs().middleware())
	var seen string
	app.Get("/", func(c fiber.Ctx) error {
		seen = envelope.TraceID(c)
		return c.SendStatus(fiber.StatusNoContent)
	})
	generated := regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-z]+$`)
	long := strings.Repeat("a", MaxRequestIDLen)
	tests := []struct {
		name, in string
		keep     bool
	}{
		{"none", "", false},
		{"caller's id", "trace-42 from the gateway", true},
		{"longest kept", long, true},
		{"too long", long + "a", false},
		{"tab", "abc\tdef", false},
		{"non-ASCII", "trace-\xc3\xa9", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(fiber.MethodGet, "/", nil)
			if tt.in != "" {
				req.Header.Set(fiber.HeaderXRequestID, tt.in)
			}
			resp, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			got := resp.Header.Get(fiber.HeaderXRequestID)
			if got != seen {
				t.Errorf("handler saw %q, response carries %q", seen, got)
			}
			if tt.keep && got != tt.in {
				t.Errorf("X-Request-ID = %q, want the caller's %q", got, tt.in)
			}
			if !tt.keep && !generated.MatchString(got) {
				t.Errorf("X-Request-ID = %q, want a generated id", got)
			}
		})
	}
}
