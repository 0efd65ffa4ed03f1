package tracing

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel"
	"google.golang.org/grpc/grpclog"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// OpenTelemetry's and gRPC's own lines reach the kernel's logger: with the
// JSON format every line is JSON, errors carry their message.
func TestLibraryLinesThroughTheKernelLog(t *testing.T) {
	out := &lockedBuffer{}
	RouteLibraryLog(hclog.New(&hclog.LoggerOptions{Output: out, JSONFormat: true, Name: "AdminKernel.Tracing"}))
	t.Cleanup(func() { RouteLibraryLog(nil) })
	InstallProcessLoggers()
	otel.Handle(errors.New("traces export: connection refused"))
	grpclog.Warningf("transport: %s", "closing")
	grpclog.Info("chatty informational line")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (the info line dropped):\n%s", len(lines), out)
	}
	want := []map[string]string{
		{"@level": "warn", "@message": "opentelemetry", "error": "traces export: connection refused"},
		{"@level": "warn", "@message": "grpc", "message": "transport: closing"},
	}
	for i, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		for k, v := range want[i] {
			if rec[k] != v {
				t.Errorf("line %d: %s = %v, want %q (%s)", i, k, rec[k], v, line)
			}
		}
	}
}
