package recycle

import (
	"context"
	"strings"
	"sync"

	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/request"
)

// Service is the recycle bin: it routes each {type} to the module that
// declared it (module.Module.Recycle) and checks the owning area's codes.
type Service struct {
	d      *module.Deps
	scopes *datascope.Cache
	once   sync.Once
	kinds  map[string]module.RecycleKind
}

// NewService returns the recycle bin over the kinds the modules declare
// (d.RecycleKinds, read at the first request).
func NewService(d *module.Deps) *Service {
	return &Service{d: d, scopes: d.Scopes()}
}

// kind returns the type named typ, matched case-insensitively (42022 for
// any other).
func (s *Service) kind(typ string) (module.RecycleKind, error) {
	s.once.Do(func() {
		s.kinds = map[string]module.RecycleKind{}
		if s.d.RecycleKinds == nil {
			return
		}
		for _, k := range s.d.RecycleKinds() {
			s.kinds[k.Type] = k
		}
	})
	k, ok := s.kinds[strings.ToLower(strings.TrimSpace(typ))]
	if !ok {
		return module.RecycleKind{}, errcode.New(errcode.RecycleInvalidType).With("type", typ)
	}
	return k, nil
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

// Page lists the deleted rows of typ.
func (s *Service) Page(ctx context.Context, who datascope.Caller, typ string, p request.Page) ([]Item, int, error) {
	k, err := s.kind(typ)
	if err != nil {
		return nil, 0, err
	}
	return k.Page(ctx, who, p)
}

// Restore brings a deleted row of typ back: the caller needs one of the
// owning area's write codes too (41007).
func (s *Service) Restore(ctx context.Context, who datascope.Caller, typ string, id int64) error {
	k, err := s.kind(typ)
	if err != nil {
		return err
	}
	if err := s.holdsAny(ctx, who, k.RestoreCodes...); err != nil {
		return err
	}
	return k.Restore(ctx, who, id)
}

// Purge removes a deleted row of typ and the rows depending on it: the
// caller needs the owning area's delete code too (41007).
func (s *Service) Purge(ctx context.Context, who datascope.Caller, typ string, id int64) error {
	k, err := s.kind(typ)
	if err != nil {
		return err
	}
	if err := s.holdsAny(ctx, who, k.PurgeCode); err != nil {
		return err
	}
	return k.Purge(ctx, who, id)
}
