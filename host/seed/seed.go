// Package seed fills an empty database with the kernel's reference data
// (modules, orgs, positions, roles, dictionaries, config keys, menus) and the
// super-admin account, and keeps the seeded menus and config keys in step
// with the running version at every start.
package seed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/text/width"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/ent/sysdictitem"
	"github.com/adminkernel/kernel/ent/sysdicttype"
	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/password"
)

// AdminID is the fixed id of the seeded super-admin.
const AdminID int64 = 1

// GeneratedPasswordLen is the length of a generated super-admin password.
const GeneratedPasswordLen = 16

// errRaced: another instance seeded between our check and our transaction.
var errRaced = errors.New("seeded by another instance")

// Options control a seed run.
type Options struct {
	// AdminAccount names the super-admin (default superAdmin).
	AdminAccount string
	// AdminPassword, when empty, is generated and shown once: in the log's
	// banner, or, when PasswordDir is set, in a file there.
	AdminPassword string
	// PasswordDir, when set (Production: the data directory), receives a
	// generated password in a new file readable by the owner only
	// (PasswordFileName, or a fresh name when that exists), and the log
	// names the file instead of showing the password.
	PasswordDir string
	// Hasher hashes the super-admin password.
	Hasher password.Hasher
	// ExtraMenus are the menus of modules (kernel areas below 1000, consumer
	// menus from 1000 by convention); a duplicate id is an error.
	ExtraMenus []Menu
	// ExtraDicts are the dictionaries of modules (Module.Dicts), inserted
	// when missing.
	ExtraDicts []Dict
	Log        hclog.Logger
}

// Result tells what a run did.
type Result struct {
	// Seeded is true when the user table was empty and the reference data
	// and super-admin were created by this run.
	Seeded bool
	// GeneratedPassword is the password generated for the super-admin (""
	// when a password was configured or nothing was seeded).
	GeneratedPassword string
	// PasswordFile is the file holding it when Options.PasswordDir was set.
	PasswordFile string
}

// PasswordFileName is the file a generated super-admin password is
// written to in Options.PasswordDir.
const PasswordFileName = "superadmin-password.txt"

// Run seeds an empty database and synchronises menus and config keys.
// Configured values never overwrite existing accounts: with any user present
// (deleted ones included) the account part is skipped entirely.
func Run(ctx context.Context, client *ent.Client, opts Options) (Result, error) {
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	if opts.AdminAccount == "" {
		opts.AdminAccount = "superAdmin"
	}
	menus, err := allMenus(opts.ExtraMenus)
	if err != nil {
		return Result{}, err
	}
	res, err := seedEmpty(ctx, client, opts)
	if err != nil {
		return Result{}, err
	}
	// Replicas starting together may insert the same rows; the loser's
	// constraint error means the rows are there, so one more pass settles it.
	if err := retryOnConflict(func() error { return syncMenus(ctx, client, menus) }); err != nil {
		return Result{}, fmt.Errorf("menus: %w", err)
	}
	if err := retryOnConflict(func() error { return syncConfigs(ctx, client) }); err != nil {
		return Result{}, fmt.Errorf("config keys: %w", err)
	}
	if err := retryOnConflict(func() error { return syncDicts(ctx, client, opts.ExtraDicts) }); err != nil {
		return Result{}, fmt.Errorf("module dictionaries: %w", err)
	}
	switch {
	case res.PasswordFile != "":
		opts.Log.Warn(fmt.Sprintf("super-admin created; its generated password is in %s (read it, then delete the file)", res.PasswordFile),
			"account", opts.AdminAccount)
	case res.GeneratedPassword != "":
		opts.Log.Warn("super-admin created\n" + Banner(opts.AdminAccount, res.GeneratedPassword))
	case res.Seeded:
		opts.Log.Info("super-admin created with the configured password", "account", opts.AdminAccount)
	}
	return res, nil
}

// Banner boxes the generated credentials for the startup log (Development
// and Staging). Every line of the box has the same width on a terminal:
// the padding counts display columns, so an account with CJK (wide)
// characters keeps the right border aligned; control characters are
// shown escaped so none can break the box.
func Banner(account, plain string) string {
	lines := []string{
		"The super-admin account was created with a generated password.",
		"It is shown only this once: store it now and change it after login.",
		"",
		"  account:  " + printable(account),
		"  password: " + plain,
	}
	cols := 0
	for _, l := range lines {
		cols = max(cols, displayWidth(l))
	}
	var b strings.Builder
	b.WriteString("+" + strings.Repeat("-", cols+2) + "+\n")
	for _, l := range lines {
		b.WriteString("| " + l + strings.Repeat(" ", cols-displayWidth(l)) + " |\n")
	}
	b.WriteString("+" + strings.Repeat("-", cols+2) + "+")
	return b.String()
}

