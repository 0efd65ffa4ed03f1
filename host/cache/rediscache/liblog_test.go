package rediscache

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestLibraryLogRoutedAsJSON: go-redis' lines go through the routed
// logger (JSON stays JSON), and the per-dial failure line is dropped.
func TestLibraryLogRoutedAsJSON(t *testing.T) {
	var buf bytes.Buffer
	RouteLibraryLog(hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true}))
	t.Cleanup(func() { RouteLibraryLog(nil) })
	l := ProcessLogger()
	ctx := context.Background()
	l.Printf(ctx, "redis: %s:%d: connection pool: %s", "127.0.0.1", 6379, "failed to dial after 5 attempts")
	l.Printf(ctx, "redis: discarding bad PubSub connection: %v", "EOF")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1 (the dial failure dropped):\n%s", len(lines), buf.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("not JSON: %q", lines[0])
	}
	if rec["message"] != "redis: discarding bad PubSub connection: EOF" || rec["@level"] != "warn" {
		t.Fatalf("line = %v", rec)
	}
}
