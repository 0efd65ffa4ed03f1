package user

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/predicate"
	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/ent/sysdictitem"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/ent/sysposition"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/authority"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/file/link"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/pagetotal"
	"github.com/adminkernel/kernel/host/request"
)

// Field bounds (ent schema).
const (
	maxAccount  = 64
	maxName     = 64
	maxNickname = 64
	maxPhone    = 32
	maxEmail    = 128
	maxGender   = 8
	// generatedLen is the length of a generated password (longer when the
	// policy's minimum length asks for more).
	generatedLen = 16
)

// Revoke reasons written on the sessions this area ends.
const (
	reasonDisabled = "account disabled"
	reasonDeleted  = "account deleted"
	reasonReset    = "password reset by an administrator"
)

// Service implements the user administration.
type Service struct {
	d        *module.Deps
	accounts Accounts
	scopes   *datascope.Cache
	// limits enforces the authority boundaries (41006).
	limits *authority.Checker
}

// NewService returns the service.
func NewService(d *module.Deps, accounts Accounts) *Service {
	scopes := d.Scopes()
	return &Service{d: d, accounts: accounts, scopes: scopes, limits: authority.New(d.Client, d.Perms, scopes)}
}

// Accounts is what the user service needs of the login service
// (*auth.Service): the password policy and the login lock.
type Accounts interface {
	Policy(ctx context.Context) (auth.PasswordPolicy, error)
	Unlock(ctx context.Context, account string) error
}

// Caller resolves the data scope of an authenticated user.
func (s *Service) Caller(ctx context.Context, userID int64, superAdmin bool) (datascope.Caller, error) {
	return s.scopes.Caller(ctx, userID, superAdmin)
}

// ---- reading ----

// sortColumns maps a SortField (the entity property name, compared
// case-insensitively and without underscores) to a column. Secrets are not
// sortable.
var sortColumns = func() map[string]string {
	m := make(map[string]string, len(sysuser.Columns))
	for _, c := range sysuser.Columns {
		if c == sysuser.FieldPasswordHash || c == sysuser.FieldTotpSecret {
			continue
		}
		m[strings.ReplaceAll(c, "_", "")] = c
	}
	return m
}()

// holdsRole matches users linked to a role (a subquery on sys_user_role).
func holdsRole(roleID int64) predicate.SysUser {
	return predicate.SysUser(func(s *sql.Selector) {
		t := sql.Table(sysuserrole.Table)
		s.Where(sql.In(s.C(sysuser.FieldID),
			sql.Select(t.C(sysuserrole.FieldUserID)).From(t).Where(sql.EQ(t.C(sysuserrole.FieldRoleID), roleID))))
	})
}

// filtered is the query of the live users of the page's filters within
// the caller's data scope (the page and the export).
func (s *Service) filtered(who datascope.Caller, f Filter) *ent.SysUserQuery {
	q := s.d.Client.SysUser.Query().Where(sysuser.IsDelete(false)).Where(who.Scope.Users()...)
	if v := strings.TrimSpace(f.Account); v != "" {
		q.Where(sysuser.AccountContainsFold(v))
	}
	if v := strings.TrimSpace(f.Name); v != "" {
		q.Where(sysuser.NameContainsFold(v))
	}
	if f.OrgID != nil {
		q.Where(sysuser.OrgID(*f.OrgID))
	}
	if f.RoleID != nil {
		q.Where(holdsRole(*f.RoleID))
	}
	if f.Enabled != nil {
		q.Where(sysuser.Enabled(*f.Enabled))
	}
	return q
}

// totalKey identifies the statement filtered(who, f) counts, for the
// cached total: every input of its WHERE clause, the data scope included
// (callers share a total only when they run the same statement). A new
// input of filtered must be added here.
func totalKey(who datascope.Caller, f Filter) string {
	k := struct {
		Account, Name string
		OrgID, RoleID *int64
		Enabled       *bool
		All           bool
		Orgs          []int64
		Self          int64
	}{Account: strings.TrimSpace(f.Account), Name: strings.TrimSpace(f.Name), OrgID: f.OrgID, RoleID: f.RoleID, Enabled: f.Enabled,
		All: who.Scope.Unrestricted}
	if !k.All {
		k.Orgs = who.Scope.OrgIDs
		if who.Scope.IncludeSelf {
			k.Self = who.Scope.UserID
		}
	}
	b, _ := json.Marshal(k) // plain values: cannot fail
	return string(b)
}