// displayWidth is the number of terminal columns s takes: two for East
// Asian wide and fullwidth characters, none for combining marks, one for
// the rest.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == '\u200b':
		case isWide(r):
			n += 2
		default:
			n++
		}
	}
	return n
}

func isWide(r rune) bool {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return true
	}
	return false
}

// printable escapes control characters (a newline in an account name
// would otherwise end the box's line).
func printable(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// writePasswordFile writes the generated credentials to a new file of dir,
// created with mode 0600 and O_EXCL: PasswordFileName, or, when that
// exists (an earlier one not yet deleted), a fresh
// superadmin-password-<random>.txt. It never overwrites a file.
func writePasswordFile(dir, account, plain string) (string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("create the data directory: %w", err)
	}
	path := filepath.Join(dir, PasswordFileName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		f, err = os.CreateTemp(dir, "superadmin-password-*.txt") // 0600, O_EXCL
	}
	if err != nil {
		return "", err
	}
	path = f.Name()
	body := "The super-admin account was created with this generated password.\n" +
		"Store it now, change it after login, then delete this file.\n\n" +
		"account:  " + account + "\npassword: " + plain + "\n"
	_, err = f.WriteString(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return "", err
	}
	return path, nil
}

func seedEmpty(ctx context.Context, client *ent.Client, opts Options) (Result, error) {
	n, err := client.SysUser.Query().Count(ctx)
	if err != nil {
		return Result{}, err
	}
	if n > 0 {
		opts.Log.Debug("users exist; reference data and super-admin left as they are", "users", n)
		return Result{}, nil
	}
	plain, generated := opts.AdminPassword, ""
	if plain == "" {
		if plain, err = password.Generate(GeneratedPasswordLen); err != nil {
			return Result{}, err
		}
		generated = plain
	}
	if opts.Hasher == nil {
		return Result{}, errors.New("seed: a password hasher is required")
	}
	// The file first: an account whose generated password was lost would
	// be unreachable. A run that does not create the account removes it.
	file := ""
	if generated != "" && opts.PasswordDir != "" {
		if file, err = writePasswordFile(opts.PasswordDir, opts.AdminAccount, generated); err != nil {
			return Result{}, fmt.Errorf("writing the generated super-admin password: %w", err)
		}
	}
	res, err := seedAccount(ctx, client, opts, plain)
	if err != nil || !res.Seeded {
		if file != "" {
			_ = os.Remove(file)
		}
		return res, err
	}
	res.GeneratedPassword, res.PasswordFile = generated, file
	return res, nil
}

// seedAccount creates the reference data and the super-admin with plain
// as its password, unless another instance did so first.
func seedAccount(ctx context.Context, client *ent.Client, opts Options, plain string) (Result, error) {
	hash, err := opts.Hasher.HashContext(ctx, plain)
	if err != nil {
		return Result{}, err
	}
	if err := database.WithTx(ctx, client, func(tx *ent.Tx) error {
		return seedTx(ctx, tx, opts.AdminAccount, hash)
	}); err != nil {
		// Another replica starting at the same moment may have won the race:
		// its rows make ours collide. That is success, not failure.
		if errors.Is(err, errRaced) || ent.IsConstraintError(err) {
			if n, cerr := client.SysUser.Query().Count(ctx); cerr == nil && n > 0 {
				opts.Log.Info("another instance seeded the database first")
				return Result{}, nil
			}
		}
		return Result{}, err
	}
	return Result{Seeded: true}, nil
}

