package user_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// Permission codes of the user endpoints.
const (
	cPage    = "GET:/api/v1/sys/user/page"
	cGet     = "GET:/api/v1/sys/user/{id}"
	cAdd     = "POST:/api/v1/sys/user"
	cUpdate  = "PUT:/api/v1/sys/user/{id}"
	cDelete  = "DELETE:/api/v1/sys/user/{id}"
	cBatch   = "POST:/api/v1/sys/user/batch-delete"
	cPwd     = "PUT:/api/v1/sys/user/{id}/password"
	cEnabled = "PUT:/api/v1/sys/user/{id}/enabled"
)

var allCodes = []string{cPage, cGet, cAdd, cUpdate, cDelete, cBatch, cPwd, cEnabled}

const (
	base     = "/api/v1/sys/user"
	strongPw = "Str0ng#Passw0rd"
	userPw   = "User#Passw0rd1"
)

type env struct {
	t     *testing.T
	k     *kerneltest.Kernel
	admin string
}

func setup(t *testing.T, environ ...string) *env {
	t.Helper()
	k := kerneltest.Start(t, environ)
	return &env{t: t, k: k, admin: k.Admin()}
}

func (e *env) do(method, path, tok string, body any) kerneltest.Reply {
	e.t.Helper()
	return e.k.Do(method, path, tok, body)
}

func (e *env) expect(what string, r kerneltest.Reply, code int) kerneltest.Reply {
	e.t.Helper()
	return r.ExpectCode(e.t, what, errcode.Code(code))
}

// create adds a user as tok and returns its id and initial password.
func (e *env) create(tok string, body map[string]any) (int64, string) {
	e.t.Helper()
	r := e.expect(fmt.Sprintf("create %v", body["account"]), e.do("POST", base, tok, body), 0)
	var out struct {
		ID              int64  `json:"id"`
		InitialPassword string `json:"initialPassword"`
	}
	r.Decode(e.t, &out)
	if out.ID <= 0 || out.InitialPassword == "" {
		e.t.Fatalf("create answered %s", r.Data)
	}
	return out.ID, out.InitialPassword
}

// item is the part of UserItem / UserDetail the tests read.
type item struct {
	ID                 int64   `json:"id"`
	Account            string  `json:"account"`
	Name               string  `json:"name"`
	Nickname           *string `json:"nickname"`
	Phone              *string `json:"phone"`
	Email              *string `json:"email"`
	Gender             *string `json:"gender"`
	OrgID              *int64  `json:"orgId"`
	PositionID         *int64  `json:"positionId"`
	DirectorID         *int64  `json:"directorId"`
	OrgName            *string `json:"orgName"`
	PositionName       *string `json:"positionName"`
	DirectorName       *string `json:"directorName"`
	Enabled            bool    `json:"enabled"`
	IsSuperAdmin       bool    `json:"isSuperAdmin"`
	ForceTotp          bool    `json:"forceTotp"`
	CreateTime         string  `json:"createTime"`
	RoleIDs            []int64 `json:"roleIds"`
	PasswordHash       *string `json:"passwordHash"`
	MustChangePassword *bool   `json:"mustChangePassword"`
}

type page struct {
	Current int    `json:"current"`
	Size    int    `json:"size"`
	Total   int    `json:"total"`
	Pages   int    `json:"pages"`
	Items   []item `json:"items"`
}

func (e *env) page(tok string, query url.Values) page {
	e.t.Helper()
	r := e.expect("page "+query.Encode(), e.do("GET", base+"/page?"+query.Encode(), tok, nil), 0)
	var p page
	r.Decode(e.t, &p)
	return p
}

func (e *env) get(tok string, id int64) item {
	e.t.Helper()
	r := e.expect(fmt.Sprintf("get %d", id), e.do("GET", fmt.Sprintf("%s/%d", base, id), tok, nil), 0)
	var it item
	r.Decode(e.t, &it)
	return it
}

func accounts(items []item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Account
	}
	slices.Sort(out)
	return out
}

// testRole returns the id of the role kerneltest.User made for account.
func (e *env) testRole(account string) int64 {
	e.t.Helper()
	return e.k.Ent().SysRole.Query().Where(sysrole.Code("test_" + account)).OnlyIDX(context.Background())
}

// scoped creates an administrator in org with the given codes and a data
// scope on its role (scopeType 0: none) and returns its id and token.
func (e *env) scoped(account string, org int64, scopeType int, custom []int64, codes ...string) (int64, string) {
	e.t.Helper()
	id := e.k.User(account, userPw, codes...)
	e.k.Ent().SysUser.UpdateOneID(id).SetOrgID(org).ExecX(context.Background())
	if scopeType != 0 {
		body := map[string]any{"roleId": e.testRole(account), "scopeType": scopeType}
		if custom != nil {
			body["customOrgIds"] = custom
		}
		e.expect("set data scope of "+account, e.do("PUT", "/api/v1/sys/role/datascope", e.admin, body), 0)
	}
	return id, e.k.Login(account, userPw).AccessToken
}
