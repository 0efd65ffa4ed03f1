package module

import (
	"context"

	"github.com/adminkernel/kernel/ent"
)

// The kinds of row whose purge other modules take part in (Forget.Of).
const (
	// ForgetUser: a user purged from the recycle bin (module user).
	ForgetUser = "user"
	// ForgetDeletedUser: a user moved to the recycle bin (module user):
	// what must not outlive the account's deletion (its sign-in routes)
	// is deleted with it; a restore does not bring it back.
	ForgetDeletedUser = "user.deleted"
	// ForgetRole: a role purged (module role).
	ForgetRole = "role"
	// ForgetOrg: an organisation purged (module org).
	ForgetOrg = "org"
	// ForgetPosition: a position purged (module org).
	ForgetPosition = "position"
	// ForgetMenu: a menu entry purged (module menu).
	ForgetMenu = "menu"
	// ForgetMenuModule: a menu module (the console's top-level group)
	// purged (module menu).
	ForgetMenuModule = "menumodule"
)

// Forget is a module's share of purging a row another module owns. The
// owner deletes its row and calls Deps.Forget in the same transaction;
// every module's Forget of that kind then removes or clears its own rows
// that point at the purged one. So a module writes only its own tables,
// and a new module's rows about users (say) go when the user goes without
// any change to the user module.
type Forget struct {
	// Of is the kind of purged row (ForgetUser, ForgetRole, ...; an
	// application may name kinds of its own for its modules' rows).
	Of string
	// What says which rows go, for errors and logs ("sessions").
	What string
	// Run removes or clears the module's rows pointing at id, inside the
	// purge's transaction tx, for the change by user by (0: the kernel);
	// an error rolls the whole purge back.
	Run func(ctx context.Context, tx *ent.Tx, id, by int64) error
}
