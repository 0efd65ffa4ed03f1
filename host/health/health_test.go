package health_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/health"
	"github.com/adminkernel/kernel/host/internal/outage"
)

func TestReady(t *testing.T) {
	tr := outage.New(outage.Options{Name: "redis", Code: errcode.CacheUnavailable, Kind: errors.New("down")})
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	tests := []struct {
		name   string
		probe  func(context.Context) error
		status string
		kind   string
	}{
		{"up", func(context.Context) error { return nil }, health.Healthy, ""},
		{"outage names the driver error", func(context.Context) error {
			return fmt.Errorf("rediscache: ping: %w", tr.Failed(dial))
		}, health.Unhealthy, "dial tcp: connect: connection refused"},
		{"other error: its message, not its type", func(context.Context) error {
			return fmt.Errorf("database: ping: %w", errors.New("server closed the connection"))
		}, health.Unhealthy, "database: ping: server closed the connection"},
		{"credentials masked", func(context.Context) error {
			return errors.New("open host=db password=secret sslmode=x: refused; postgres://app:hunter2@db:5432/x")
		}, health.Unhealthy, "open host=db password=*** sslmode=x: refused; postgres://***@db:5432/x"},
		{"timeout", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, health.Unhealthy, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := health.Ready(context.Background(), []health.Check{{Name: "db", Probe: func(context.Context) error { return nil }}, {Name: "cache", Probe: tt.probe}}, 50*time.Millisecond)
			if rep.Status != tt.status || rep.Checks[1].Status != tt.status || rep.Checks[1].Error != tt.kind {
				t.Fatalf("report %+v, want %s with error %q", rep, tt.status, tt.kind)
			}
			if rep.Checks[0].Status != health.Healthy {
				t.Fatalf("db check %+v", rep.Checks[0])
			}
		})
	}
}
