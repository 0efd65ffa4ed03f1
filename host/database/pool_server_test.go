//go:build !unit

package database_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/adminkernel/kernel/host/database/dbtest"
)

// TestPoolKeepsItsConnections: after more connections at once than
// database/sql's default of two idle ones, the pool keeps every connection
// it opened (none closed for want of idle room); with
// Service:Database:MaxIdleConns set, it keeps that many and closes the rest.
func TestPoolKeepsItsConnections(t *testing.T) {
	const burst = 12
	cases := []struct {
		name           string
		maxOpen        int
		maxIdle        int
		wantIdle       int
		wantIdleClosed int64
	}{
		{name: "defaults", wantIdle: burst},
		{name: "a cap on open connections", maxOpen: burst, wantIdle: burst},
		{name: "MaxIdleConns", maxIdle: 3, wantIdle: 3, wantIdleClosed: burst - 3},
	}
	ctx := context.Background()
	for _, dbType := range dbtest.Dialects(t) {
		for _, tc := range cases {
			t.Run(dbType+"/"+tc.name, func(t *testing.T) {
				cfg := dbtest.Config(t, dbType)
				cfg.Service.Database.MaxOpenConns = tc.maxOpen
				cfg.Service.Database.MaxIdleConns = tc.maxIdle
				db := dbtest.OpenConfig(t, cfg)
				conns := make([]*sql.Conn, 0, burst)
				for range burst { // held at once: the pool must open this many
					c, err := db.SQL.Conn(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if err := c.PingContext(ctx); err != nil {
						t.Fatal(err)
					}
					conns = append(conns, c)
				}
				for _, c := range conns {
					_ = c.Close()
				}
				st := db.SQL.Stats()
				if st.Idle != tc.wantIdle || st.MaxIdleClosed != tc.wantIdleClosed {
					t.Fatalf("after %d connections at once: %d idle, %d closed for want of idle room; want %d and %d",
						burst, st.Idle, st.MaxIdleClosed, tc.wantIdle, tc.wantIdleClosed)
				}
			})
		}
	}
}
