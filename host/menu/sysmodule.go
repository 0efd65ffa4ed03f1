package menu

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysmodule"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
)

// SystemModuleID is the built-in `system` module: it can be neither deleted
// nor disabled (42013).
const SystemModuleID int64 = 1

// SysModule is a portal module as the administration API returns it.
type SysModule struct {
	ID           int64   `json:"id"`
	Code         string  `json:"code"`
	Title        string  `json:"title"`
	Icon         *string `json:"icon"`
	DefaultRoute *string `json:"defaultRoute"`
	APIPrefix    *string `json:"apiPrefix"`
	Sort         int     `json:"sort"`
	Enabled      bool    `json:"enabled"`
	Remark       *string `json:"remark"`
	request.Audit
}

func toSysModule(m *ent.SysModule) SysModule {
	return SysModule{
		ID: m.ID, Code: m.Code, Title: m.Title, Icon: m.Icon, DefaultRoute: m.DefaultRoute,
		APIPrefix: m.APIPrefix, Sort: m.Sort, Enabled: m.Enabled, Remark: m.Remark,
		Audit: request.AuditOf(m.IsDelete, m.CreateTime, m.CreateUserID, m.UpdateTime, m.UpdateUserID),
	}
}

// ModuleInput is the body of POST /sys/module/add and PUT /sys/module/{id}.
// An omitted enabled means true.
type ModuleInput struct {
	Code         string        `json:"code"`
	Title        string        `json:"title"`
	Icon         *string       `json:"icon"`
	DefaultRoute *string       `json:"defaultRoute"`
	APIPrefix    *string       `json:"apiPrefix"`
	Sort         request.Int64 `json:"sort"`
	Enabled      *bool         `json:"enabled"`
	Remark       *string       `json:"remark"`
}

type moduleFields struct {
	code, title                           string
	icon, defaultRoute, apiPrefix, remark *string
	sort                                  int
	enabled                               bool
}

func (in ModuleInput) validate() (moduleFields, error) {
	f := moduleFields{sort: int(in.Sort), enabled: request.BoolOr(in.Enabled, true)}
	var err error
	if f.code, err = request.RequiredText("code", in.Code, 64); err != nil {
		return f, err
	}
	if f.title, err = request.RequiredText("title", in.Title, 128); err != nil {
		return f, err
	}
	if f.icon, err = request.OptionalText("icon", in.Icon, 128); err != nil {
		return f, err
	}
	if f.defaultRoute, err = request.OptionalText("defaultRoute", in.DefaultRoute, 256); err != nil {
		return f, err
	}
	if f.apiPrefix, err = request.OptionalText("apiPrefix", in.APIPrefix, 64); err != nil {
		return f, err
	}
	if f.remark, err = request.OptionalText("remark", in.Remark, 512); err != nil {
		return f, err
	}
	return f, nil
}

// moduleService holds the rules of portal modules (/sys/module).
type moduleService struct {
	client *ent.Client
	store  cache.Store
	log    hclog.Logger
}

// List returns every live module, by sort then id.
func (s *moduleService) List(ctx context.Context) ([]SysModule, error) {
	all, err := s.client.SysModule.Query().Where(sysmodule.IsDelete(false)).
		Order(sysmodule.BySort(), sysmodule.ByID()).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SysModule, len(all))
	for i, m := range all {
		out[i] = toSysModule(m)
	}
	return out, nil
}

func (s *moduleService) live(ctx context.Context, id int64) (*ent.SysModule, error) {
	m, err := s.client.SysModule.Query().Where(sysmodule.ID(id), sysmodule.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.ModuleNotFound)
	}
	return m, err
}

// Get returns a live module.
func (s *moduleService) Get(ctx context.Context, id int64) (SysModule, error) {
	m, err := s.live(ctx, id)
	if err != nil {
		return SysModule{}, err
	}
	return toSysModule(m), nil
}

