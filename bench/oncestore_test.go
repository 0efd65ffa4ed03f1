package bench_test

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// BenchmarkOnceStore is one round of the one-time store as the login
// flows use it (authorize state, login ticket, captcha answer): PutOnce of
// a fresh key with a 300-byte value, then the atomic Take. memcache is the
// in-process store; redis is SET NX PX plus GETDEL over loopback.
func BenchmarkOnceStore(b *testing.B) {
	val := make([]byte, 300)
	for i := range val {
		val[i] = 'a' + byte(i%26)
	}
	for _, kind := range storeKinds {
		b.Run(kind+"/PutOnce+Take", func(b *testing.B) {
			store := newStore(b, kind)
			ctx := context.Background()
			key := make([]byte, 0, 64)
			n := 0
			b.ReportAllocs()
			report := cpuPerOp(b)
			for b.Loop() {
				n++
				key = strconv.AppendInt(append(key[:0], "once:bench:"...), int64(n), 10)
				k := string(key)
				if err := store.PutOnce(ctx, k, val, 5*time.Minute); err != nil {
					b.Fatal(err)
				}
				got, ok, err := store.Take(ctx, k)
				if err != nil || !ok || len(got) != len(val) {
					b.Fatalf("Take = %d bytes, %v, %v", len(got), ok, err)
				}
			}
			report()
		})
	}
}
