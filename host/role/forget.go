package role

import (
	"context"
	"slices"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysroledatascope"
	"github.com/adminkernel/kernel/ent/sysrolemenu"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/module"
)

// forgets are the role area's shares of other areas' purges: grants of a
// purged menu entry go, and a purged organisation leaves every custom data
// scope naming it (live and deleted roles).
func forgets(*module.Deps) []module.Forget {
	return []module.Forget{
		{Of: module.ForgetMenu, What: "role grants", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error {
			_, err := tx.SysRoleMenu.Delete().Where(sysrolemenu.MenuID(id)).Exec(ctx)
			return err
		}},
		{Of: module.ForgetOrg, What: "custom data scopes", Run: func(ctx context.Context, tx *ent.Tx, id, _ int64) error { return dropCustomOrg(ctx, tx, id) }},
	}
}

// dropCustomOrg removes org id from every custom data scope naming it.
func dropCustomOrg(ctx context.Context, tx *ent.Tx, id int64) error {
	rows, err := tx.SysRoleDataScope.Query().Where(sysroledatascope.CustomOrgIdsNotNil()).All(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		ids, _ := datascope.ParseOrgIDs(*r.CustomOrgIds)
		if !slices.Contains(ids, id) {
			continue
		}
		ids = slices.DeleteFunc(ids, func(v int64) bool { return v == id })
		if err := tx.SysRoleDataScope.UpdateOneID(r.ID).SetCustomOrgIds(datascope.FormatOrgIDs(ids)).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}
