package menu

import (
	"context"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysmodule"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/envelope"
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
	IsDelete     bool    `json:"isDelete"`
	CreateTime   string  `json:"createTime"`
	CreateUserID *int64  `json:"createUserId"`
	UpdateTime   *string `json:"updateTime"`
	UpdateUserID *int64  `json:"updateUserId"`
}

func toSysModule(m *ent.SysModule) SysModule {
	return SysModule{
		ID: m.ID, Code: m.Code, Title: m.Title, Icon: m.Icon, DefaultRoute: m.DefaultRoute,
		APIPrefix: m.APIPrefix, Sort: m.Sort, Enabled: m.Enabled, Remark: m.Remark,
		IsDelete: m.IsDelete, CreateTime: request.EntityTime(m.CreateTime), CreateUserID: m.CreateUserID,
		UpdateTime: request.EntityTimePtr(m.UpdateTime), UpdateUserID: m.UpdateUserID,
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

// moduleAdmin serves /sys/module.
type moduleAdmin struct {
	client *ent.Client
	store  cache.Store
	log    hclog.Logger
}

func (h *moduleAdmin) list(c fiber.Ctx) error {
	all, err := h.client.SysModule.Query().Where(sysmodule.IsDelete(false)).
		Order(sysmodule.BySort(), sysmodule.ByID()).All(c.Context())
	if err != nil {
		return err
	}
	out := make([]SysModule, len(all))
	for i, m := range all {
		out[i] = toSysModule(m)
	}
	return envelope.OK(c, out)
}

func (h *moduleAdmin) live(ctx context.Context, id int64) (*ent.SysModule, error) {
	m, err := h.client.SysModule.Query().Where(sysmodule.ID(id), sysmodule.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.ModuleNotFound)
	}
	return m, err
}

func (h *moduleAdmin) get(c fiber.Ctx) error {
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	m, err := h.live(c.Context(), id)
	if err != nil {
		return err
	}
	return envelope.OK(c, toSysModule(m))
}

// codeTaken reports whether a live module other than except holds code.
func (h *moduleAdmin) codeTaken(ctx context.Context, code string, except int64) (bool, error) {
	return h.client.SysModule.Query().
		Where(sysmodule.Code(code), sysmodule.IsDelete(false), sysmodule.IDNEQ(except)).Exist(ctx)
}

func (h *moduleAdmin) add(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in ModuleInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	f, err := in.validate()
	if err != nil {
		return err
	}
	ctx := c.Context()
	if taken, err := h.codeTaken(ctx, f.code, 0); err != nil {
		return err
	} else if taken {
		return errcode.New(errcode.ModuleCodeExists)
	}
	m, err := h.client.SysModule.Create().
		SetCode(f.code).SetTitle(f.title).SetNillableIcon(f.icon).SetNillableDefaultRoute(f.defaultRoute).
		SetNillableAPIPrefix(f.apiPrefix).SetSort(f.sort).SetEnabled(f.enabled).SetNillableRemark(f.remark).
		SetCreateUserID(p.UserID).Save(ctx)
	if ent.IsConstraintError(err) {
		return errcode.New(errcode.ModuleCodeExists).Wrap(err)
	}
	if err != nil {
		return err
	}
	if err := h.changed(ctx); err != nil {
		return err
	}
	return envelope.OK(c, m.ID)
}

func (h *moduleAdmin) update(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	var in ModuleInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	f, err := in.validate()
	if err != nil {
		return err
	}
	ctx := c.Context()
	if _, err := h.live(ctx, id); err != nil {
		return err
	}
	// Disabling the built-in module would cut every administrator off the
	// administration pages, with no way back through the UI.
	if id == SystemModuleID && !f.enabled {
		return errcode.New(errcode.ModuleProtected)
	}
	if taken, err := h.codeTaken(ctx, f.code, id); err != nil {
		return err
	} else if taken {
		return errcode.New(errcode.ModuleCodeExists)
	}
	u := h.client.SysModule.Update().Where(sysmodule.ID(id), sysmodule.IsDelete(false)).
		SetCode(f.code).SetTitle(f.title).SetSort(f.sort).SetEnabled(f.enabled).SetUpdateUserID(p.UserID)
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
	if err := h.changed(ctx); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *moduleAdmin) delete(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	if id == SystemModuleID {
		return errcode.New(errcode.ModuleProtected)
	}
	ctx := c.Context()
	if _, err := h.live(ctx, id); err != nil {
		return err
	}
	attached, err := h.client.SysMenu.Query().
		Where(sysmenu.ModuleID(id), sysmenu.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if attached {
		return errcode.New(errcode.ModuleHasMenus)
	}
	n, err := h.client.SysModule.Update().Where(sysmodule.ID(id), sysmodule.IsDelete(false)).
		SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(p.UserID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.ModuleNotFound)
	}
	if err := h.changed(ctx); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

// changed starts a new portal generation after a committed module change
// (the modules list shows titles, icons, order and enabled modules).
func (h *moduleAdmin) changed(ctx context.Context) error {
	if _, err := BumpGeneration(ctx, h.store); err != nil {
		h.log.Error("bumping the portal generation after a module change failed", "error", err)
		return err
	}
	return nil
}
