package reauth

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysmfahighsensitivity"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// listTTL bounds how long a cached copy of the list may outlive a change
// that raced with the read that filled it (a change deletes the entry on
// every replica at once).
const listTTL = time.Minute

// maxRemark is the length of a list item's remark in characters.
const maxRemark = 512

// Item is one administrator-added high-sensitivity code.
type Item struct {
	ID             int64   `json:"id"`
	PermissionCode string  `json:"permissionCode"`
	Remark         *string `json:"remark"`
}

// List is the answer of GET /sys/mfa/high-sensitivity: the codes of the
// routes the kernel marks +R, and the administrators' additions.
type List struct {
	Defaults []string `json:"defaults"`
	Customs  []Item   `json:"customs"`
}

// AddInput is the body of POST /sys/mfa/high-sensitivity.
type AddInput struct {
	PermissionCode string  `json:"permissionCode"`
	Remark         *string `json:"remark"`
}

// Sensitive is the high-sensitivity list: the +R routes' codes plus the
// rows of sys_mfa_high_sensitivity, the latter cached (one near-cached
// entry; a change drops it on every replica).
type Sensitive struct {
	client *ent.Client
	store  cache.Store
	routes func() []route.Route
}

// NewSensitive returns the list over client and store; routes returns the
// kernel's route table (complete once the modules are registered).
func NewSensitive(client *ent.Client, store cache.Store, routes func() []route.Route) *Sensitive {
	return &Sensitive{client: client, store: store, routes: routes}
}

// Defaults returns the sorted permission codes of the routes marked +R.
func (s *Sensitive) Defaults() []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range s.routes() {
		if r.Reauth && r.Access == route.Permission {
			code := r.PermissionCode()
			if !seen[code] {
				seen[code] = true
				out = append(out, code)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Get returns the list.
func (s *Sensitive) Get(ctx context.Context) (List, error) {
	rows, err := s.client.SysMfaHighSensitivity.Query().
		Order(ent.Asc(sysmfahighsensitivity.FieldPermissionCode)).All(ctx)
	if err != nil {
		return List{}, err
	}
	out := List{Defaults: s.Defaults(), Customs: make([]Item, 0, len(rows))}
	for _, r := range rows {
		out.Customs = append(out.Customs, Item{ID: r.ID, PermissionCode: r.PermissionCode, Remark: r.Remark})
	}
	return out, nil
}

// normalize writes a code the way route.PermissionCode derives it: the
// method upper-case, the path lower-case.
func normalize(code string) string {
	code = strings.TrimSpace(code)
	method, path, ok := strings.Cut(code, ":")
	if !ok {
		return code
	}
	return strings.ToUpper(method) + ":" + strings.ToLower(path)
}

// Add puts a permission code on the list. The code must be one of a
// permission route (42031 MenuPermissionInvalid otherwise); a code already
// on the list, by default or added, is refused with 48002 naming the field
// permissionCode and reason "duplicate".
func (s *Sensitive) Add(ctx context.Context, userID int64, in AddInput) (Item, error) {
	return s.AddChecked(ctx, userID, in, nil)
}

// Allow refuses a caller's change of the list concerning code (nil: any
// change is allowed).
type Allow func(ctx context.Context, code string) error

// AddChecked is Add for a caller whose change allow refuses or lets
// through, once the code is known to name a permission route (the
// administration route passes the authority rule: only codes the caller
// holds).
func (s *Sensitive) AddChecked(ctx context.Context, userID int64, in AddInput, allow Allow) (Item, error) {
	code := normalize(in.PermissionCode)
	if code == "" || utf8.RuneCountInString(code) > 256 {
		return Item{}, request.Invalid("permissionCode")
	}
	known := false
	for _, r := range s.routes() {
		if r.Access == route.Permission && r.PermissionCode() == code {
			known = true
			break
		}
	}
	if !known {
		return Item{}, errcode.New(errcode.MenuPermissionInvalid).With("code", code)
	}
	if allow != nil {
		if err := allow(ctx, code); err != nil {
			return Item{}, err
		}
	}
	duplicate := func() error {
		return request.Invalid("permissionCode").With("reason", "duplicate")
	}
	if slices.Contains(s.Defaults(), code) {
		return Item{}, duplicate()
	}
	remark, err := request.OptionalText("remark", in.Remark, maxRemark)
	if err != nil {
		return Item{}, err
	}
	row, err := s.client.SysMfaHighSensitivity.Create().
		SetPermissionCode(code).SetNillableRemark(remark).SetCreateUserID(userID).Save(ctx)
	if ent.IsConstraintError(err) {
		return Item{}, duplicate()
	}
	if err != nil {
		return Item{}, err
	}
	if err := s.store.Delete(ctx, listKey); err != nil {
		return Item{}, err
	}
	return Item{ID: row.ID, PermissionCode: row.PermissionCode, Remark: row.Remark}, nil
}

// Delete removes an added code; an unknown id is 48002 naming the field
// id.
func (s *Sensitive) Delete(ctx context.Context, id int64) error {
	return s.DeleteChecked(ctx, id, nil)
}

// DeleteChecked is Delete for a caller whose change allow refuses or lets
// through (given the removed row's code).
func (s *Sensitive) DeleteChecked(ctx context.Context, id int64, allow Allow) error {
	if allow != nil {
		row, err := s.client.SysMfaHighSensitivity.Get(ctx, id)
		if ent.IsNotFound(err) {
			return request.Invalid("id")
		}
		if err != nil {
			return err
		}
		if err := allow(ctx, row.PermissionCode); err != nil {
			return err
		}
	}
	n, err := s.client.SysMfaHighSensitivity.Delete().Where(sysmfahighsensitivity.ID(id)).Exec(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return request.Invalid("id")
	}
	return s.store.Delete(ctx, listKey)
}

// Has reports whether an administrator added code to the list. A cache hit
// reads no database and allocates nothing.
func (s *Sensitive) Has(ctx context.Context, code string) (bool, error) {
	if code == "" {
		return false, nil
	}
	val, ok, err := cache.Peek(ctx, s.store, listKey)
	if err != nil {
		return false, err
	}
	if !ok {
		if val, err = s.fill(ctx); err != nil {
			return false, err
		}
	}
	// val is "\n" + codes joined by "\n" + "\n"; codes hold no newline.
	for len(val) > 0 {
		line, rest, _ := bytes.Cut(val, newline)
		if string(line) == code {
			return true, nil
		}
		val = rest
	}
	return false, nil
}

var newline = []byte{'\n'}

func (s *Sensitive) fill(ctx context.Context) ([]byte, error) {
	codes, err := s.client.SysMfaHighSensitivity.Query().Select(sysmfahighsensitivity.FieldPermissionCode).Strings(ctx)
	if err != nil {
		return nil, err
	}
	val := []byte("\n" + strings.Join(codes, "\n") + "\n")
	if len(codes) == 0 {
		val = []byte("\n")
	}
	if err := s.store.Set(ctx, listKey, val, listTTL); err != nil {
		return nil, err
	}
	return val, nil
}
