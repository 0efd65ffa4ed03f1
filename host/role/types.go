package role

import (
	"github.com/adminkernel/kernel/ent"

	"github.com/adminkernel/kernel/host/request"
)

// Role is the contract's SysRole.
type Role struct {
	ID            int64   `json:"id"`
	Name          string  `json:"name"`
	Code          string  `json:"code"`
	Sort          int     `json:"sort"`
	Enabled       bool    `json:"enabled"`
	Remark        *string `json:"remark"`
	IsDelegatable bool    `json:"isDelegatable"`
	request.Audit
}

func toRole(r *ent.SysRole) Role {
	return Role{
		ID: r.ID, Name: r.Name, Code: r.Code, Sort: r.Sort, Enabled: r.Enabled, Remark: r.Remark,
		IsDelegatable: r.IsDelegatable, Audit: request.AuditOf(r.IsDelete, r.CreateTime, r.CreateUserID, r.UpdateTime, r.UpdateUserID),
	}
}

// DataScope is the contract's SysRoleDataScope.
type DataScope struct {
	ID           int64   `json:"id"`
	RoleID       int64   `json:"roleId"`
	ScopeType    int     `json:"scopeType"`
	CustomOrgIDs *string `json:"customOrgIds"`
	request.Audit
}

func toDataScope(s *ent.SysRoleDataScope) *DataScope {
	return &DataScope{
		ID: s.ID, RoleID: s.RoleID, ScopeType: s.ScopeType, CustomOrgIDs: s.CustomOrgIds, Audit: request.AuditOf(s.IsDelete, s.CreateTime, s.CreateUserID, s.UpdateTime, s.UpdateUserID),
	}
}

// Input is the contract's RoleInput.
type Input struct {
	Name string        `json:"name"`
	Code string        `json:"code"`
	Sort request.Int64 `json:"sort"`
	// Enabled defaults to true when absent.
	Enabled       *bool   `json:"enabled"`
	Remark        *string `json:"remark"`
	IsDelegatable *bool   `json:"isDelegatable"`
}

// IDsInput is the body of POST /sys/role/batch-delete.
type IDsInput struct {
	IDs []request.Int64 `json:"ids"`
}

// MenusInput is the body of PUT /sys/role/menu.
type MenusInput struct {
	RoleID  request.Int64   `json:"roleId"`
	MenuIDs []request.Int64 `json:"menuIds"`
}

// DataScopeInput is the body of PUT /sys/role/datascope.
type DataScopeInput struct {
	RoleID       request.Int64   `json:"roleId"`
	ScopeType    request.Int64   `json:"scopeType"`
	CustomOrgIDs []request.Int64 `json:"customOrgIds"`
}

// UsersInput is the body of PUT /sys/role/users.
type UsersInput struct {
	RoleID  request.Int64   `json:"roleId"`
	UserIDs []request.Int64 `json:"userIds"`
}
