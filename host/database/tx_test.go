package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
)

// WithTx commits when fn succeeds and rolls back when it fails or panics
// (the panic re-raised).
func TestWithTx(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db := dbtest.OpenMigrated(t, d)
			insert := func(code string) func(tx *ent.Tx) error {
				return func(tx *ent.Tx) error {
					return tx.SysDictType.Create().SetCode(code).SetName(code).Exec(ctx)
				}
			}
			boom := errors.New("boom")
			tests := []struct {
				name, code string
				fn         func(code string) func(tx *ent.Tx) error
				wantErr    error
				wantPanic  bool
				kept       bool
			}{
				{"committed", "tx_ok", insert, nil, false, true},
				{"error rolls back", "tx_err", func(code string) func(tx *ent.Tx) error {
					return func(tx *ent.Tx) error { _ = insert(code)(tx); return boom }
				}, boom, false, false},
				{"panic rolls back", "tx_panic", func(code string) func(tx *ent.Tx) error {
					return func(tx *ent.Tx) error { _ = insert(code)(tx); panic(boom) }
				}, nil, true, false},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					var err error
					panicked := func() (p bool) {
						defer func() { p = recover() != nil }()
						err = database.WithTx(ctx, db.Client, tc.fn(tc.code))
						return false
					}()
					if panicked != tc.wantPanic || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
						t.Fatalf("panicked = %v, err = %v; want panic %v, err %v", panicked, err, tc.wantPanic, tc.wantErr)
					}
					if kept := exists(ctx, db.Client, tc.code); kept != tc.kept {
						t.Fatalf("row kept = %v, want %v", kept, tc.kept)
					}
				})
			}
		})
	}
}

func exists(ctx context.Context, c *ent.Client, code string) bool {
	for _, r := range c.SysDictType.Query().AllX(ctx) {
		if r.Code == code {
			return true
		}
	}
	return false
}
