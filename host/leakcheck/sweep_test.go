package leakcheck_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/leakcheck"
)

// recorder captures what Sweep reports instead of failing the test.
type recorder struct {
	*testing.T
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, format)
	_ = args
}

func (r *recorder) Helper() {}

type fakeTarget struct {
	log string
	ent *ent.Client
}

func (f fakeTarget) Log() string      { return f.log }
func (f fakeTarget) Ent() *ent.Client { return f.ent }

// TestSweepFindsLeaks: each kind of leak in each place is reported, and a
// clean kernel gives no report.
func TestSweepFindsLeaks(t *testing.T) {
	k := kerneltest.Start(t, nil)
	ctx := context.Background()
	const (
		secret = "Sw-Secret-9Kq2"
		jwt    = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIiwic2lkIjoieCJ9.c2lnbmF0dXJlc2lnbmF0dXJlc2ln"
	)
	refresh := strings.Repeat("aZ0_-", 17) + "q" // 86 base64url characters

	if r := (&recorder{T: t}); leakcheck.Sweep(r, k, leakcheck.Check{Secrets: []string{kerneltest.AdminPassword, secret}}) < 1 || len(r.errs) != 0 {
		t.Fatalf("a clean kernel: %d reports %v", len(r.errs), r.errs)
	}

	tests := []struct {
		name  string
		log   string
		op    string
		stack string
		check leakcheck.Check
		want  int
	}{
		{"literal in the log", "x " + secret + " y", "", "", leakcheck.Check{Secrets: []string{secret}}, 1},
		{"JWT in the log", "Bearer " + jwt, "", "", leakcheck.Check{}, 1},
		{"refresh token in the log", `refreshToken="` + refresh + `"`, "", "", leakcheck.Check{}, 1},
		{"shapes off", "Bearer " + jwt + " " + refresh, "", "", leakcheck.Check{NoShapes: true}, 0},
		{"literal in an op-log row", "", `{"x":"` + secret + `"}`, "", leakcheck.Check{Secrets: []string{secret}}, 1},
		{"JWT in an exception stack", "", "", "at handler(" + jwt + ")", leakcheck.Check{}, 1},
		{"43-character ids are not refresh tokens", strings.Repeat("a", 43), "", "", leakcheck.Check{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := k.Ent()
			c.SysOpLog.Delete().ExecX(ctx)
			c.SysExceptionLog.Delete().ExecX(ctx)
			if tt.op != "" {
				c.SysOpLog.Create().SetCreateTime(time.Now()).SetTitle("t").SetHTTPMethod("POST").SetPath("/x").
					SetParamJSON(tt.op).SetResultCode(0).SetSuccess(true).SetElapsedMs(1).ExecX(ctx)
			}
			if tt.stack != "" {
				c.SysExceptionLog.Create().SetHTTPMethod("GET").SetPath("/y").SetExceptionType("E").SetStackTrace(tt.stack).ExecX(ctx)
			}
			r := &recorder{T: t}
			leakcheck.Sweep(r, fakeTarget{log: tt.log, ent: c}, tt.check)
			if len(r.errs) != tt.want {
				t.Errorf("%d reports, want %d: %v", len(r.errs), tt.want, r.errs)
			}
		})
	}
}
