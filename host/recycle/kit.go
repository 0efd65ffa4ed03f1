package recycle

import (
	"context"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/authority"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
	"github.com/hashicorp/go-hclog"
)

// The kit of a module's recycle kinds (module.RecycleKind): the shared
// answers and the page conversion, so that every type pages, names the
// deleting user and answers its errors alike.

// Item is one row of a recycle-bin page.
type Item = module.RecycleItem

// NotFound is 42020 for a row not in the bin (restored or purged meanwhile).
func NotFound(id int64) *errcode.Error {
	return errcode.New(errcode.RecycleNotFound).With("id", id)
}

// ParentDeleted is 42032: the row's parent is deleted or gone.
func ParentDeleted(parent string) *errcode.Error {
	return errcode.New(errcode.RecycleParentDeleted).With("parent", parent)
}

// Conflict is 42021: a live row took the restored row's unique key.
func Conflict() *errcode.Error { return errcode.New(errcode.RecycleUniqueConflict) }

// RestoreErr maps the error of a restoring update: a unique violation means
// a live row took the key meanwhile (42021).
func RestoreErr(err error) error {
	if ent.IsConstraintError(err) {
		return Conflict()
	}
	return err
}

// Missing maps "no row" to 42020.
func Missing(err error, id int64) error {
	if ent.IsNotFound(err) {
		return NotFound(id)
	}
	return err
}

// Affected turns the count of a conditional update or delete into 42020
// when the row left the bin meanwhile (restored or purged by another call).
func Affected(n int, err error, id int64) error {
	if err != nil {
		return RestoreErr(err)
	}
	if n == 0 {
		return NotFound(id)
	}
	return nil
}

// Deleted is what every page row has: who deleted it and when.
type Deleted struct {
	At time.Time
	By *int64
}

// When is a row's deletion time: its update time, else its creation time.
func When(t *time.Time, create time.Time) time.Time {
	if t != nil {
		return *t
	}
	return create
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// NonEmpty is nil for "" and a pointer to s otherwise.
func NonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// PageOf turns a page of rows (and the error of reading them) into items,
// each converted by conv to (id, name, code, deletion), with the deleting
// users' names read in one query.
func PageOf[T any](ctx context.Context, client *ent.Client, total int, rows []T, err error,
	conv func(T) (int64, string, *string, Deleted)) ([]Item, int, error) {
	if err != nil {
		return nil, 0, err
	}
	out := make([]Item, len(rows))
	var users []int64
	for i, r := range rows {
		id, name, code, d := conv(r)
		at := request.EntityTime(d.At)
		out[i] = Item{ID: id, Name: name, Code: code, DeletedAt: &at, DeletedBy: d.By}
		if d.By != nil {
			users = append(users, *d.By)
		}
	}
	if len(users) == 0 {
		return out, total, nil
	}
	names, err := client.SysUser.Query().Where(sysuser.IDIn(users...)).
		Select(sysuser.FieldID, sysuser.FieldName).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	byID := make(map[int64]string, len(names))
	for _, u := range names {
		byID[u.ID] = u.Name
	}
	for i := range out {
		if out[i].DeletedBy != nil {
			if n, ok := byID[*out[i].DeletedBy]; ok {
				out[i].DeletedByName = &n
			}
		}
	}
	return out, total, nil
}

// Bin is what a module's kind functions usually need: the client, the
// module's deps, the authority checker (nobody restores or purges more
// than they hold) and the data scopes. A module embeds it in a type of its
// own to hang its kind functions on.
type Bin struct {
	Client *ent.Client
	D      *module.Deps
	Limits *authority.Checker
	Scopes *datascope.Cache
	Log    hclog.Logger
}

// NewBin returns the bin helpers over d.
func NewBin(d *module.Deps) *Bin {
	scopes := d.Scopes()
	return &Bin{Client: d.Client, D: d, Limits: authority.New(d.Client, d.Perms, scopes), Scopes: scopes,
		Log: d.Logger("AdminKernel.Recycle")}
}

// Codes sets the owning area's codes of k (see module.RecycleKind) and
// returns it.
func Codes(k module.RecycleKind, typ string, restore []string, purge string) module.RecycleKind {
	k.Type, k.RestoreCodes, k.PurgeCode = typ, restore, purge
	return k
}

// Query is what PageQuery needs of an ent query of deleted rows.
type Query[Q any, T any] interface {
	Clone() Q
	Count(ctx context.Context) (int, error)
	Offset(n int) Q
	Limit(n int) Q
	All(ctx context.Context) ([]T, error)
}

// PageQuery answers page p of q (deleted rows, already ordered newest
// deletion first): the total, then the rows converted by conv (PageOf).
func PageQuery[Q Query[Q, T], T any](ctx context.Context, client *ent.Client, p request.Page, q Q,
	conv func(T) (int64, string, *string, Deleted)) ([]Item, int, error) {
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	rows, err := q.Offset(p.Offset()).Limit(p.Size).All(ctx)
	return PageOf(ctx, client, total, rows, err, conv)
}
