package notice

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/predicate"
	"github.com/adminkernel/kernel/ent/sysnotice"
	"github.com/adminkernel/kernel/ent/sysnoticeread"
	"github.com/adminkernel/kernel/ent/sysnoticereceiver"
	"github.com/adminkernel/kernel/ent/sysnoticewatermark"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// Notice types (the contract's NoticeType).
const (
	TypeNotice       = 1
	TypeAnnouncement = 2
	TypeMessage      = 3
)

// Receiver types (the contract's ReceiverType).
const (
	ReceiversAll   = 0
	ReceiversRoles = 1
	ReceiversUsers = 2
)

// Bounds of a notice.
const (
	maxTitleLen     = 256
	maxContentLen   = 20000
	MaxReceivers    = 5000
	maxActions      = 5
	maxLabelLen     = 64
	maxURLLen       = 1024
	maxStyleLen     = 32
	maxConfirmLen   = 256
	maxCommentLen   = 256
	maxReceiverRead = 1000 // rows read at once when checking receivers
)

// Action is a button on a notice: a site path the console calls or opens.
type Action struct {
	Label  string  `json:"label"`
	Method string  `json:"method"`
	URL    string  `json:"url"`
	Style  *string `json:"style,omitempty"`
	// Confirm and Comment are texts (the kernel's console) or the
	// original UI's boolean flags (TextOrFlag).
	Confirm TextOrFlag `json:"confirm,omitzero"`
	Comment TextOrFlag `json:"comment,omitzero"`
}

// Input is the body of POST /sys/notice.
type Input struct {
	Title        string          `json:"title"`
	Content      *string         `json:"content"`
	Type         int             `json:"type"`
	ReceiverType int             `json:"receiverType"`
	ReceiverIDs  []request.Int64 `json:"receiverIds"`
	Actions      []Action        `json:"actions"`
}

// Notice is the contract's SysNotice.
type Notice struct {
	ID int64 `json:"id"`
	request.Audit
	Title        string  `json:"title"`
	Content      *string `json:"content"`
	Type         int     `json:"type"`
	ReceiverType int     `json:"receiverType"`
	ActionsJSON  *string `json:"actionsJson"`
}

// MineItem is the contract's NoticeMineItem.
type MineItem struct {
	ID          int64    `json:"id"`
	Title       string   `json:"title"`
	Content     *string  `json:"content"`
	Type        int      `json:"type"`
	PublishTime string   `json:"publishTime"`
	IsRead      bool     `json:"isRead"`
	Actions     []Action `json:"actions,omitempty"`
	// PublisherName names who published the notice (a kernel addition):
	// the console shows it before running an action that calls the API.
	// Null when the publisher is unknown.
	PublisherName *string `json:"publisherName"`
}

// Filter is the query of the page and mine lists.
type Filter struct {
	Title      string
	Type       *int64
	OnlyUnread bool
}

// Service is the notice service: handler → Service → ent. It is safe for
// concurrent use.
type Service struct {
	client *ent.Client
	events *events.Bus
	// holds reports whether a publisher may call a route (its permission
	// code); nil accepts no action that calls the API.
	holds Holds
	// routes returns the route table the actions are resolved against.
	routes func() []route.Route
}

// Holds reports whether the user holds a permission code.
type Holds func(ctx context.Context, userID int64, code string) (bool, error)

// NewService returns the service over the kernel's tables; ev receives a
// NoticePublished after each publication and a NoticeRead after reads
// (nil = none). routes and holds decide which API calls an action may make
// (see CheckActions); nil accepts only plain links.
func NewService(client *ent.Client, ev *events.Bus, routes func() []route.Route, holds Holds) *Service {
	return &Service{client: client, events: ev, routes: routes, holds: holds}
}

func noticeDTO(r *ent.SysNotice) Notice {
	return Notice{
		ID: r.ID, Audit: request.AuditOf(r.IsDelete, r.CreateTime, r.CreateUserID, r.UpdateTime, r.UpdateUserID),

		Title: r.Title, Content: r.Content, Type: r.Type, ReceiverType: r.ReceiverType, ActionsJSON: r.ActionsJSON,
	}
}

// validActionStyles are the button styles of the console.
var validActionStyles = []string{"default", "primary", "success", "info", "warning", "danger", "link"}