func seedTx(ctx context.Context, tx *ent.Tx, account, hash string) error {
	// Re-check inside the transaction: on SQLite the immediate transaction
	// serialises starters, so the loser sees the winner's user here.
	if n, err := tx.SysUser.Query().Count(ctx); err != nil {
		return err
	} else if n > 0 {
		return errRaced
	}
	now := time.Now()
	if err := tx.SysModule.MapCreateBulk(modules, func(c *ent.SysModuleCreate, i int) {
		m := modules[i]
		c.SetID(m.id).SetCode(m.code).SetTitle(m.title).SetIcon(m.icon).SetAPIPrefix(m.apiPrefix).SetSort(m.sort).SetRemark(m.rm)
	}).Exec(ctx); err != nil {
		return fmt.Errorf("modules: %w", err)
	}
	if err := tx.SysOrg.MapCreateBulk(orgs, func(c *ent.SysOrgCreate, i int) {
		o := orgs[i]
		c.SetID(o.id).SetParentID(o.parent).SetName(o.name).SetCode(o.code).SetCategory(o.category).SetSort(o.sort)
	}).Exec(ctx); err != nil {
		return fmt.Errorf("orgs: %w", err)
	}
	if err := tx.SysPosition.MapCreateBulk(positions, func(c *ent.SysPositionCreate, i int) {
		p := positions[i]
		c.SetID(p.id).SetCode(p.code).SetName(p.name).SetSort(p.sort)
	}).Exec(ctx); err != nil {
		return fmt.Errorf("positions: %w", err)
	}
	if err := tx.SysRole.MapCreateBulk(roles, func(c *ent.SysRoleCreate, i int) {
		r := roles[i]
		c.SetID(r.id).SetName(r.name).SetCode(r.code).SetSort(r.sort).SetRemark(r.rm)
	}).Exec(ctx); err != nil {
		return fmt.Errorf("roles: %w", err)
	}
	var scopes []*ent.SysRoleDataScopeCreate
	for _, r := range roles {
		if r.scopeType == 0 {
			continue
		}
		c := tx.SysRoleDataScope.Create().SetID(r.id).SetRoleID(r.id).SetScopeType(r.scopeType)
		if r.customOrgIDs != "" {
			c.SetCustomOrgIds(r.customOrgIDs)
		}
		scopes = append(scopes, c)
	}
	if err := tx.SysRoleDataScope.CreateBulk(scopes...).Exec(ctx); err != nil {
		return fmt.Errorf("role data scopes: %w", err)
	}
	var types []*ent.SysDictTypeCreate
	var items []*ent.SysDictItemCreate
	for i, d := range dicts {
		types = append(types, tx.SysDictType.Create().SetID(d.id).SetCode(d.code).SetName(d.name).SetSort(i+1))
		for j, it := range d.items {
			items = append(items, tx.SysDictItem.Create().SetID(it.id).SetDictTypeCode(d.code).SetLabel(it.label).SetValue(it.value).SetSort(j+1))
		}
	}
	if err := tx.SysDictType.CreateBulk(types...).Exec(ctx); err != nil {
		return fmt.Errorf("dictionary types: %w", err)
	}
	if err := tx.SysDictItem.CreateBulk(items...).Exec(ctx); err != nil {
		return fmt.Errorf("dictionary items: %w", err)
	}
	err := tx.SysUser.Create().
		SetID(AdminID).
		SetAccount(account).
		SetName("超级管理员").
		SetPasswordHash(hash).
		SetPasswordChangedAt(now).
		SetIsSuperAdmin(true).
		SetEnabled(true).
		SetMustChangePassword(false).
		SetOrgID(1).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("super-admin: %w", err)
	}
	return nil
}

func allMenus(extra []Menu) ([]Menu, error) {
	all := append(append([]Menu(nil), kernelMenus...), extra...)
	seen := make(map[int64]bool, len(all))
	for _, m := range all {
		if m.ID <= 0 || seen[m.ID] {
			return nil, fmt.Errorf("seed menu id %d (%s) is not positive or is used twice", m.ID, m.Title)
		}
		seen[m.ID] = true
	}
	return all, nil
}

// Dict is a dictionary a module seeds (Module.Dicts): its type and items
// are inserted when missing (by id, 1000 and up) and never changed after,
// so administrators edit them like the kernel's own.
type Dict struct {
	ID    int64
	Code  string
	Name  string
	Items []DictItem
}

// DictItem is one item of a seeded dictionary (Label as shown, Value as
// stored).
type DictItem struct {
	ID           int64
	Label, Value string
}

