package module

import (
	"context"

	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/request"
)

// RecycleItem is one row of a recycle-bin page (the contract's
// `{id, name, code?, deletedAt?, deletedBy?}`; deletedByName is the
// kernel's addition: the deleting user's name).
type RecycleItem struct {
	ID            int64   `json:"id"`
	Name          string  `json:"name"`
	Code          *string `json:"code"`
	DeletedAt     *string `json:"deletedAt"`
	DeletedBy     *int64  `json:"deletedBy"`
	DeletedByName *string `json:"deletedByName"`
}

// RecycleKind is one type of the recycle bin (/sys/recycle/{type}/...)
// that a module owns: the module lists, restores and purges its own
// soft-deleted rows, with its own authority rules, and drops its own
// caches. The recycle bin only routes to it and checks the area codes
// (host/recycle; its kit has the shared helpers).
type RecycleKind struct {
	// Type is the {type} segment, lower-case ("user", "dictitem").
	Type string
	// RestoreCodes are the module's write codes of which a restore needs
	// one besides the bin's own; PurgeCode is the delete code a purge
	// needs (41007 without; the super-admin needs none).
	RestoreCodes []string
	PurgeCode    string
	// Page lists the deleted rows, newest deletion first, within what the
	// caller may see.
	Page func(ctx context.Context, who datascope.Caller, p request.Page) ([]RecycleItem, int, error)
	// Restore brings a deleted row back (42021 when a live row took its
	// key, 42032 when its parent is deleted); Purge removes it and the
	// rows that depend on it. Both answer 42020 for a row not in the bin.
	Restore func(ctx context.Context, who datascope.Caller, id int64) error
	Purge   func(ctx context.Context, who datascope.Caller, id int64) error
}