// SitePath reports whether u is a path of this site: it starts with one
// "/" (not "//", not "/\"), has no scheme, host, backslash, control or
// space characters, and stays a path once parsed.
func SitePath(u string) bool {
	if u == "" || len(u) > maxURLLen || u[0] != '/' {
		return false
	}
	if len(u) > 1 && (u[1] == '/' || u[1] == '\\') {
		return false
	}
	for _, r := range u {
		if r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) || r == utf8.RuneError {
			return false
		}
	}
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "" && p.Host == "" && p.User == nil && strings.HasPrefix(p.Path, "/")
}

func validAction(a *Action) bool {
	a.Label = strings.TrimSpace(a.Label)
	a.Method = strings.ToUpper(strings.TrimSpace(a.Method))
	a.URL = strings.TrimSpace(a.URL)
	if a.Label == "" || utf8.RuneCountInString(a.Label) > maxLabelLen || (a.Method != "GET" && a.Method != "POST") || !SitePath(a.URL) {
		return false
	}
	var err error
	if a.Style, err = request.OptionalText("style", a.Style, maxStyleLen); err != nil {
		return false
	}
	if a.Style != nil && !slices.Contains(validActionStyles, strings.ToLower(*a.Style)) {
		return false
	}
	if a.Confirm.Text, err = request.OptionalText("confirm", a.Confirm.Text, maxConfirmLen); err != nil {
		return false
	}
	if a.Comment.Text, err = request.OptionalText("comment", a.Comment.Text, maxCommentLen); err != nil {
		return false
	}
	return true
}