// Page lists the live users visible to the caller.
func (s *Service) Page(ctx context.Context, who datascope.Caller, f Filter, p request.Page) ([]Item, int, error) {
	q := s.filtered(who, f)
	count := q.Clone()
	total, err := s.d.Totals.Total(ctx, pagetotal.Users, totalKey(who, f), count.Count)
	if err != nil {
		return nil, 0, err
	}
	q.Order(request.Order(p, sortColumns, sysuser.FieldID, sysuser.OrderOption(ent.Desc(sysuser.FieldCreateTime, sysuser.FieldID)))...)
	rows, err := s.pageRows(ctx, q.Offset(p.Offset()).Limit(p.Size))
	if err != nil {
		return nil, 0, err
	}
	items, err := s.items(ctx, who, rows)
	return items, total, err
}

// pageRows reads a page in two steps, its ids and then their rows (a
// deferred join): the ids come from an index alone where one holds every
// column the page filters and sorts on (the order index; on MySQL the
// search index of the Name and Account filters, which no index can seek),
// so a page deep in the list or a rare search match reads 20 rows of the
// table instead of every row it skips or tests.
func (s *Service) pageRows(ctx context.Context, q *ent.SysUserQuery) ([]*ent.SysUser, error) {
	ids, err := q.IDs(ctx)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	rows, err := s.d.Client.SysUser.Query().Where(sysuser.IDIn(ids...), sysuser.IsDelete(false)).All(ctx)
	if err != nil {
		return nil, err
	}
	at := make(map[int64]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	slices.SortFunc(rows, func(a, b *ent.SysUser) int { return at[a.ID] - at[b.ID] })
	return rows, nil
}

// items converts rows and joins the org, position and director names. A
// director outside the reader's data scope keeps its id but is not
// resolved to a name (directorName null): the field must not reveal who
// the reader may not see.
func (s *Service) items(ctx context.Context, who datascope.Caller, rows []*ent.SysUser) ([]Item, error) {
	var orgIDs, posIDs, dirIDs []int64
	for _, u := range rows {
		if u.OrgID != nil {
			orgIDs = append(orgIDs, *u.OrgID)
		}
		if u.PositionID != nil {
			posIDs = append(posIDs, *u.PositionID)
		}
		if u.DirectorID != nil {
			dirIDs = append(dirIDs, *u.DirectorID)
		}
	}
	orgs := map[int64]string{}
	if len(orgIDs) > 0 {
		list, err := s.d.Client.SysOrg.Query().Where(sysorg.IDIn(orgIDs...)).Select(sysorg.FieldID, sysorg.FieldName).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range list {
			orgs[o.ID] = o.Name
		}
	}
	positions := map[int64]string{}
	if len(posIDs) > 0 {
		list, err := s.d.Client.SysPosition.Query().Where(sysposition.IDIn(posIDs...)).Select(sysposition.FieldID, sysposition.FieldName).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range list {
			positions[p.ID] = p.Name
		}
	}
	directors := map[int64]string{}
	if len(dirIDs) > 0 {
		list, err := s.d.Client.SysUser.Query().Where(sysuser.IDIn(dirIDs...)).
			Select(sysuser.FieldID, sysuser.FieldName, sysuser.FieldOrgID).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, u := range list {
			if who.Scope.ContainsUser(u.ID, u.OrgID) {
				directors[u.ID] = u.Name
			}
		}
	}
	out := make([]Item, len(rows))
	for i, u := range rows {
		out[i] = Item{
			ID: u.ID, Account: u.Account, Name: u.Name, Nickname: u.Nickname, Phone: u.Phone,
			Email: u.Email, Gender: u.Gender, Avatar: u.Avatar,
			OrgID: u.OrgID, PositionID: u.PositionID, DirectorID: u.DirectorID,
			Enabled: u.Enabled, IsSuperAdmin: u.IsSuperAdmin, ForceTotp: u.ForceTotp, TotpEnabled: u.TotpEnabled,
			CreateTime: request.EntityTime(u.CreateTime),
		}
		out[i].OrgName = lookup(orgs, u.OrgID)
		out[i].PositionName = lookup(positions, u.PositionID)
		out[i].DirectorName = lookup(directors, u.DirectorID)
	}
	return out, nil
}

func lookup(m map[int64]string, id *int64) *string {
	if id == nil {
		return nil
	}
	if v, ok := m[*id]; ok {
		return &v
	}
	return nil
}

// target loads a live user the caller may manage: 42001 when it does not
// exist, 41005 when it is outside the caller's data scope.
func (s *Service) target(ctx context.Context, who datascope.Caller, id int64) (*ent.SysUser, error) {
	u, err := s.d.Client.SysUser.Query().Where(sysuser.ID(id), sysuser.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.UserNotFound)
	}
	if err != nil {
		return nil, err
	}
	if !who.Scope.ContainsUser(u.ID, u.OrgID) {
		return nil, errcode.New(errcode.UserOutOfDataScope)
	}
	return u, nil
}

