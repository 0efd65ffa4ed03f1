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

// areaCode is the owning area's codes a restore or purge needs besides the
// recycle bin's own: a restore one of the area's write codes (add or
// update), a purge the area's delete code.
type areaCode struct {
	restore []string
	purge   string
}

// areaCodes are the codes of each type's owning area (the routes of
// host/user, role, job, org, menu, configcenter, dict and file).
var areaCodes = map[string]areaCode{
	"user":     {[]string{"POST:/api/v1/sys/user", "PUT:/api/v1/sys/user/{id}"}, "DELETE:/api/v1/sys/user/{id}"},
	"role":     {[]string{"POST:/api/v1/sys/role/add", "PUT:/api/v1/sys/role/{id}"}, "DELETE:/api/v1/sys/role/{id}"},
	"job":      {[]string{"POST:/api/v1/sys/job", "PUT:/api/v1/sys/job/{id}"}, "DELETE:/api/v1/sys/job/{id}"},
	"org":      {[]string{"POST:/api/v1/sys/org/add", "PUT:/api/v1/sys/org/{id}"}, "DELETE:/api/v1/sys/org/{id}"},
	"position": {[]string{"POST:/api/v1/sys/position/add", "PUT:/api/v1/sys/position/{id}"}, "DELETE:/api/v1/sys/position/{id}"},
	"module":   {[]string{"POST:/api/v1/sys/module/add", "PUT:/api/v1/sys/module/{id}"}, "DELETE:/api/v1/sys/module/{id}"},
	"config":   {[]string{"POST:/api/v1/sys/config", "PUT:/api/v1/sys/config/{id}"}, "DELETE:/api/v1/sys/config/{id}"},
	"dict":     {[]string{"POST:/api/v1/sys/dict/type", "PUT:/api/v1/sys/dict/type/{id}"}, "DELETE:/api/v1/sys/dict/type/{id}"},
	"dictitem": {[]string{"POST:/api/v1/sys/dict/item", "PUT:/api/v1/sys/dict/item/{id}"}, "DELETE:/api/v1/sys/dict/item/{id}"},
	"menu":     {[]string{"POST:/api/v1/sys/menu/add", "PUT:/api/v1/sys/menu/{id}"}, "DELETE:/api/v1/sys/menu/{id}"},
	"file":     {[]string{"POST:/api/v1/sys/file/upload"}, "DELETE:/api/v1/sys/file/{id}"},
}

// AreaCodes returns the owning area's codes of a type: those of which a
// restore needs one, and the one a purge needs.
func AreaCodes(typ string) (restore []string, purge string) {
	c := areaCodes[strings.ToLower(strings.TrimSpace(typ))]
	return c.restore, c.purge
}

// holdsAny refuses (41007, arg code = the first of codes) unless the
// caller is the super-admin or holds one of codes.
func (s *Service) holdsAny(ctx context.Context, who datascope.Caller, codes ...string) error {
	if who.SuperAdmin {
		return nil
	}
	for _, code := range codes {
		ok, err := s.d.Perms.Has(ctx, who.UserID, code)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return errcode.New(errcode.AreaPermissionRequired).With("code", codes[0])
}

// Restore brings a deleted row of typ back: the caller needs one of the
// owning area's write codes too (41007).
func (s *Service) Restore(ctx context.Context, who datascope.Caller, typ string, id int64) error {
	k, err := s.kind(typ)
	if err != nil {
		return err
	}
	codes, _ := AreaCodes(typ)
	if err := s.holdsAny(ctx, who, codes...); err != nil {
		return err
	}
	return k.restore(ctx, who, id)
}

// Purge removes a deleted row of typ and the rows depending on it: the
// caller needs the owning area's delete code too (41007).
func (s *Service) Purge(ctx context.Context, who datascope.Caller, typ string, id int64) error {
	k, err := s.kind(typ)
	if err != nil {
		return err
	}
	_, code := AreaCodes(typ)
	if err := s.holdsAny(ctx, who, code); err != nil {
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
