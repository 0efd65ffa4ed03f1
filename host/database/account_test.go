package database_test

import (
	"context"
	"testing"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/database/dbtest"
)

// TestAccountsUniqueCaseInsensitively: the database itself refuses a live
// "zhang" beside "Zhang" on every dialect (SQLite and PostgreSQL compare
// case-sensitively), and a soft-deleted account frees the name.
func TestAccountsUniqueCaseInsensitively(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			c := dbtest.OpenMigrated(t, d).Client
			create := func(account string) (*ent.SysUser, error) {
				return c.SysUser.Create().SetAccount(account).SetName(account).Save(ctx)
			}
			u, err := create("Zhang")
			if err != nil {
				t.Fatal(err)
			}
			if u.AccountNorm != "zhang" {
				t.Fatalf("account_norm = %q, want zhang", u.AccountNorm)
			}
			for _, variant := range []string{"zhang", "ZHANG", "zHaNg"} {
				if _, err := create(variant); !ent.IsConstraintError(err) {
					t.Fatalf("creating %q beside Zhang: error = %v, want a constraint error", variant, err)
				}
			}
			if err := c.SysUser.UpdateOne(u).SetIsDelete(true).SetDeleteKey(u.ID).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := create("zhang"); err != nil {
				t.Fatalf("re-creating a deleted account in another case: %v", err)
			}
		})
	}
}