// syncDicts inserts the missing module dictionaries and items.
func syncDicts(ctx context.Context, client *ent.Client, dicts []Dict) error {
	for _, d := range dicts {
		if d.ID < 1000 || d.Code == "" {
			return fmt.Errorf("dictionary %q: module dictionaries have ids from 1000 and a code", d.Code)
		}
		n, err := client.SysDictType.Query().Where(sysdicttype.ID(d.ID)).Count(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			if err := client.SysDictType.Create().SetID(d.ID).SetCode(d.Code).SetName(d.Name).SetSort(int(d.ID)).Exec(ctx); err != nil {
				return err
			}
		}
		for j, it := range d.Items {
			if it.ID < 1000 {
				return fmt.Errorf("dictionary %s item %q: module dictionary items have ids from 1000", d.Code, it.Value)
			}
			n, err := client.SysDictItem.Query().Where(sysdictitem.ID(it.ID)).Count(ctx)
			if err != nil {
				return err
			}
			if n == 0 {
				if err := client.SysDictItem.Create().SetID(it.ID).SetDictTypeCode(d.Code).SetLabel(it.Label).
					SetValue(it.Value).SetSort(j + 1).Exec(ctx); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// syncMenus inserts missing seed menus and rewrites the structural columns
// (parent, type, permission, path, component, icon, module) of existing
// ones; titles, sort, visibility and enabled flags stay as administrators
// set them.
func syncMenus(ctx context.Context, client *ent.Client, menus []Menu) error {
	ids := make([]int64, len(menus))
	for i, m := range menus {
		ids[i] = m.ID
	}
	existing, err := client.SysMenu.Query().Where(sysmenu.IDIn(ids...)).All(ctx)
	if err != nil {
		return err
	}
	have := make(map[int64]*ent.SysMenu, len(existing))
	for _, m := range existing {
		have[m.ID] = m
	}
	var create []*ent.SysMenuCreate
	for _, m := range menus {
		cur, ok := have[m.ID]
		if !ok {
			create = append(create, client.SysMenu.Create().
				SetID(m.ID).SetParentID(m.ParentID).SetType(m.Type).SetTitle(m.Title).
				SetPermission(m.Permission).SetSort(m.Sort).SetVisible(!m.Hidden).
				SetNillablePath(nonEmpty(m.Path)).SetNillableComponent(nonEmpty(m.Component)).
				SetNillableIcon(nonEmpty(m.Icon)).SetNillableModuleID(nonZero(m.ModuleID)))
			continue
		}
		if structurallyEqual(cur, m) {
			continue
		}
		u := client.SysMenu.UpdateOneID(m.ID).
			SetParentID(m.ParentID).SetType(m.Type).SetPermission(m.Permission)
		if m.Path == "" {
			u.ClearPath()
		} else {
			u.SetPath(m.Path)
		}
		if m.Component == "" {
			u.ClearComponent()
		} else {
			u.SetComponent(m.Component)
		}
		if m.Icon == "" {
			u.ClearIcon()
		} else {
			u.SetIcon(m.Icon)
		}
		if m.ModuleID == 0 {
			u.ClearModuleID()
		} else {
			u.SetModuleID(m.ModuleID)
		}
		if err := u.Exec(ctx); err != nil {
			return err
		}
	}
	if len(create) == 0 {
		return nil
	}
	return client.SysMenu.CreateBulk(create...).Exec(ctx)
}

func structurallyEqual(cur *ent.SysMenu, m Menu) bool {
	return cur.ParentID == m.ParentID && cur.Type == m.Type && cur.Permission == m.Permission &&
		deref(cur.Path) == m.Path && deref(cur.Component) == m.Component && deref(cur.Icon) == m.Icon &&
		derefID(cur.ModuleID) == m.ModuleID
}

// syncConfigs inserts seed config keys that are missing (a newer kernel
// version may add keys); existing values are never touched.
func syncConfigs(ctx context.Context, client *ent.Client) error {
	keys := make([]string, len(configs))
	for i, c := range configs {
		keys[i] = c.key
	}
	have, err := client.SysConfig.Query().Where(sysconfig.ConfigKeyIn(keys...)).All(ctx)
	if err != nil {
		return err
	}
	byID := make(map[int64]configRow, len(configs))
	for _, c := range configs {
		byID[c.id] = c
	}
	present := make(map[string]bool, len(have))
	var revive []int64
	for _, r := range have {
		if r.IsDelete && formerlyRetired[r.ID] && byID[r.ID].key == r.ConfigKey {
			revive = append(revive, r.ID)
			continue
		}
		present[r.ConfigKey] = true // live, or deleted by an administrator
	}
	// A row an older release retired while its area was not built comes
	// back under its id with the default value: the value it held never
	// had an effect, so it must not switch anything on now.
	for _, id := range revive {
		c := byID[id]
		if present[c.key] {
			continue
		}
		err := client.SysConfig.Update().Where(sysconfig.ID(id), sysconfig.IsDelete(true)).
			SetIsDelete(false).SetDeleteKey(0).SetConfigValue(c.value).Exec(ctx)
		if err != nil && !ent.IsConstraintError(err) {
			return err
		}
		present[c.key] = true
	}
	var create []*ent.SysConfigCreate
	for i, c := range configs {
		if present[c.key] {
			continue
		}
		create = append(create, client.SysConfig.Create().SetID(c.id).SetConfigKey(c.key).
			SetConfigValue(c.value).SetName(c.name).SetGroupCode(c.group).SetSort(i+1))
	}
	if len(create) == 0 {
		return nil
	}
	return client.SysConfig.CreateBulk(create...).Exec(ctx)
}

func retryOnConflict(f func() error) error {
	err := f()
	if ent.IsConstraintError(err) {
		err = f()
	}
	return err
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonZero(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefID(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}
