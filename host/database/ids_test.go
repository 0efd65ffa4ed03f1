package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/snowflake"
)

// The schema declares no id default: the create hook Open installs gives
// every created row, single and bulk, an id of the generator handed to
// WithIDs, keeps an id the caller set, and without WithIDs refuses the
// create rather than letting the database pick an id.
func TestCreateHookIDs(t *testing.T) {
	for _, dbType := range dbtest.Dialects(t) {
		t.Run(dbType, func(t *testing.T) {
			ctx := context.Background()
			cfg := dbtest.Config(t, dbType)
			ids, err := snowflake.New(37)
			if err != nil {
				t.Fatal(err)
			}
			db, err := database.Open(ctx, cfg, nil, database.WithIDs(ids.Next))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			one, err := db.Client.SysDictType.Create().SetCode("one").SetName("One").Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			bulk, err := db.Client.SysDictType.CreateBulk(
				db.Client.SysDictType.Create().SetCode("two").SetName("Two"),
				db.Client.SysDictType.Create().SetCode("three").SetName("Three"),
			).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int64]bool{}
			for _, row := range append([]*ent.SysDictType{one}, bulk...) {
				if _, w, _ := snowflake.Parts(row.ID); w != 37 || row.ID < snowflake.MinID || seen[row.ID] {
					t.Fatalf("row %s: id %d (worker %d), want a fresh id of worker 37", row.Code, row.ID, w)
				}
				seen[row.ID] = true
			}
			fixed, err := db.Client.SysDictType.Create().SetID(42).SetCode("fixed").SetName("Fixed").Save(ctx)
			if err != nil || fixed.ID != 42 {
				t.Fatalf("explicit id: %v, %v; want 42", fixed, err)
			}

			bare, err := database.Open(ctx, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = bare.Close() })
			if _, err := bare.Client.SysDictType.Create().SetCode("none").SetName("None").Save(ctx); !errors.Is(err, database.ErrNoIDSource) {
				t.Fatalf("create without an id source: err = %v, want ErrNoIDSource", err)
			}
			if _, err := bare.Client.SysDictType.CreateBulk(bare.Client.SysDictType.Create().SetCode("none").SetName("None")).Save(ctx); !errors.Is(err, database.ErrNoIDSource) {
				t.Fatalf("bulk create without an id source: err = %v, want ErrNoIDSource", err)
			}
		})
	}
}