// validate checks and normalises a publication; it returns the distinct
// receiver ids.
func validate(in *Input) ([]int64, error) {
	var err error
	if in.Title, err = request.RequiredText("title", in.Title, maxTitleLen); err != nil {
		return nil, err
	}
	if in.Content, err = request.OptionalText("content", in.Content, maxContentLen); err != nil {
		return nil, err
	}
	if in.Type < TypeNotice || in.Type > TypeMessage {
		return nil, request.Invalid("type")
	}
	if len(in.Actions) > maxActions {
		return nil, errcode.New(errcode.NoticeActionInvalid)
	}
	for i := range in.Actions {
		if !validAction(&in.Actions[i]) {
			return nil, errcode.New(errcode.NoticeActionInvalid)
		}
	}
	switch in.ReceiverType {
	case ReceiversAll:
		return nil, nil
	case ReceiversRoles, ReceiversUsers:
	default:
		return nil, request.Invalid("receiverType")
	}
	if len(in.ReceiverIDs) == 0 {
		return nil, errcode.New(errcode.NoticeReceiverRequired)
	}
	if len(in.ReceiverIDs) > MaxReceivers {
		return nil, request.Invalid("receiverIds")
	}
	ids := make([]int64, 0, len(in.ReceiverIDs))
	for _, id := range in.ReceiverIDs {
		if id <= 0 {
			return nil, errcode.New(errcode.NoticeReceiverNotFound)
		}
		ids = append(ids, int64(id))
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// checkReceivers returns 45003 unless every id is a live role (or user).
func (s *Service) checkReceivers(ctx context.Context, kind int, ids []int64) error {
	for chunk := range slices.Chunk(ids, maxReceiverRead) {
		var n int
		var err error
		if kind == ReceiversRoles {
			n, err = s.client.SysRole.Query().Where(sysrole.IDIn(chunk...), sysrole.IsDelete(false)).Count(ctx)
		} else {
			n, err = s.client.SysUser.Query().Where(sysuser.IDIn(chunk...), sysuser.IsDelete(false)).Count(ctx)
		}
		if err != nil {
			return err
		}
		if n != len(chunk) {
			return errcode.New(errcode.NoticeReceiverNotFound)
		}
	}
	return nil
}

// Publish stores a notice and its receivers (one row per listed role or
// user; none for All) and announces it to the realtime hub. An action that
// calls the API must name a route the publisher may call (CheckActions).
func (s *Service) Publish(ctx context.Context, who datascope.Caller, in Input) (int64, error) {
	userID := who.UserID
	ids, err := validate(&in)
	if err != nil {
		return 0, err
	}
	var routes []route.Route
	if s.routes != nil {
		routes = s.routes()
	}
	if err := CheckActions(ctx, in.Actions, routes, func(ctx context.Context, code string) (bool, error) {
		if who.SuperAdmin {
			return true, nil
		}
		if s.holds == nil {
			return false, nil
		}
		return s.holds(ctx, userID, code)
	}); err != nil {
		return 0, err
	}
	if err := s.checkReceivers(ctx, in.ReceiverType, ids); err != nil {
		return 0, err
	}
	var actions *string
	if len(in.Actions) > 0 {
		raw, err := json.Marshal(in.Actions)
		if err != nil {
			return 0, err
		}
		v := string(raw)
		actions = &v
	}
	var n *ent.SysNotice
	err = database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		var err error
		n, err = tx.SysNotice.Create().SetTitle(in.Title).SetNillableContent(in.Content).SetType(in.Type).
			SetReceiverType(in.ReceiverType).SetNillableActionsJSON(actions).SetCreateUserID(userID).Save(ctx)
		if err != nil {
			return err
		}
		for chunk := range slices.Chunk(ids, maxReceiverRead) {
			rows := make([]*ent.SysNoticeReceiverCreate, len(chunk))
			for i, id := range chunk {
				rows[i] = tx.SysNoticeReceiver.Create().SetNoticeID(n.ID).SetReceiverID(id).SetCreateUserID(userID)
			}
			if err := tx.SysNoticeReceiver.CreateBulk(rows...).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.events.Publish(events.NoticePublished{ID: n.ID})
	return n.ID, nil
}

// InScope is the predicate of the notices an administrator may see and
// manage: every notice for an unrestricted scope; otherwise the ones the
// caller published and the ones published by a user (live or deleted)
// whose org is in the caller's scope. A notice without a publisher is
// outside every restricted scope.
func InScope(who datascope.Caller) []predicate.SysNotice {
	if who.SuperAdmin || who.Scope.Unrestricted {
		return nil
	}
	return []predicate.SysNotice{func(sel *sql.Selector) {
		ors := []*sql.Predicate{sql.EQ(sel.C(sysnotice.FieldCreateUserID), who.UserID)}
		if len(who.Scope.OrgIDs) > 0 {
			u := sql.Table(sysuser.Table)
			orgs := make([]any, len(who.Scope.OrgIDs))
			for i, id := range who.Scope.OrgIDs {
				orgs[i] = id
			}
			ors = append(ors, sql.In(sel.C(sysnotice.FieldCreateUserID),
				sql.Select(u.C(sysuser.FieldID)).From(u).Where(sql.In(u.C(sysuser.FieldOrgID), orgs...))))
		}
		sel.Where(sql.Or(ors...))
	}}
}

// Page lists the live notices within the caller's data scope (InScope)
// for administrators; Title is fuzzy.
func (s *Service) Page(ctx context.Context, who datascope.Caller, f Filter, p request.Page) ([]Notice, int, error) {
	q := s.client.SysNotice.Query().Where(sysnotice.IsDelete(false)).Where(InScope(who)...)
	if v := strings.TrimSpace(f.Title); v != "" {
		q.Where(sysnotice.TitleContainsFold(v))
	}
	if f.Type != nil {
		q.Where(sysnotice.Type(int(*f.Type)))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	rows, err := q.Order(ent.Desc(sysnotice.FieldID)).Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Notice, len(rows))
	for i, r := range rows {
		out[i] = noticeDTO(r)
	}
	return out, total, nil
}

// target loads a live notice the caller may manage, the way users are
// treated (host/user): 45001 when there is none, 45005 when its publisher
// is outside the caller's data scope, 42007 when the super-admin published
// it and the caller is not the super-admin.
func (s *Service) target(ctx context.Context, who datascope.Caller, id int64) (*ent.SysNotice, error) {
	n, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	ok, err := s.client.SysNotice.Query().Where(sysnotice.ID(id)).Where(InScope(who)...).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errcode.New(errcode.NoticeOutOfDataScope)
	}
	if !who.SuperAdmin && n.CreateUserID != nil && *n.CreateUserID != who.UserID {
		super, err := s.client.SysUser.Query().Where(sysuser.ID(*n.CreateUserID), sysuser.IsSuperAdmin(true)).Exist(ctx)
		if err != nil {
			return nil, err
		}
		if super {
			return nil, errcode.New(errcode.SuperAdminProtected)
		}
	}
	return n, nil
}

// Delete soft-deletes a live notice the caller may manage (target).
func (s *Service) Delete(ctx context.Context, who datascope.Caller, id int64) error {
	if _, err := s.target(ctx, who, id); err != nil {
		return err
	}
	n, err := s.client.SysNotice.Update().Where(sysnotice.ID(id), sysnotice.IsDelete(false)).
		SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(who.UserID).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.NoticeNotFound)
	}
	return nil
}

