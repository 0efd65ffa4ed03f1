package org

import (
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/request"
)

// Field bounds (ent/schema/org.go).
const (
	maxOrgName      = 128
	maxOrgCode      = 64
	maxOrgCategory  = 32
	maxPositionName = 64
	maxPositionCode = 64
	generatedCode   = 10
	copyNameSuffix  = "-副本"
)

// SysOrg is an organisation as the API returns it.
type SysOrg struct {
	ID       int64   `json:"id"`
	ParentID int64   `json:"parentId"`
	Name     string  `json:"name"`
	Code     string  `json:"code"`
	Category *string `json:"category"`
	Sort     int     `json:"sort"`
	Enabled  bool    `json:"enabled"`
	request.Audit
}

func toSysOrg(o *ent.SysOrg) SysOrg {
	return SysOrg{
		ID: o.ID, ParentID: o.ParentID, Name: o.Name, Code: o.Code, Category: o.Category,
		Sort: o.Sort, Enabled: o.Enabled, Audit: request.AuditOf(o.IsDelete, o.CreateTime, o.CreateUserID, o.UpdateTime, o.UpdateUserID),
	}
}

// OrgInput is the body of POST /sys/org/add and PUT /sys/org/{id}. An
// empty code is generated on add and left unchanged on update; an omitted
// enabled means true.
type OrgInput struct {
	ParentID request.Int64 `json:"parentId"`
	Name     string        `json:"name"`
	Code     *string       `json:"code"`
	Category *string       `json:"category"`
	Sort     request.Int64 `json:"sort"`
	Enabled  *bool         `json:"enabled"`
}

// CopyInput is the optional body of POST /sys/org/{id}/copy.
type CopyInput struct {
	// Name of the new root; empty means the original name + "-副本".
	Name *string `json:"name"`
}

type orgFields struct {
	parentID int64
	name     string
	code     *string
	category *string
	sort     int
	enabled  bool
}

func (in OrgInput) validate() (orgFields, error) {
	f := orgFields{parentID: int64(in.ParentID), sort: int(in.Sort), enabled: request.BoolOr(in.Enabled, true)}
	var err error
	if f.parentID < 0 {
		return f, request.Invalid("parentId")
	}
	if f.name, err = request.RequiredText("name", in.Name, maxOrgName); err != nil {
		return f, err
	}
	if f.code, err = request.OptionalText("code", in.Code, maxOrgCode); err != nil {
		return f, err
	}
	if f.category, err = request.OptionalText("category", in.Category, maxOrgCategory); err != nil {
		return f, err
	}
	return f, nil
}

// SysPosition is a position as the API returns it.
type SysPosition struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Code    string `json:"code"`
	Sort    int    `json:"sort"`
	Enabled bool   `json:"enabled"`
	request.Audit
}

func toSysPosition(p *ent.SysPosition) SysPosition {
	return SysPosition{
		ID: p.ID, Name: p.Name, Code: p.Code, Sort: p.Sort, Enabled: p.Enabled, Audit: request.AuditOf(p.IsDelete, p.CreateTime, p.CreateUserID, p.UpdateTime, p.UpdateUserID),
	}
}

// PositionInput is the body of POST /sys/position/add and PUT
// /sys/position/{id}. An omitted enabled means true.
type PositionInput struct {
	Name    string        `json:"name"`
	Code    string        `json:"code"`
	Sort    request.Int64 `json:"sort"`
	Enabled *bool         `json:"enabled"`
}

type positionFields struct {
	name, code string
	sort       int
	enabled    bool
}

func (in PositionInput) validate() (positionFields, error) {
	f := positionFields{sort: int(in.Sort), enabled: request.BoolOr(in.Enabled, true)}
	var err error
	if f.name, err = request.RequiredText("name", in.Name, maxPositionName); err != nil {
		return f, err
	}
	if f.code, err = request.RequiredText("code", in.Code, maxPositionCode); err != nil {
		return f, err
	}
	return f, nil
}
