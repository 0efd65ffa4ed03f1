package recycle

import (
	"context"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/authority"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/file/storage"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
)

// Item is one row of a recycle-bin page (the contract's
// `{id, name, code?, deletedAt?, deletedBy?}`; deletedByName is the
// kernel's addition: the deleting user's name).
type Item struct {
	ID            int64   `json:"id"`
	Name          string  `json:"name"`
	Code          *string `json:"code"`
	DeletedAt     *string `json:"deletedAt"`
	DeletedBy     *int64  `json:"deletedBy"`
	DeletedByName *string `json:"deletedByName"`
}

// kind is one recycle-bin type.
type kind struct {
	page    func(ctx context.Context, who datascope.Caller, p request.Page) ([]Item, int, error)
	restore func(ctx context.Context, who datascope.Caller, id int64) error
	purge   func(ctx context.Context, who datascope.Caller, id int64) error
}

// Service is the recycle bin.
type Service struct {
	d      *module.Deps
	client *ent.Client
	scopes *datascope.Cache
	limits *authority.Checker
	files  storage.Storage
	log    hclog.Logger
	kinds  map[string]kind
}

// NewService returns the recycle bin over the kernel's services; files is
// the file store of the files area.
func NewService(d *module.Deps, files storage.Storage) *Service {
	scopes := d.Scopes()
	s := &Service{d: d, client: d.Client, scopes: scopes, limits: authority.New(d.Client, d.Perms, scopes), files: files,
		log: d.Logger("AdminKernel.Recycle")}
	s.kinds = map[string]kind{
		"user":     s.userKind(),
		"role":     s.roleKind(),
		"job":      s.jobKind(),
		"org":      s.orgKind(),
		"position": s.positionKind(),
		"module":   s.moduleKind(),
		"config":   s.configKind(),
		"dict":     s.dictKind(),
		"dictitem": s.dictItemKind(),
		"menu":     s.menuKind(),
		"file":     s.fileKind(),
	}
	return s
}

// kind returns the type named typ, matched case-insensitively (42022 for
// any other).
func (s *Service) kind(typ string) (kind, error) {
	k, ok := s.kinds[strings.ToLower(strings.TrimSpace(typ))]
	if !ok {
		return kind{}, errcode.New(errcode.RecycleInvalidType).With("type", typ)
	}
	return k, nil
}

// Restore brings a deleted row of typ back.
func (s *Service) Restore(ctx context.Context, who datascope.Caller, typ string, id int64) error {
	k, err := s.kind(typ)
	if err != nil {
		return err
	}
	return k.restore(ctx, who, id)
}

// Purge removes a deleted row of typ and the rows depending on it.
func (s *Service) Purge(ctx context.Context, who datascope.Caller, typ string, id int64) error {
	k, err := s.kind(typ)
	if err != nil {
		return err
	}
	return k.purge(ctx, who, id)
}

// ---- shared helpers ----

func notFound(id int64) *errcode.Error {
	return errcode.New(errcode.RecycleNotFound).With("id", id)
}

func parentDeleted(parent string) *errcode.Error {
	return errcode.New(errcode.RecycleParentDeleted).With("parent", parent)
}

func conflict() *errcode.Error { return errcode.New(errcode.RecycleUniqueConflict) }

// restoreErr maps the error of a restoring update: a unique violation means
// a live row took the key meanwhile (42021).
func restoreErr(err error) error {
	if ent.IsConstraintError(err) {
		return conflict()
	}
	return err
}

// missing maps "no row" to 42020.
func missing(err error, id int64) error {
	if ent.IsNotFound(err) {
		return notFound(id)
	}
	return err
}

// affected turns the count of a conditional update or delete into 42020
// when the row left the bin meanwhile (restored or purged by another call).
func affected(n int, err error, id int64) error {
	if err != nil {
		return restoreErr(err)
	}
	if n == 0 {
		return notFound(id)
	}
	return nil
}

// deleted is what every page row has: who deleted it and when.
type deleted struct {
	at time.Time
	by *int64
}

func (s *Service) items(ctx context.Context, ids []int64, names []string, codes []*string, meta []deleted) ([]Item, error) {
	out := make([]Item, len(ids))
	var users []int64
	for i := range ids {
		at := request.EntityTime(meta[i].at)
		out[i] = Item{ID: ids[i], Name: names[i], Code: codes[i], DeletedAt: &at, DeletedBy: meta[i].by}
		if meta[i].by != nil {
			users = append(users, *meta[i].by)
		}
	}
	if len(users) == 0 {
		return out, nil
	}
	rows, err := s.client.SysUser.Query().Where(sysuser.IDIn(users...)).
		Select(sysuser.FieldID, sysuser.FieldName).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]string, len(rows))
	for _, u := range rows {
		byID[u.ID] = u.Name
	}
	for i := range out {
		if out[i].DeletedBy != nil {
			if n, ok := byID[*out[i].DeletedBy]; ok {
				out[i].DeletedByName = &n
			}
		}
	}
	return out, nil
}

// page runs a page over rows, converted by conv to (id, name, code, deleted).
func page[T any](ctx context.Context, s *Service, total int, rows []T, err error,
	conv func(T) (int64, string, *string, deleted)) ([]Item, int, error) {
	if err != nil {
		return nil, 0, err
	}
	ids := make([]int64, len(rows))
	names := make([]string, len(rows))
	codes := make([]*string, len(rows))
	meta := make([]deleted, len(rows))
	for i, r := range rows {
		ids[i], names[i], codes[i], meta[i] = conv(r)
	}
	out, err := s.items(ctx, ids, names, codes, meta)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

func when(t *time.Time, create time.Time) time.Time {
	if t != nil {
		return *t
	}
	return create
}

func ptr[T any](v T) *T { return &v }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
