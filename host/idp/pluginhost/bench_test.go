package pluginhost_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

// BenchmarkAuthorizeRoundTrip measures one AuthorizeURL call: the provider
// in process, the same provider over gRPC in process (the wire without a
// process boundary), and the plugin binary through the plugin host
// (supervised client, mutual TLS over a Unix socket, a separate process).
//
//	go test -run '^$' -bench AuthorizeRoundTrip -benchmem ./host/idp/pluginhost/
func BenchmarkAuthorizeRoundTrip(b *testing.B) {
	req := pluginsdk.AuthorizeRequest{
		State:               "benchmarkState0123456789",
		RedirectURI:         "https://kernel.example.test/api/v1/auth/external/alpha/callback",
		UserAgent:           "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
		Nonce:               "n0nce0123456789",
		CodeChallenge:       "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		CodeChallengeMethod: pluginsdk.CodeChallengeS256,
		Purpose:             pluginsdk.PurposeLogin,
	}
	configured := func(b *testing.B) *providertest.Fake {
		f := providertest.NewFake("alpha")
		if err := f.Configure(context.Background(), providertest.FakeSettings()); err != nil {
			b.Fatal(err)
		}
		return f
	}
	cases := []struct {
		name string
		new  func(b *testing.B) pluginsdk.Provider
	}{
		{"in-process", func(b *testing.B) pluginsdk.Provider { return configured(b) }},
		{"grpc-in-process", func(b *testing.B) pluginsdk.Provider { return providertest.InProcess(b, configured(b)) }},
		{"plugin", func(b *testing.B) pluginsdk.Provider {
			return provider(b, load(b, pluginDir(b, "alpha"), nil).reg, "alpha")
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			p := c.new(b)
			ctx := context.Background()
			b.ReportAllocs()
			// Each call is timed too, for the p50 and p99 the target is
			// stated in (ns/op is the mean).
			took := make([]time.Duration, 0, 1<<16)
			for b.Loop() {
				start := time.Now()
				if _, err := p.AuthorizeURL(ctx, req); err != nil {
					b.Fatal(err)
				}
				if len(took) < cap(took) {
					took = append(took, time.Since(start))
				}
			}
			slices.Sort(took)
			if n := len(took); n > 0 {
				b.ReportMetric(float64(took[n/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(took[min(n-1, n*99/100)].Nanoseconds()), "p99-ns")
			}
		})
		b.Run(c.name+"-parallel", func(b *testing.B) {
			p := c.new(b)
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := p.AuthorizeURL(ctx, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
