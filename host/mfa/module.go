package mfa

import (
	"errors"

	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/mfa/reauth"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/seed"
)

// ModuleName is the name of the area's module: what Api:DisabledModules,
// the contract document's tags (x-module) and its operation ids say of
// POST /auth/reauth and /sys/mfa/*. It is "Reauth", the name those routes
// had when they were host/reauth's, so that the wire stays as it was.
//
// The area's other routes — the second-factor steps of a login (TOTP code,
// SMS code, passkey), TOTP binding, recovery and the personal passkeys —
// were the login module's and still carry auth.ModuleName ("Auth"): the
// contract document tags them Auth, and Api:DisabledModules "Auth"
// removes them together with the login they complete. Disabling "Reauth"
// removes /auth/reauth and /sys/mfa/*, not the +R enforcement (the kernel
// installs reauth.Service.Guard on every route).
const ModuleName = "Reauth"

// Permission codes of the MFA administration (wire contract §5.2 rows
// 315-318, under the config page 310).
const (
	codeList   = "GET:/api/v1/sys/mfa/high-sensitivity"
	codeAdd    = "POST:/api/v1/sys/mfa/high-sensitivity"
	codeDelete = "DELETE:/api/v1/sys/mfa/high-sensitivity/{id:long}"
	codeClear  = "POST:/api/v1/sys/mfa/clear"
)

var menus = []seed.Menu{
	{ID: 315, ParentID: 310, Type: seed.MenuButton, Title: "高敏感操作-查询", Permission: codeList, Sort: 5},
	{ID: 316, ParentID: 310, Type: seed.MenuButton, Title: "高敏感操作-新增", Permission: codeAdd, Sort: 6},
	{ID: 317, ParentID: 310, Type: seed.MenuButton, Title: "高敏感操作-删除", Permission: codeDelete, Sort: 7},
	{ID: 318, ParentID: 310, Type: seed.MenuButton, Title: "清除用户MFA", Permission: codeClear, Sort: 8},
}

// Module returns the area as a kernel module serving f (the second
// factors) and re (re-authentication and the MFA administration). Both
// may be nil when only the static parts are read (the name, the menus);
// mounting then fails.
func Module(f *Factors, re *reauth.Service) module.Module {
	return module.Module{Name: ModuleName, Menus: menus, Forgets: forgets, Routes: func(d *module.Deps, api *route.Group) error {
		if f == nil || re == nil {
			return errors.New("mfa: the second-factor or re-authentication service is missing")
		}
		h := &handler{f: f, trusted: d.Trusted}
		h.routes(api.Table().Group(auth.ModuleName, api.Prefix()))
		newReauthHandler(re, d).routes(api)
		return nil
	}}
}
