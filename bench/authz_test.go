package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/authz"
	"github.com/adminkernel/kernel/host/route"
)

// permissionCodes returns the permission code of every permission-gated
// route of the kernel: a user holding all of them has the largest set the
// built-in modules produce.
func permissionCodes(k *host.Kernel) []string {
	var codes []string
	for _, r := range k.Routes() {
		if r.Access == route.Permission {
			codes = append(codes, r.PermissionCode())
		}
	}
	return codes
}

// BenchmarkPermissionHas is the permission check of a permission-gated
// route on a cache hit: authz.Resolver.Has for a user holding every
// permission code of the built-in routes, after a first call has cached the
// set, through the kernel's cache: memcache is the in-process store, redis
// Redis behind the near cache (a local copy), redis-nonear one GET per
// check.
func BenchmarkPermissionHas(b *testing.B) {
	for _, kind := range kernelKinds {
		b.Run(kind, func(b *testing.B) {
			k := startKernel(b, kind)
			codes := permissionCodes(k)
			uid := addUser(b, k, "permuser", userPassword, codes...)
			r := authz.New(k.Ent(), k.Cache(), 20*time.Minute, nil)
			ctx := context.Background()
			for _, code := range []string{pingCode, codes[len(codes)-1]} {
				if ok, err := r.Has(ctx, uid, code); err != nil || !ok {
					b.Fatalf("Has(%s) = %v, %v; want true", code, ok, err)
				}
			}
			b.ReportMetric(float64(len(codes)), "codes")
			b.ReportAllocs()
			report := cpuPerOp(b)
			for b.Loop() {
				if ok, err := r.Has(ctx, uid, pingCode); err != nil || !ok {
					b.Fatalf("Has = %v, %v", ok, err)
				}
			}
			report()
		})
	}
}