// Get returns one user with its role ids.
func (s *Service) Get(ctx context.Context, who datascope.Caller, id int64) (*Detail, error) {
	u, err := s.target(ctx, who, id)
	if err != nil {
		return nil, err
	}
	items, err := s.items(ctx, who, []*ent.SysUser{u})
	if err != nil {
		return nil, err
	}
	roles, err := s.roleIDs(ctx, s.d.Client, id)
	if err != nil {
		return nil, err
	}
	return &Detail{Item: items[0], RoleIDs: roles}, nil
}

// roleIDs returns the ids of the live roles linked to a user, sorted.
func (s *Service) roleIDs(ctx context.Context, c *ent.Client, userID int64) ([]int64, error) {
	linked, err := userRoleIDs(ctx, c, userID)
	if err != nil {
		return nil, err
	}
	if len(linked) == 0 {
		return []int64{}, nil
	}
	ids, err := c.SysRole.Query().Where(sysrole.IDIn(linked...), sysrole.IsDelete(false)).IDs(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return ids, nil
}

// userRoleIDs returns the role ids linked to a user (live or not).
func userRoleIDs(ctx context.Context, c *ent.Client, userID int64) ([]int64, error) {
	links, err := c.SysUserRole.Query().Where(sysuserrole.UserID(userID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(links))
	for i, l := range links {
		out[i] = l.RoleID
	}
	return out, nil
}

// ---- validation ----

// fields is a validated UpdateInput.
type fields struct {
	name                           string
	nickname, phone, email, gender *string
	avatar                         *string
	orgID, positionID, directorID  *int64
	enabled, forceTotp             bool
	roleIDs                        []int64
}

func invalid(field string) error { return request.Invalid(field) }

// clean trims an optional string; blank becomes nil.
// phoneFree answers 40036 when a live user other than self (0: none)
// holds phone (nil: no phone). UNIQUE(phone, delete_key) (migration 0016)
// guards against a race; this check names the field first.
func phoneFree(ctx context.Context, c *ent.Client, phone *string, self int64) error {
	if phone == nil || *phone == "" {
		return nil
	}
	taken, err := c.SysUser.Query().Where(sysuser.Phone(*phone), sysuser.IsDelete(false), sysuser.IDNEQ(self)).Exist(ctx)
	if err != nil {
		return err
	}
	if taken {
		return errcode.New(errcode.PhoneTaken).With("field", "phone")
	}
	return nil
}

func clean(v *string) *string {
	if v == nil {
		return nil
	}
	t := strings.TrimSpace(*v)
	if t == "" {
		return nil
	}
	return &t
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

func validAccount(a string) bool {
	return a != "" && utf8.RuneCountInString(a) <= maxAccount &&
		!strings.ContainsFunc(a, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

func validPhone(p string) bool {
	if len(p) < 5 || len(p) > 20 {
		return false
	}
	for i, r := range p {
		if (r < '0' || r > '9') && (i != 0 || r != '+') {
			return false
		}
	}
	return true
}

func validEmail(e string) bool {
	if utf8.RuneCountInString(e) > maxEmail || strings.ContainsAny(e, " \t<>") {
		return false
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e {
		return false
	}
	local, domain, ok := strings.Cut(e, "@")
	return ok && local != "" && domain != "" && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".")
}

// check validates the shape of an input (48002 naming the field) and
// normalises it.
func (s *Service) check(ctx context.Context, in UpdateInput) (fields, error) {
	f := fields{
		name: strings.TrimSpace(in.Name), nickname: clean(in.Nickname), phone: clean(in.Phone),
		email: clean(in.Email), gender: clean(in.Gender),
		orgID: optionalID(in.OrgID), positionID: optionalID(in.PositionID), directorID: optionalID(in.DirectorID),
		enabled: in.Enabled == nil || *in.Enabled, forceTotp: in.ForceTotp,
	}
	if f.name == "" || utf8.RuneCountInString(f.name) > maxName || hasControl(f.name) {
		return f, invalid("name")
	}
	if f.nickname != nil && (utf8.RuneCountInString(*f.nickname) > maxNickname || hasControl(*f.nickname)) {
		return f, invalid("nickname")
	}
	if f.phone != nil && (len(*f.phone) > maxPhone || !validPhone(*f.phone)) {
		return f, invalid("phone")
	}
	if f.email != nil && !validEmail(*f.email) {
		return f, invalid("email")
	}
	if f.gender != nil {
		ok, err := s.validGender(ctx, *f.gender)
		if err != nil {
			return f, err
		}
		if !ok {
			return f, invalid("gender")
		}
	}
	if a := clean(in.Avatar); a != nil {
		// Only signed file-view URLs of an image are accepted, as on the
		// personal profile (host/file/link).
		v, err := link.Avatar(ctx, s.d.Client, s.d.Config, *a)
		if err != nil {
			return f, err
		}
		f.avatar = &v
	}
	for _, r := range in.RoleIDs {
		if r <= 0 {
			return f, invalid("roleIds")
		}
		if !slices.Contains(f.roleIDs, int64(r)) {
			f.roleIDs = append(f.roleIDs, int64(r))
		}
	}
	slices.Sort(f.roleIDs)
	return f, nil
}

// validGender accepts a value of the gender dictionary (0, 1, 2 when the
// dictionary has no live items).
func (s *Service) validGender(ctx context.Context, v string) (bool, error) {
	if utf8.RuneCountInString(v) > maxGender {
		return false, nil
	}
	values, err := s.d.Client.SysDictItem.Query().
		Where(sysdictitem.DictTypeCode("gender"), sysdictitem.IsDelete(false)).
		Select(sysdictitem.FieldValue).Strings(ctx)
	if err != nil {
		return false, err
	}
	if len(values) == 0 {
		values = []string{"0", "1", "2"}
	}
	return slices.Contains(values, v), nil
}

// references checks that the org, position, director and roles exist
// (42003, 42005, 42001, 42002), that a restricted caller places the user
// in an org of their scope (42030) and names a director within their scope
// (41005); keeping the current org (curOrg) or director (curDirector) is
// always allowed.
func (s *Service) references(ctx context.Context, who datascope.Caller, f fields, self int64, curOrg, curDirector *int64) error {
	c := s.d.Client
	if f.orgID != nil {
		ok, err := c.SysOrg.Query().Where(sysorg.ID(*f.orgID), sysorg.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return errcode.New(errcode.OrgNotFound).With("id", *f.orgID)
		}
	}
	sameOrg := self != 0 && (f.orgID == nil && curOrg == nil || f.orgID != nil && curOrg != nil && *f.orgID == *curOrg)
	if !who.Scope.Unrestricted && !sameOrg && (f.orgID == nil || !who.Scope.HasOrg(*f.orgID)) {
		e := errcode.New(errcode.OrgOutOfScope)
		if f.orgID != nil {
			e = e.With("id", *f.orgID)
		}
		return e
	}
	if f.positionID != nil {
		ok, err := c.SysPosition.Query().Where(sysposition.ID(*f.positionID), sysposition.IsDelete(false)).Exist(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return errcode.New(errcode.PositionNotFound).With("id", *f.positionID)
		}
	}
	if f.directorID != nil {
		if *f.directorID == self {
			return invalid("directorId")
		}
		d, err := c.SysUser.Query().Where(sysuser.ID(*f.directorID), sysuser.IsDelete(false)).
			Select(sysuser.FieldID, sysuser.FieldOrgID).Only(ctx)
		if ent.IsNotFound(err) {
			return errcode.New(errcode.UserNotFound).With("id", *f.directorID)
		}
		if err != nil {
			return err
		}
		kept := curDirector != nil && *curDirector == d.ID
		if !kept && !who.Scope.ContainsUser(d.ID, d.OrgID) {
			return errcode.New(errcode.UserOutOfDataScope).With("id", d.ID)
		}
	}
	if len(f.roleIDs) > 0 {
		found, err := c.SysRole.Query().Where(sysrole.IDIn(f.roleIDs...), sysrole.IsDelete(false)).IDs(ctx)
		if err != nil {
			return err
		}
		for _, id := range f.roleIDs {
			if !slices.Contains(found, id) {
				return errcode.New(errcode.RoleNotFound).With("id", id)
			}
		}
	}
	return nil
}

// grantable enforces role delegation: a caller other than the super-admin
// may newly grant only enabled roles marked delegatable (41004).
func (s *Service) grantable(ctx context.Context, who datascope.Caller, added []int64) error {
	if who.SuperAdmin || len(added) == 0 {
		return nil
	}
	ok, err := s.d.Client.SysRole.Query().
		Where(sysrole.IDIn(added...), sysrole.IsDelete(false), sysrole.Enabled(true), sysrole.IsDelegatable(true)).IDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range added {
		if !slices.Contains(ok, id) {
			return errcode.New(errcode.RoleNotDelegatable).With("id", id)
		}
	}
	return nil
}

// effectivePassword checks a given password against the policy (42019) or
// generates one that satisfies it when possible.
func (s *Service) effectivePassword(ctx context.Context, given *string) (string, error) {
	policy, err := s.accounts.Policy(ctx)
	if err != nil {
		return "", err
	}
	if given != nil && *given != "" {
		if err := policy.Check(*given); err != nil {
			return "", err
		}
		return *given, nil
	}
	return policy.Generate(generatedLen)
}

// ---- writing ----

// Create adds a user and returns its id and effective initial password.
func (s *Service) Create(ctx context.Context, who datascope.Caller, in AddInput) (*CreateOutput, error) {
	account := strings.TrimSpace(in.Account)
	if !validAccount(account) {
		return nil, invalid("account")
	}
	f, err := s.check(ctx, in.UpdateInput)
	if err != nil {
		return nil, err
	}
	taken, err := s.d.Client.SysUser.Query().Where(sysuser.AccountNorm(schema.NormalizeAccount(account)), sysuser.IsDelete(false)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if taken {
		return nil, errcode.New(errcode.AccountExists)
	}
	if err := s.references(ctx, who, f, 0, nil, nil); err != nil {
		return nil, err
	}
	if err := phoneFree(ctx, s.d.Client, f.phone, 0); err != nil {
		return nil, err
	}
	if err := s.grantable(ctx, who, f.roleIDs); err != nil {
		return nil, err
	}
	if err := s.limits.WouldHold(ctx, who, 0, f.orgID, f.roleIDs); err != nil {
		return nil, err
	}
	plain, err := s.effectivePassword(ctx, in.Password)
	if err != nil {
		return nil, err
	}
	hash, err := s.d.Hasher.HashContext(ctx, plain)
	if err != nil {
		return nil, err
	}
	var id int64
	err = database.WithTx(ctx, s.d.Client, func(tx *ent.Tx) error {
		u, err := tx.SysUser.Create().
			SetAccount(account).SetName(f.name).
			SetNillableNickname(f.nickname).SetNillablePhone(f.phone).SetNillableEmail(f.email).SetNillableGender(f.gender).SetNillableAvatar(f.avatar).
			SetNillableOrgID(f.orgID).SetNillablePositionID(f.positionID).SetNillableDirectorID(f.directorID).
			SetEnabled(f.enabled).SetForceTotp(f.forceTotp).
			SetPasswordHash(hash).SetMustChangePassword(true).SetPasswordChangedAt(time.Now()).
			SetCreateUserID(who.UserID).
			Save(ctx)
		if err != nil {
			return err
		}
		id = u.ID
		return linkRoles(ctx, tx, who.UserID, id, f.roleIDs)
	})
	if ent.IsConstraintError(err) {
		// Another request took the account or the phone between the check
		// and the insert.
		if perr := phoneFree(ctx, s.d.Client, f.phone, 0); perr != nil {
			return nil, perr
		}
		return nil, errcode.New(errcode.AccountExists).Wrap(err)
	}
	if err != nil {
		return nil, err
	}
	return &CreateOutput{ID: id, InitialPassword: plain}, nil
}

func linkRoles(ctx context.Context, tx *ent.Tx, by, userID int64, roleIDs []int64) error {
	if len(roleIDs) == 0 {
		return nil
	}
	return tx.SysUserRole.MapCreateBulk(roleIDs, func(c *ent.SysUserRoleCreate, i int) {
		c.SetUserID(userID).SetRoleID(roleIDs[i]).SetCreateUserID(by)
	}).Exec(ctx)
}

// protect applies the rules every write on an existing user shares: only
// the super-admin may change a super-admin account (42007).
func protect(who datascope.Caller, u *ent.SysUser) error {
	if u.IsSuperAdmin && !who.SuperAdmin {
		return errcode.New(errcode.SuperAdminProtected)
	}
	return nil
}

// Update replaces a user's editable fields and roles.
func (s *Service) Update(ctx context.Context, who datascope.Caller, id int64, in UpdateInput) error {
	u, err := s.target(ctx, who, id)
	if err != nil {
		return err
	}
	if err := protect(who, u); err != nil {
		return err
	}
	if err := s.limits.Users(ctx, who, u.ID); err != nil {
		return err
	}
	f, err := s.check(ctx, in)
	if err != nil {
		return err
	}
	if !f.enabled {
		if u.IsSuperAdmin {
			return errcode.New(errcode.SuperAdminProtected)
		}
		if u.ID == who.UserID {
			return errcode.New(errcode.CannotOperateSelf)
		}
	}
	if err := s.references(ctx, who, f, u.ID, u.OrgID, u.DirectorID); err != nil {
		return err
	}
	current, err := userRoleIDs(ctx, s.d.Client, id)
	if err != nil {
		return err
	}
	var added, removed []int64
	for _, r := range f.roleIDs {
		if !slices.Contains(current, r) {
			added = append(added, r)
		}
	}
	for _, r := range current {
		if !slices.Contains(f.roleIDs, r) {
			removed = append(removed, r)
		}
	}
	if err := s.grantable(ctx, who, added); err != nil {
		return err
	}
	// After the change the user must still be within the caller's
	// authority (new roles, or an org move widening an org-relative scope).
	if err := s.limits.WouldHold(ctx, who, u.ID, f.orgID, f.roleIDs); err != nil {
		return err
	}
	if f.phone != nil && (u.Phone == nil || *u.Phone != *f.phone) {
		if err := phoneFree(ctx, s.d.Client, f.phone, id); err != nil {
			return err
		}
	}
	err = database.WithTx(ctx, s.d.Client, func(tx *ent.Tx) error {
		upd := tx.SysUser.UpdateOneID(id).Where(sysuser.IsDelete(false)).
			SetName(f.name).SetEnabled(f.enabled).SetForceTotp(f.forceTotp).SetUpdateUserID(who.UserID)
		setOrClear(f.avatar, upd.SetAvatar, upd.ClearAvatar)
		setOrClear(f.nickname, upd.SetNickname, upd.ClearNickname)
		setOrClear(f.phone, upd.SetPhone, upd.ClearPhone)
		setOrClear(f.email, upd.SetEmail, upd.ClearEmail)
		setOrClear(f.gender, upd.SetGender, upd.ClearGender)
		setOrClear(f.orgID, upd.SetOrgID, upd.ClearOrgID)
		setOrClear(f.positionID, upd.SetPositionID, upd.ClearPositionID)
		setOrClear(f.directorID, upd.SetDirectorID, upd.ClearDirectorID)
		if err := upd.Exec(ctx); err != nil {
			if ent.IsNotFound(err) {
				return errcode.New(errcode.UserNotFound)
			}
			if ent.IsConstraintError(err) {
				// Another request took the phone since the check.
				return errcode.New(errcode.PhoneTaken).With("field", "phone").Wrap(err)
			}
			return err
		}
		if len(removed) > 0 {
			if _, err := tx.SysUserRole.Delete().Where(sysuserrole.UserID(id), sysuserrole.RoleIDIn(removed...)).Exec(ctx); err != nil {
				return err
			}
		}
		return linkRoles(ctx, tx, who.UserID, id, added)
	})
	if err != nil {
		return err
	}
	if u.Enabled && !f.enabled {
		if _, err := s.d.Sessions.RevokeUser(ctx, id, reasonDisabled, ""); err != nil {
			return err
		}
	}
	return s.d.InvalidateAccess(ctx, id)
}

func setOrClear[T any, R any](v *T, set func(T) R, clear func() R) {
	if v != nil {
		set(*v)
	} else {
		clear()
	}
}

// deletable checks the rules of deleting a user: not the super-admin
// (42007), not the caller (42029).
func deletable(who datascope.Caller, u *ent.SysUser) *errcode.Error {
	if u.IsSuperAdmin {
		return errcode.New(errcode.SuperAdminProtected)
	}
	if u.ID == who.UserID {
		return errcode.New(errcode.CannotOperateSelf)
	}
	return nil
}

// Delete soft-deletes a user.
func (s *Service) Delete(ctx context.Context, who datascope.Caller, id int64) error {
	u, err := s.target(ctx, who, id)
	if err != nil {
		return err
	}
	if e := deletable(who, u); e != nil {
		return e
	}
	if err := s.limits.Users(ctx, who, u.ID); err != nil {
		return err
	}
	return s.deleteUsers(ctx, who, []int64{id})
}

// BatchDelete soft-deletes users in one transaction. Ids that name no live
// user are skipped; one protected, foreign-scope or own id rejects the
// whole batch; an id that is not positive is 48002.
func (s *Service) BatchDelete(ctx context.Context, who datascope.Caller, in IDsInput) error {
	ids := make([]int64, 0, len(in.IDs))
	for _, id := range in.IDs {
		if id <= 0 {
			return invalid("ids")
		}
		ids = append(ids, int64(id))
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := s.d.Client.SysUser.Query().Where(sysuser.IDIn(ids...), sysuser.IsDelete(false)).All(ctx)
	if err != nil {
		return err
	}
	live := make([]int64, 0, len(rows))
	for _, u := range rows {
		if e := deletable(who, u); e != nil {
			return e.With("id", u.ID)
		}
		if !who.Scope.ContainsUser(u.ID, u.OrgID) {
			return errcode.New(errcode.UserOutOfDataScope).With("id", u.ID)
		}
		live = append(live, u.ID)
	}
	if err := s.limits.Users(ctx, who, live...); err != nil {
		return err
	}
	return s.deleteUsers(ctx, who, live)
}

// deleteUsers soft-deletes users (is_delete and delete_key = id, which frees
// the account) and their role links, and runs the modules' forgets of a
// deleted user (external-login bindings are soft-deleted) in one
// transaction, then ends their sessions and drops their cached sets.
func (s *Service) deleteUsers(ctx context.Context, who datascope.Caller, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	err := database.WithTx(ctx, s.d.Client, func(tx *ent.Tx) error {
		for _, id := range ids {
			n, err := tx.SysUser.Update().
				Where(sysuser.ID(id), sysuser.IsDelete(false), sysuser.IsSuperAdmin(false)).
				SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(who.UserID).Save(ctx)
			if err != nil {
				return err
			}
			if n == 0 {
				// Deleted or promoted since it was checked.
				return errcode.New(errcode.UserNotFound).With("id", id)
			}
		}
		if _, err := tx.SysUserRole.Delete().Where(sysuserrole.UserIDIn(ids...)).Exec(ctx); err != nil {
			return err
		}
		for _, id := range ids {
			if err := s.d.Forget(ctx, tx, module.ForgetDeletedUser, id, who.UserID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if _, err := s.d.Sessions.RevokeUser(ctx, id, reasonDeleted, ""); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, s.d.InvalidateAccess(ctx, ids...))
	return errors.Join(errs...)
}

// ResetPassword sets a new password (given, or generated), forces a change
// at the next login and ends the user's sessions. It returns the effective
// plaintext. Nobody resets their own password here (42029: the personal
// password change asks for the current one).
func (s *Service) ResetPassword(ctx context.Context, who datascope.Caller, id int64, in PasswordInput) (string, error) {
	u, err := s.target(ctx, who, id)
	if err != nil {
		return "", err
	}
	if u.ID == who.UserID {
		return "", errcode.New(errcode.CannotOperateSelf)
	}
	if err := protect(who, u); err != nil {
		return "", err
	}
	if err := s.limits.Users(ctx, who, u.ID); err != nil {
		return "", err
	}
	plain, err := s.effectivePassword(ctx, in.NewPassword)
	if err != nil {
		return "", err
	}
	hash, err := s.d.Hasher.HashContext(ctx, plain)
	if err != nil {
		return "", err
	}
	n, err := s.d.Client.SysUser.Update().Where(sysuser.ID(id), sysuser.IsDelete(false)).
		SetPasswordHash(hash).SetMustChangePassword(true).SetPasswordChangedAt(time.Now()).
		SetLoginFailCount(0).ClearLockUntil().SetUpdateUserID(who.UserID).
		Save(ctx)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", errcode.New(errcode.UserNotFound)
	}
	if _, err := s.d.Sessions.RevokeUser(ctx, id, reasonReset, ""); err != nil {
		return "", err
	}
	// A reset also lifts a login lock on the account name.
	if err := s.accounts.Unlock(ctx, u.Account); err != nil {
		return "", err
	}
	return plain, nil
}

// SetEnabled enables or disables a user (48002 without enabled); disabling
// ends their sessions.
func (s *Service) SetEnabled(ctx context.Context, who datascope.Caller, id int64, in EnabledInput) error {
	if in.Enabled == nil {
		return invalid("enabled")
	}
	enabled := *in.Enabled
	u, err := s.target(ctx, who, id)
	if err != nil {
		return err
	}
	if u.IsSuperAdmin {
		return errcode.New(errcode.SuperAdminProtected)
	}
	if u.ID == who.UserID {
		return errcode.New(errcode.CannotOperateSelf)
	}
	if err := s.limits.Users(ctx, who, u.ID); err != nil {
		return err
	}
	n, err := s.d.Client.SysUser.Update().Where(sysuser.ID(id), sysuser.IsDelete(false)).
		SetEnabled(enabled).SetUpdateUserID(who.UserID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.UserNotFound)
	}
	if !enabled {
		if _, err := s.d.Sessions.RevokeUser(ctx, id, reasonDisabled, ""); err != nil {
			return fmt.Errorf("user %d disabled, but ending its sessions failed: %w", id, err)
		}
	}
	return s.d.InvalidateAccess(ctx, id)
}
