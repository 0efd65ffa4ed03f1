// Package authz resolves a user's permission codes: the union of the codes
// of every enabled menu granted to every enabled role of the user. The set
// is cached per user (Service:Cache:PermissionMinutes) and checked without
// allocating on a cache hit.
package authz

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysrolemenu"
	"github.com/adminkernel/kernel/ent/sysuserrole"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/events"
)

// KeyPrefix namespaces permission sets in the cache.
const KeyPrefix = "perm:"

// Resolver answers permission checks.
type Resolver struct {
	client *ent.Client
	store  cache.Store
	ttl    time.Duration
	events *events.Bus
}

// New returns a resolver; ttl is Service:Cache:PermissionMinutes. ev
// receives a PermissionsChanged event per invalidation (nil: none).
func New(client *ent.Client, store cache.Store, ttl time.Duration, ev *events.Bus) *Resolver {
	return &Resolver{client: client, store: store, ttl: ttl, events: ev}
}

// NormalizeCode trims a code and normalises its case: the method (before the
// first ':') upper case, the route template lower case.
func NormalizeCode(code string) string {
	code = strings.TrimSpace(code)
	method, path, ok := strings.Cut(code, ":")
	if !ok {
		return strings.ToUpper(code)
	}
	return strings.ToUpper(strings.TrimSpace(method)) + ":" + strings.ToLower(strings.TrimSpace(path))
}

// SplitCodes splits a menu's permission field (codes joined with ';'),
// normalises each and drops blanks and duplicates, keeping order.
func SplitCodes(field string) []string {
	var out []string
	for _, c := range strings.Split(field, ";") {
		if c = NormalizeCode(c); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Has reports whether the user holds code (already normalised, as produced
// by route.PermissionCode).
func (r *Resolver) Has(ctx context.Context, userID int64, code string) (bool, error) {
	// The cached set is scanned in place (cache.Peek): a hit copies nothing.
	if set, ok, err := cache.Peek(ctx, r.store, key(userID)); err == nil && ok {
		return contains(set, code), nil
	}
	set, err := r.set(ctx, userID)
	if err != nil {
		return false, err
	}
	return contains(set, code), nil
}

// contains reports whether the encoded set ("\ncode1\ncode2\n", lines
// sorted in byte order and unique: see set) holds code. It binary-searches
// the lines in place: O(log n) line comparisons, no allocation (the
// string(...) comparisons do not allocate).
func contains(set []byte, code string) bool {
	// [lo, hi) holds whole lines, each ending in '\n'.
	lo, hi := 1, len(set)
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := lo + bytes.LastIndexByte(set[lo:mid], '\n') + 1
		end := mid + bytes.IndexByte(set[mid:hi], '\n')
		switch line := set[start:end]; {
		case string(line) == code:
			return true
		case string(line) < code:
			lo = end + 1
		default:
			hi = start
		}
	}
	return false
}

// Codes returns the user's codes, sorted.
func (r *Resolver) Codes(ctx context.Context, userID int64) ([]string, error) {
	set, err := r.set(ctx, userID)
	if err != nil {
		return nil, err
	}
	return decode(set), nil
}

func decode(set []byte) []string {
	s := strings.Trim(string(set), "\n")
	if s == "" {
		return []string{}
	}
	return strings.Split(s, "\n")
}

// key is KeyPrefix + the decimal id, built with one allocation (it is on
// the path of every permission check).
func key(userID int64) string {
	var b [len(KeyPrefix) + 20]byte
	return string(strconv.AppendInt(append(b[:0], KeyPrefix...), userID, 10))
}

func (r *Resolver) set(ctx context.Context, userID int64) ([]byte, error) {
	if b, ok, err := r.store.Get(ctx, key(userID)); err == nil && ok {
		return b, nil
	}
	codes, err := r.load(ctx, userID)
	if err != nil {
		return nil, err
	}
	enc := []byte("\n" + strings.Join(codes, "\n") + "\n")
	if len(codes) == 0 {
		enc = []byte("\n")
	}
	_ = r.store.Set(ctx, key(userID), enc, r.ttl)
	return enc, nil
}

func (r *Resolver) load(ctx context.Context, userID int64) ([]string, error) {
	links, err := r.client.SysUserRole.Query().Where(sysuserrole.UserID(userID)).All(ctx)
	if err != nil || len(links) == 0 {
		return nil, err
	}
	roleIDs := make([]int64, len(links))
	for i, l := range links {
		roleIDs[i] = l.RoleID
	}
	live, err := r.client.SysRole.Query().
		Where(sysrole.IDIn(roleIDs...), sysrole.Enabled(true), sysrole.IsDelete(false)).
		IDs(ctx)
	if err != nil || len(live) == 0 {
		return nil, err
	}
	return RoleCodes(ctx, r.client, live)
}

// RoleCodes returns the codes the enabled, live menus granted to roleIDs
// carry, sorted and distinct, whether or not the roles themselves are
// enabled (the caller filters roles): what holding those roles gives, or
// would give once enabled.
func RoleCodes(ctx context.Context, client *ent.Client, roleIDs []int64) ([]string, error) {
	if len(roleIDs) == 0 {
		return nil, nil
	}
	grants, err := client.SysRoleMenu.Query().Where(sysrolemenu.RoleIDIn(roleIDs...)).All(ctx)
	if err != nil || len(grants) == 0 {
		return nil, err
	}
	menuIDs := make([]int64, len(grants))
	for i, g := range grants {
		menuIDs[i] = g.MenuID
	}
	return MenuCodes(ctx, client, menuIDs, true)
}

// MenuCodes returns the codes the live menus among menuIDs carry (the
// enabled ones only when enabledOnly), sorted and distinct.
func MenuCodes(ctx context.Context, client *ent.Client, menuIDs []int64, enabledOnly bool) ([]string, error) {
	if len(menuIDs) == 0 {
		return nil, nil
	}
	q := client.SysMenu.Query().Where(sysmenu.IDIn(menuIDs...), sysmenu.IsDelete(false), sysmenu.PermissionNEQ(""))
	if enabledOnly {
		q.Where(sysmenu.Enabled(true))
	}
	perms, err := q.Select(sysmenu.FieldPermission).Strings(ctx)
	if err != nil {
		return nil, err
	}
	var codes []string
	for _, p := range perms {
		codes = append(codes, SplitCodes(p)...)
	}
	slices.Sort(codes)
	return slices.Compact(codes), nil
}

// Invalidate drops the cached sets of the given users, then publishes one
// PermissionsChanged event per user.
func (r *Resolver) Invalidate(ctx context.Context, userIDs ...int64) error {
	keys := make([]string, len(userIDs))
	for i, id := range userIDs {
		keys[i] = key(id)
	}
	if err := r.store.Delete(ctx, keys...); err != nil {
		return err
	}
	for _, id := range userIDs {
		r.events.Publish(events.PermissionsChanged{UserID: id})
	}
	return nil
}

// InvalidateAll drops every cached set, publishes one PermissionsChanged
// event for every user and returns how many sets were dropped.
func (r *Resolver) InvalidateAll(ctx context.Context) (int, error) {
	n, err := r.store.DeletePrefix(ctx, KeyPrefix)
	if err != nil {
		return n, err
	}
	r.events.Publish(events.PermissionsChanged{})
	return n, nil
}
