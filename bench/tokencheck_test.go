package bench_test

import (
	"context"
	"testing"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/token"
)

// BenchmarkTokenSessionCheck is the access-token check of every protected
// request on a cache hit, without Fiber: Bearer parsing, HS256
// verification and claim decoding (token.Issuer.Verify) and the session's
// active mark (session.Service.Active), against a real kernel's signing key
// and session. Verify and Active are also measured alone.
func BenchmarkTokenSessionCheck(b *testing.B) {
	for _, kind := range kernelKinds {
		b.Run(kind, func(b *testing.B) {
			k := startKernel(b, kind)
			header := "Bearer " + login(b, k, "superAdmin", adminPassword)
			iss, err := token.FromConfig(k.Config())
			if err != nil {
				b.Fatal(err)
			}
			sessions := k.Sessions()
			ctx := context.Background()
			raw, ok := authn.BearerToken(header)
			if !ok {
				b.Fatal("no bearer token")
			}
			claims, err := iss.Verify(raw)
			if err != nil {
				b.Fatal(err)
			}
			if active, err := sessions.Active(ctx, claims.SessionID); err != nil || !active {
				b.Fatalf("Active = %v, %v", active, err)
			}
			b.Run("Verify+Active", func(b *testing.B) {
				b.ReportAllocs()
				report := cpuPerOp(b)
				for b.Loop() {
					raw, ok := authn.BearerToken(header)
					if !ok {
						b.Fatal("no bearer token")
					}
					c, err := iss.Verify(raw)
					if err != nil {
						b.Fatal(err)
					}
					if active, err := sessions.Active(ctx, c.SessionID); err != nil || !active {
						b.Fatalf("Active = %v, %v", active, err)
					}
				}
				report()
			})
			b.Run("Verify", func(b *testing.B) {
				b.ReportAllocs()
				report := cpuPerOp(b)
				for b.Loop() {
					if _, err := iss.Verify(raw); err != nil {
						b.Fatal(err)
					}
				}
				report()
			})
			b.Run("Active", func(b *testing.B) {
				b.ReportAllocs()
				report := cpuPerOp(b)
				for b.Loop() {
					if active, err := sessions.Active(ctx, claims.SessionID); err != nil || !active {
						b.Fatalf("Active = %v, %v", active, err)
					}
				}
				report()
			})
		})
	}
}
