package user

import (
	"github.com/adminkernel/kernel/host/request"
)

// optionalID maps a missing, null or non-positive id to nil.
func optionalID(n *request.Int64) *int64 {
	if n == nil || *n <= 0 {
		return nil
	}
	v := int64(*n)
	return &v
}

// Item is the contract's UserItem. The password hash is never part of it.
type Item struct {
	ID           int64   `json:"id"`
	Account      string  `json:"account"`
	Name         string  `json:"name"`
	Nickname     *string `json:"nickname"`
	Phone        *string `json:"phone"`
	Email        *string `json:"email"`
	Gender       *string `json:"gender"`
	Avatar       *string `json:"avatar"`
	OrgID        *int64  `json:"orgId"`
	PositionID   *int64  `json:"positionId"`
	DirectorID   *int64  `json:"directorId"`
	OrgName      *string `json:"orgName"`
	PositionName *string `json:"positionName"`
	DirectorName *string `json:"directorName"`
	Enabled      bool    `json:"enabled"`
	IsSuperAdmin bool    `json:"isSuperAdmin"`
	ForceTotp    bool    `json:"forceTotp"`
	TotpEnabled  bool    `json:"totpEnabled"`
	CreateTime   string  `json:"createTime"`
}

// Detail is the contract's UserDetail: a UserItem plus the role ids.
type Detail struct {
	Item
	RoleIDs []int64 `json:"roleIds"`
}

// AddInput is the contract's AddUserInput.
type AddInput struct {
	Account  string  `json:"account"`
	Password *string `json:"password"`
	UpdateInput
}

// UpdateInput is the contract's UpdateUserInput (a full replace: a missing
// optional field becomes null, missing roleIds revoke every role).
type UpdateInput struct {
	Name       string         `json:"name"`
	Nickname   *string        `json:"nickname"`
	Phone      *string        `json:"phone"`
	Email      *string        `json:"email"`
	Gender     *string        `json:"gender"`
	Avatar     *string        `json:"avatar"`
	OrgID      *request.Int64 `json:"orgId"`
	PositionID *request.Int64 `json:"positionId"`
	DirectorID *request.Int64 `json:"directorId"`
	// Enabled defaults to true when absent.
	Enabled   *bool           `json:"enabled"`
	ForceTotp bool            `json:"forceTotp"`
	RoleIDs   []request.Int64 `json:"roleIds"`
}

// CreateOutput answers POST /sys/user.
type CreateOutput struct {
	ID              int64  `json:"id"`
	InitialPassword string `json:"initialPassword"`
}

// PasswordInput is the body of PUT /sys/user/{id}/password.
type PasswordInput struct {
	NewPassword *string `json:"newPassword"`
}

// EnabledInput is the body of PUT /sys/user/{id}/enabled.
type EnabledInput struct {
	Enabled *bool `json:"enabled"`
}

// IDsInput is the body of the batch deletes.
type IDsInput struct {
	IDs []request.Int64 `json:"ids"`
}

// Filter holds the page filters.
type Filter struct {
	Account, Name string
	OrgID, RoleID *int64
	Enabled       *bool
}