// reader is what decides which notices a user sees: the user, the user's
// live roles (read now, so a role granted after publication counts) and the
// read-all watermark.
type reader struct {
	userID    int64
	roles     []int64
	watermark int64
}

func (s *Service) reader(ctx context.Context, userID int64) (reader, error) {
	r := reader{userID: userID}
	roles, err := int64s(ctx, s.client.SysUserRole.Query().
		Where(sysuserrole.UserID(userID), func(sel *sql.Selector) {
			t := sql.Table(sysrole.Table)
			sel.Where(sql.In(sel.C(sysuserrole.FieldRoleID),
				sql.Select(t.C(sysrole.FieldID)).From(t).Where(sql.And(sql.EQ(t.C(sysrole.FieldIsDelete), false), sql.EQ(t.C(sysrole.FieldEnabled), true)))))
		}).
		Select(sysuserrole.FieldRoleID))
	if err != nil {
		return r, err
	}
	r.roles = roles
	wm, err := int64s(ctx, s.client.SysNoticeWatermark.Query().Where(sysnoticewatermark.UserID(userID)).
		Select(sysnoticewatermark.FieldReadUptoID))
	if err != nil {
		return r, err
	}
	if len(wm) > 0 {
		r.watermark = wm[0]
	}
	return r, nil
}

// visible is the predicate of the notices r may see: live, and addressed to
// everyone, to r's user or to one of r's roles.
func (r reader) visible() predicate.SysNotice {
	return func(sel *sql.Selector) {
		rc := sql.Table(sysnoticereceiver.Table)
		byUser := sql.And(
			sql.EQ(sel.C(sysnotice.FieldReceiverType), ReceiversUsers),
			sql.In(sel.C(sysnotice.FieldID), sql.Select(rc.C(sysnoticereceiver.FieldNoticeID)).From(rc).
				Where(sql.EQ(rc.C(sysnoticereceiver.FieldReceiverID), r.userID))),
		)
		ors := []*sql.Predicate{sql.EQ(sel.C(sysnotice.FieldReceiverType), ReceiversAll), byUser}
		if len(r.roles) > 0 {
			rr := sql.Table(sysnoticereceiver.Table)
			roles := make([]any, len(r.roles))
			for i, id := range r.roles {
				roles[i] = id
			}
			ors = append(ors, sql.And(
				sql.EQ(sel.C(sysnotice.FieldReceiverType), ReceiversRoles),
				sql.In(sel.C(sysnotice.FieldID), sql.Select(rr.C(sysnoticereceiver.FieldNoticeID)).From(rr).
					Where(sql.In(rr.C(sysnoticereceiver.FieldReceiverID), roles...))),
			))
		}
		sel.Where(sql.And(sql.EQ(sel.C(sysnotice.FieldIsDelete), false), sql.Or(ors...)))
	}
}

// unread is the predicate of the notices r has not read: above the
// watermark and without a read row.
func (r reader) unread() predicate.SysNotice {
	return func(sel *sql.Selector) {
		rd := sql.Table(sysnoticeread.Table)
		sel.Where(sql.And(
			sql.GT(sel.C(sysnotice.FieldID), r.watermark),
			sql.NotIn(sel.C(sysnotice.FieldID), sql.Select(rd.C(sysnoticeread.FieldNoticeID)).From(rd).
				Where(sql.EQ(rd.C(sysnoticeread.FieldUserID), r.userID))),
		))
	}
}

