package database_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/database"
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

// TestMigrateStopsOnCaseVariantDuplicates: live users whose accounts differ
// only in case (possible before account_norm existed: simulated by a row
// without it) stop the migration with a message naming them; nobody is
// renamed. Once one of them is deleted, the migration runs and fills the
// column of the older row.
func TestMigrateStopsOnCaseVariantDuplicates(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			db := dbtest.OpenMigrated(t, d)
			c := db.Client
			first := c.SysUser.Create().SetAccount("Dupe").SetName("first").SaveX(ctx)
			second := c.SysUser.Create().SetAccount("other").SetName("second").SaveX(ctx)
			q := "UPDATE sys_user SET account = ?, account_norm = NULL WHERE id = ?"
			if db.Dialect == dialect.Postgres {
				q = "UPDATE sys_user SET account = $1, account_norm = NULL WHERE id = $2"
			}
			if _, err := db.SQL.ExecContext(ctx, q, "dUPE", second.ID); err != nil {
				t.Fatal(err)
			}

			err := db.Migrate(ctx)
			if !errors.Is(err, database.ErrAccountCaseDuplicates) {
				t.Fatalf("Migrate with case-variant accounts = %v, want ErrAccountCaseDuplicates", err)
			}
			for _, want := range []string{`"Dupe" (id ` + fmt.Sprint(first.ID) + ")", `"dUPE" (id ` + fmt.Sprint(second.ID) + ")", "Delete"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if got := c.SysUser.GetX(ctx, second.ID); got.Account != "dUPE" {
				t.Fatalf("the duplicate was renamed to %q", got.Account)
			}

			c.SysUser.UpdateOneID(first.ID).SetIsDelete(true).SetDeleteKey(first.ID).ExecX(ctx)
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("Migrate after deleting the duplicate: %v", err)
			}
			if got := c.SysUser.Query().Where(sysuser.AccountNorm("dupe"), sysuser.IsDelete(false)).OnlyX(ctx); got.ID != second.ID {
				t.Fatalf("account_norm not back-filled: live dupe is %d, want %d", got.ID, second.ID)
			}
		})
	}
}