// codeTaken reports whether a live module other than except holds code.
func (s *moduleService) codeTaken(ctx context.Context, code string, except int64) (bool, error) {
	return s.client.SysModule.Query().
		Where(sysmodule.Code(code), sysmodule.IsDelete(false), sysmodule.IDNEQ(except)).Exist(ctx)
}

// Add creates a module with a code no live module holds and returns its id.
func (s *moduleService) Add(ctx context.Context, userID int64, in ModuleInput) (int64, error) {
	f, err := in.validate()
	if err != nil {
		return 0, err
	}
	if taken, err := s.codeTaken(ctx, f.code, 0); err != nil {
		return 0, err
	} else if taken {
		return 0, errcode.New(errcode.ModuleCodeExists)
	}
	m, err := s.client.SysModule.Create().
		SetCode(f.code).SetTitle(f.title).SetNillableIcon(f.icon).SetNillableDefaultRoute(f.defaultRoute).
		SetNillableAPIPrefix(f.apiPrefix).SetSort(f.sort).SetEnabled(f.enabled).SetNillableRemark(f.remark).
		SetCreateUserID(userID).Save(ctx)
	if ent.IsConstraintError(err) {
		return 0, errcode.New(errcode.ModuleCodeExists).Wrap(err)
	}
	if err != nil {
		return 0, err
	}
	if err := s.changed(ctx); err != nil {
		return 0, err
	}
	return m.ID, nil
}

// Update changes a live module; the built-in module stays enabled.
func (s *moduleService) Update(ctx context.Context, userID, id int64, in ModuleInput) error {
	f, err := in.validate()
	if err != nil {
		return err
	}
	if _, err := s.live(ctx, id); err != nil {
		return err
	}
	// Disabling the built-in module would cut every administrator off the
	// administration pages, with no way back through the UI.
	if id == SystemModuleID && !f.enabled {
		return errcode.New(errcode.ModuleProtected)
	}
	if taken, err := s.codeTaken(ctx, f.code, id); err != nil {
		return err
	} else if taken {
		return errcode.New(errcode.ModuleCodeExists)
	}
	u := s.client.SysModule.Update().Where(sysmodule.ID(id), sysmodule.IsDelete(false)).
		SetCode(f.code).SetTitle(f.title).SetSort(f.sort).SetEnabled(f.enabled).SetUpdateUserID(userID)
	if f.icon == nil {
		u.ClearIcon()
	} else {
		u.SetIcon(*f.icon)
	}
	if f.defaultRoute == nil {
		u.ClearDefaultRoute()
	} else {
		u.SetDefaultRoute(*f.defaultRoute)
	}
	if f.apiPrefix == nil {
		u.ClearAPIPrefix()
	} else {
		u.SetAPIPrefix(*f.apiPrefix)
	}
	if f.remark == nil {
		u.ClearRemark()
	} else {
		u.SetRemark(*f.remark)
	}
	n, err := u.Save(ctx)
	if ent.IsConstraintError(err) {
		return errcode.New(errcode.ModuleCodeExists).Wrap(err)
	}
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.ModuleNotFound)
	}
	return s.changed(ctx)
}

// Delete soft-deletes a live module without live menus; the built-in
// module cannot be deleted.
func (s *moduleService) Delete(ctx context.Context, userID, id int64) error {
	if id == SystemModuleID {
		return errcode.New(errcode.ModuleProtected)
	}
	if _, err := s.live(ctx, id); err != nil {
		return err
	}
	attached, err := s.client.SysMenu.Query().
		Where(sysmenu.ModuleID(id), sysmenu.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if attached {
		return errcode.New(errcode.ModuleHasMenus)
	}
	n, err := s.client.SysModule.Update().Where(sysmodule.ID(id), sysmodule.IsDelete(false)).
		SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(userID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.ModuleNotFound)
	}
	return s.changed(ctx)
}

// changed starts a new portal generation after a committed module change
// (the modules list shows titles, icons, order and enabled modules).
func (s *moduleService) changed(ctx context.Context) error {
	if _, err := BumpGeneration(ctx, s.store); err != nil {
		s.log.Error("bumping the portal generation after a module change failed", "error", err)
		return err
	}
	return nil
}