// Mine lists the notices addressed to the user, newest first.
func (s *Service) Mine(ctx context.Context, userID int64, f Filter, p request.Page) ([]MineItem, int, error) {
	r, err := s.reader(ctx, userID)
	if err != nil {
		return nil, 0, err
	}
	q := s.client.SysNotice.Query().Where(r.visible())
	if v := strings.TrimSpace(f.Title); v != "" {
		q.Where(sysnotice.TitleContainsFold(v))
	}
	if f.Type != nil {
		q.Where(sysnotice.Type(int(*f.Type)))
	}
	if f.OnlyUnread {
		q.Where(r.unread())
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	rows, err := q.Order(ent.Desc(sysnotice.FieldID)).Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	read := map[int64]bool{}
	var above []int64
	for _, n := range rows {
		if n.ID > r.watermark {
			above = append(above, n.ID)
		}
	}
	if len(above) > 0 && !f.OnlyUnread {
		ids, err := int64s(ctx, s.client.SysNoticeRead.Query().
			Where(sysnoticeread.UserID(userID), sysnoticeread.NoticeIDIn(above...)).
			Select(sysnoticeread.FieldNoticeID))
		if err != nil {
			return nil, 0, err
		}
		for _, id := range ids {
			read[id] = true
		}
	}
	names, err := s.publishers(ctx, rows)
	if err != nil {
		return nil, 0, err
	}
	out := make([]MineItem, len(rows))
	for i, n := range rows {
		out[i] = MineItem{
			ID: n.ID, Title: n.Title, Content: n.Content, Type: n.Type, PublishTime: request.EntityTime(n.PublishTime),
			IsRead: n.ID <= r.watermark || read[n.ID], Actions: actionsOf(n.ActionsJSON),
		}
		if n.CreateUserID != nil {
			if name, ok := names[*n.CreateUserID]; ok {
				out[i].PublisherName = &name
			}
		}
	}
	return out, total, nil
}

// publishers names the publishers of rows (name and account), deleted
// users included.
func (s *Service) publishers(ctx context.Context, rows []*ent.SysNotice) (map[int64]string, error) {
	var ids []int64
	for _, n := range rows {
		if n.CreateUserID != nil {
			ids = append(ids, *n.CreateUserID)
		}
	}
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	slices.Sort(ids)
	users, err := s.client.SysUser.Query().Where(sysuser.IDIn(slices.Compact(ids)...)).
		Select(sysuser.FieldID, sysuser.FieldName, sysuser.FieldAccount).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		out[u.ID] = u.Name + " (" + u.Account + ")"
	}
	return out, nil
}

// actionsOf decodes stored actions (nil when absent or unreadable).
func actionsOf(raw *string) []Action {
	if raw == nil {
		return nil
	}
	var out []Action
	if json.Unmarshal([]byte(*raw), &out) != nil {
		return nil
	}
	return out
}

// Visible reports whether the notice is live and addressed to the user.
func (s *Service) Visible(ctx context.Context, userID, noticeID int64) (bool, error) {
	r, err := s.reader(ctx, userID)
	if err != nil {
		return false, err
	}
	return s.client.SysNotice.Query().Where(sysnotice.ID(noticeID), r.visible()).Exist(ctx)
}

// Get returns a live notice (45001 when there is none).
func (s *Service) Get(ctx context.Context, id int64) (*ent.SysNotice, error) {
	n, err := s.client.SysNotice.Query().Where(sysnotice.ID(id), sysnotice.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.NoticeNotFound)
	}
	return n, err
}

// Receivers returns the roles or users a notice is addressed to.
func (s *Service) Receivers(ctx context.Context, noticeID int64) ([]int64, error) {
	return int64s(ctx, s.client.SysNoticeReceiver.Query().Where(sysnoticereceiver.NoticeID(noticeID)).
		Select(sysnoticereceiver.FieldReceiverID))
}

// UsersInRoles returns which of the users hold one of the live, enabled
// roles.
func (s *Service) UsersInRoles(ctx context.Context, roles, users []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(roles) == 0 || len(users) == 0 {
		return out, nil
	}
	live, err := s.client.SysRole.Query().Where(sysrole.IDIn(roles...), sysrole.IsDelete(false), sysrole.Enabled(true)).IDs(ctx)
	if err != nil || len(live) == 0 {
		return out, err
	}
	for chunk := range slices.Chunk(users, maxReceiverRead) {
		ids, err := int64s(ctx, s.client.SysUserRole.Query().Where(sysuserrole.RoleIDIn(live...), sysuserrole.UserIDIn(chunk...)).
			Select(sysuserrole.FieldUserID))
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			out[id] = true
		}
	}
	return out, nil
}

// UnreadCount counts the user's unread notices.
func (s *Service) UnreadCount(ctx context.Context, userID int64) (int, error) {
	r, err := s.reader(ctx, userID)
	if err != nil {
		return 0, err
	}
	return s.client.SysNotice.Query().Where(r.visible(), r.unread()).Count(ctx)
}

// Read marks one notice read for the user (45001 unless it is live and
// addressed to the user). At most one row is written, and none when the
// notice is at or below the user's watermark or already read.
func (s *Service) Read(ctx context.Context, userID, id int64) error {
	r, err := s.reader(ctx, userID)
	if err != nil {
		return err
	}
	ok, err := s.client.SysNotice.Query().Where(sysnotice.ID(id), r.visible()).Exist(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return errcode.New(errcode.NoticeNotFound)
	}
	if id <= r.watermark {
		return nil
	}
	err = s.client.SysNoticeRead.Create().SetUserID(userID).SetNoticeID(id).SetCreateUserID(userID).
		OnConflictColumns(sysnoticeread.FieldUserID, sysnoticeread.FieldNoticeID).DoNothing().Exec(ctx)
	if err != nil && !isNoRows(err) {
		return err
	}
	s.events.Publish(events.NoticeRead{UserID: userID})
	return nil
}

// isNoRows: MySQL's INSERT IGNORE-style upsert of an existing row reports
// no id, which ent returns as an error.
func isNoRows(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no rows")
}

// ReadAll marks every notice the user sees read: the watermark moves to the
// newest visible notice (one row per user, updated in place) and the read
// rows at or below it are removed. No row is written per notice.
func (s *Service) ReadAll(ctx context.Context, userID int64) error {
	r, err := s.reader(ctx, userID)
	if err != nil {
		return err
	}
	top, err := s.client.SysNotice.Query().Where(r.visible()).Order(ent.Desc(sysnotice.FieldID)).Limit(1).IDs(ctx)
	if err != nil {
		return err
	}
	if len(top) == 0 || top[0] <= r.watermark {
		return nil
	}
	upto := top[0]
	err = s.client.SysNoticeWatermark.Create().SetUserID(userID).SetReadUptoID(upto).SetCreateUserID(userID).
		OnConflictColumns(sysnoticewatermark.FieldUserID).DoNothing().Exec(ctx)
	if err != nil && !isNoRows(err) {
		return err
	}
	// The row existed: move it forward, never back (a concurrent read-all
	// may have moved it further).
	if _, err := s.client.SysNoticeWatermark.Update().
		Where(sysnoticewatermark.UserID(userID), sysnoticewatermark.ReadUptoIDLT(upto)).
		SetReadUptoID(upto).SetUpdateUserID(userID).Save(ctx); err != nil {
		return err
	}
	if _, err := s.client.SysNoticeRead.Delete().
		Where(sysnoticeread.UserID(userID), sysnoticeread.NoticeIDLTE(upto)).Exec(ctx); err != nil {
		return err
	}
	s.events.Publish(events.NoticeRead{UserID: userID})
	return nil
}

// scanner is an ent select of one column.
type scanner interface {
	Scan(ctx context.Context, v any) error
}

// int64s reads a selected int64 column.
func int64s(ctx context.Context, sel scanner) ([]int64, error) {
	var out []int64
	if err := sel.Scan(ctx, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Pushed is the data of the hub's notice message.
type Pushed struct {
	ID          int64  `json:"id"`
	Title       string `json:"title"`
	Type        int    `json:"type"`
	PublishTime string `json:"publishTime"`
}

// Audience returns the hub message of a live notice and which of users
// receive it (ok false when the notice is gone): every user for All, the
// listed ones for Users, the holders of a listed live, enabled role for
// Roles (read now).
func (s *Service) Audience(ctx context.Context, noticeID int64, users []int64) (any, func(int64) bool, bool, error) {
	n, err := s.client.SysNotice.Query().Where(sysnotice.ID(noticeID), sysnotice.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	msg := Pushed{ID: n.ID, Title: n.Title, Type: n.Type, PublishTime: request.EntityTime(n.PublishTime)}
	if n.ReceiverType == ReceiversAll {
		return msg, func(int64) bool { return true }, true, nil
	}
	ids, err := s.Receivers(ctx, noticeID)
	if err != nil {
		return nil, nil, false, err
	}
	if n.ReceiverType == ReceiversUsers {
		set := make(map[int64]bool, len(ids))
		for _, id := range ids {
			set[id] = true
		}
		return msg, func(u int64) bool { return set[u] }, true, nil
	}
	holders, err := s.UsersInRoles(ctx, ids, users)
	if err != nil {
		return nil, nil, false, err
	}
	return msg, func(u int64) bool { return holders[u] }, true, nil
}
