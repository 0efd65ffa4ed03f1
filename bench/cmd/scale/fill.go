package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/adminkernel/kernel/host/password"
)

// Id ranges of the generated rows (far above the seed's ids and below the
// snowflake ids the kernel generates).
const (
	orgBase     = 100_000
	roleBase    = 200_000
	scopeBase   = 300_000
	menuBase    = 400_000
	userBase    = 10_000_000
	linkBase    = 20_000_000
	sessionBase = 40_000_000
	tokenBase   = 60_000_000
)

// Accounts of the special users (password userPassword).
const (
	userPassword  = "Scale-User-Pass-1" //nolint:gosec // the generated users' password in a benchmark database
	scopeAccount  = "scale_scope"       // role with data scope "org and below" at a level-1 org
	rolesAccount  = "scale_roles"       // holds 50 roles
	oneAccount    = "scale_one"         // holds one role (the baseline of scale_roles)
	manyAccount   = "scale_many"        // owns 1 000 sessions
	searchFamily  = "Quinlan"           // the family name the name search looks for (1 % of users)
	manySessions  = 1_000               // sessions of manyAccount
	userMenuID    = 231                 // "user query" button (GET sys/user/page)
	scopeRoleCode = "scale_scope_role"
)

var families = []string{
	"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
	"Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin",
	"Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson",
	"Walker", "Young", "Allen", "King", "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores",
	"Green", "Adams", "Nelson", "Baker", "Hall", "Rivera", "Campbell", "Mitchell", "Carter", "Roberts",
	"Wang", "Li", "Zhang", "Liu", "Chen", "Yang", "Huang", "Zhao", "Wu", "Zhou",
	"Xu", "Sun", "Ma", "Zhu", "Hu", "Guo", "He", "Lin", "Gao", "Luo",
	"Mueller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Schulz", "Hoffmann",
	"Dubois", "Durand", "Leroy", "Moreau", "Simon", "Laurent", "Michel", "Lefebvre", "Bernard", "Petit",
	"Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo", "Ricci", "Marino", searchFamily,
}

var givens = []string{"Alex", "Sam", "Jordan", "Taylor", "Morgan", "Casey", "Riley", "Jamie", "Avery", "Quinn",
	"Wei", "Fang", "Min", "Jun", "Lei", "Hui", "Ying", "Tao", "Bo", "Na"}

// fill creates the generated rows once (a filled database is reused).
func fill(ctx context.Context, o options, t *target) error {
	// The kernel migrates and seeds the database at its first start.
	k, err := startKernel(ctx, o, t, filepath.Join(o.out, "scale-"+t.kind+"-seed.log"))
	if err != nil {
		return err
	}
	k.stop()
	n, err := t.count(ctx, "sys_user")
	if err != nil {
		return err
	}
	if n >= o.users {
		logf("%s already holds %d users: not filling (-refill to start over)", o.name, n)
		return nil
	}
	if n > 20 {
		return fmt.Errorf("%s holds %d users, fewer than -users %d: run with -refill", o.name, n, o.users)
	}
	hash, err := password.New(600_000).Hash(userPassword)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second)
	start := time.Now()

	// Organisations: 10 at level 1 under the seeded root (id 1), 9 under
	// each (90), 10 under each of those (900): 1 000 in all.
	orgParent := make([]int64, 0, o.orgs)
	for i := 0; i < 10; i++ {
		orgParent = append(orgParent, 1)
	}
	for i := 0; i < 90; i++ {
		orgParent = append(orgParent, orgBase+int64(i/9))
	}
	for i := 0; len(orgParent) < o.orgs; i++ {
		orgParent = append(orgParent, orgBase+10+int64(i/10%90))
	}
	if err := t.insert(ctx, "sys_org", []string{"id", "create_time", "is_delete", "delete_key", "parent_id", "name", "code", "sort", "enabled"},
		len(orgParent), func(i int, a []any) {
			a[0], a[1], a[2], a[3], a[4] = orgBase+int64(i), now, false, 0, orgParent[i]
			a[5], a[6], a[7], a[8] = fmt.Sprintf("Org %04d", i), fmt.Sprintf("scale_org_%04d", i), i, true
		}); err != nil {
		return err
	}
	leaf := func(u int) int64 { return orgBase + int64(u%len(orgParent)) }

	// Roles: o.roles plain roles (scope "all") plus the scoped role; each
	// grants a few seeded buttons so permission loading has work to do.
	nRoles := o.roles + 1
	if err := t.insert(ctx, "sys_role", []string{"id", "create_time", "is_delete", "delete_key", "name", "code", "sort", "enabled", "is_delegatable"},
		nRoles, func(i int, a []any) {
			code := fmt.Sprintf("scale_r%03d", i)
			if i == o.roles {
				code = scopeRoleCode
			}
			a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8] = roleBase+int64(i), now, false, 0, "Role "+code, code, i, true, false
		}); err != nil {
		return err
	}
	if err := t.insert(ctx, "sys_role_data_scope", []string{"id", "create_time", "is_delete", "delete_key", "role_id", "scope_type"},
		nRoles, func(i int, a []any) {
			scope := 1 // all
			if i == o.roles {
				scope = 3 // org and below
			}
			a[0], a[1], a[2], a[3], a[4], a[5] = scopeBase+int64(i), now, false, 0, roleBase+int64(i), scope
		}); err != nil {
		return err
	}
	menus, err := t.buttonMenus(ctx)
	if err != nil {
		return err
	}
	perRole := min(len(menus), 4)
	if err := t.insert(ctx, "sys_role_menu", []string{"id", "create_time", "role_id", "menu_id"},
		nRoles*perRole, func(i int, a []any) {
			r := i / perRole
			m := menus[(r+i%perRole)%len(menus)]
			if r == o.roles && i%perRole == 0 {
				m = userMenuID
			}
			a[0], a[1], a[2], a[3] = menuBase+int64(i), now, roleBase+int64(r), m
		}); err != nil {
		return err
	}
	logf("orgs and roles in %s", time.Since(start).Round(time.Millisecond))

	// Users: the special ones first, then o.users-4 generated ones.
	specials := []struct {
		account string
		org     int64
	}{{scopeAccount, orgBase}, {rolesAccount, leaf(1)}, {oneAccount, leaf(2)}, {manyAccount, leaf(3)}}
	gen := o.users - len(specials)
	err = t.insert(ctx, "sys_user", []string{"id", "create_time", "is_delete", "delete_key", "account", "account_norm", "name",
		"password_hash", "must_change_password", "is_super_admin", "enabled", "org_id", "force_totp", "totp_enabled", "login_fail_count", "phone"},
		o.users, func(i int, a []any) {
			var account, name string
			var org int64
			if i < len(specials) {
				account, name, org = specials[i].account, specials[i].account, specials[i].org
			} else {
				u := i - len(specials)
				account = fmt.Sprintf("u%07d", u)
				name = givens[u/len(families)%len(givens)] + " " + families[u%len(families)]
				org = leaf(u)
			}
			a[0], a[1], a[2], a[3] = userBase+int64(i), now.Add(-time.Duration(o.users-i)*time.Second), false, 0
			a[4], a[5], a[6], a[7] = account, strings.ToLower(account), name, hash
			a[8], a[9], a[10], a[11] = false, false, true, org
			a[12], a[13], a[14], a[15] = false, false, 0, fmt.Sprintf("139%08d", i)
		})
	if err != nil {
		return err
	}
	logf("%d users in %s", o.users, time.Since(start).Round(time.Millisecond))
	_ = gen

	// Role links: every generated user holds one role, every third a
	// second; scale_roles holds 50, scale_one one, scale_scope the scoped
	// role.
	type link struct{ user, role int64 }
	special := []link{{userBase, roleBase + int64(o.roles)}, {userBase + 2, roleBase}, {userBase + 3, roleBase}}
	for r := 0; r < min(50, o.roles); r++ {
		special = append(special, link{userBase + 1, roleBase + int64(r)})
	}
	perUser := func(u int) int { return 1 + boolInt(u%3 == 0) }
	total := len(special)
	for u := len(specials); u < o.users; u++ {
		total += perUser(u)
	}
	// Generated links in order: user u, its first and optional second role.
	cur, second := len(specials), false
	if err := t.insert(ctx, "sys_user_role", []string{"id", "create_time", "user_id", "role_id"}, total, func(i int, a []any) {
		var l link
		if i < len(special) {
			l = special[i]
		} else {
			r := cur % o.roles
			if second {
				r = (cur + 7) % o.roles
			}
			l = link{userBase + int64(cur), roleBase + int64(r)}
			if !second && perUser(cur) == 2 {
				second = true
			} else {
				second, cur = false, cur+1
			}
		}
		a[0], a[1], a[2], a[3] = linkBase+int64(i), now, l.user, l.role
	}); err != nil {
		return err
	}
	logf("%d role links in %s", total, time.Since(start).Round(time.Millisecond))

	// Sessions: 1 000 for scale_many, the rest spread over generated users;
	// a third already expired (what the cleanup removes), a tenth revoked.
	if err := t.insert(ctx, "sys_session", []string{"id", "session_id", "user_id", "login_method", "mfa", "must_change_password",
		"create_time", "last_seen_time", "expires_at", "refresh_token_hash", "refresh_expires_at", "revoked_at", "revoke_reason"},
		o.sessions, func(i int, a []any) {
			user := int64(userBase + 3) // scale_many
			if i >= manySessions {
				user = userBase + int64(len(specials)+(i*7919)%gen)
			}
			created := now.Add(-time.Duration(i%(14*24*60)) * time.Minute)
			exp := created.Add(7 * 24 * time.Hour)
			if i >= manySessions && i%3 == 0 {
				exp = now.Add(-time.Duration(1+i%1000) * time.Minute)
			}
			var revoked, reason any
			if i >= manySessions && i%10 == 1 {
				revoked, reason = created.Add(time.Hour), "logout"
			}
			if i < manySessions && exp.Before(now) {
				exp = now.Add(24 * time.Hour)
			}
			a[0], a[1], a[2], a[3], a[4], a[5] = sessionBase+int64(i), sessionID(i), user, "password", false, false
			a[6], a[7], a[8], a[9], a[10], a[11], a[12] = created, created, exp, tokenHash(i), exp, revoked, reason
		}); err != nil {
		return err
	}
	if err := t.insert(ctx, "sys_session_token", []string{"id", "session_id", "token_hash", "create_time", "expires_at"},
		o.sessions, func(i int, a []any) {
			a[0], a[1], a[2], a[3], a[4] = tokenBase+int64(i), sessionID(i), tokenHash(i), now, now.Add(7*24*time.Hour)
		}); err != nil {
		return err
	}
	logf("%d sessions in %s", o.sessions, time.Since(start).Round(time.Millisecond))
	return t.analyze(ctx)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sessionID is the public id of generated session i (32 hex characters,
// unique and deterministic).
func sessionID(i int) string { return fmt.Sprintf("scale%027d", i) }

// tokenHash is a unique refresh-token hash for session i (no token has it).
func tokenHash(i int) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "scale-" + strconv.Itoa(i) + "-" + hex.EncodeToString(b[:])
}

// buttonMenus returns the ids of the seeded button menus.
func (t *target) buttonMenus(ctx context.Context) ([]int64, error) {
	rows, err := t.db.QueryContext(ctx, "SELECT id FROM sys_menu WHERE type = 3 ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no seeded button menus")
	}
	return ids, rows.Err()
}

// insert adds n rows to table with multi-row INSERTs; row fills the values
// of row i into a (len(cols) long).
func (t *target) insert(ctx context.Context, table string, cols []string, n int, row func(i int, a []any)) error {
	per := max(1, min(1000, 60000/len(cols)))
	args := make([]any, 0, per*len(cols))
	var sb strings.Builder
	for lo := 0; lo < n; lo += per {
		hi := min(n, lo+per)
		sb.Reset()
		args = args[:0]
		sb.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
		for i := lo; i < hi; i++ {
			if i > lo {
				sb.WriteByte(',')
			}
			sb.WriteByte('(')
			base := len(args)
			args = args[:base+len(cols)]
			row(i, args[base:])
			for c := range cols {
				if c > 0 {
					sb.WriteByte(',')
				}
				sb.WriteString(t.ph(base + c + 1))
			}
			sb.WriteByte(')')
		}
		if _, err := t.db.ExecContext(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("insert into %s (rows %d-%d): %w", table, lo, hi, err)
		}
	}
	return nil
}

// analyze refreshes the planner statistics.
func (t *target) analyze(ctx context.Context, tables ...string) error {
	if len(tables) == 0 {
		tables = []string{"sys_org", "sys_role", "sys_user", "sys_user_role", "sys_session", "sys_session_token", "sys_role_menu"}
	}
	for _, tb := range tables {
		if t.kind == "sqlite" {
			if _, err := t.db.ExecContext(ctx, "ANALYZE "+tb); err != nil {
				return fmt.Errorf("ANALYZE %s: %w", tb, err)
			}
			continue
		}
		if t.kind == "postgres" {
			// VACUUM sets the visibility map that index-only scans (the
			// page totals) need; autovacuum does it in production.
			if _, err := t.db.ExecContext(ctx, "VACUUM ANALYZE "+tb); err != nil {
				return fmt.Errorf("VACUUM ANALYZE %s: %w", tb, err)
			}
			continue
		}
		if err := t.analyzeTable(ctx, tb); err != nil {
			return err
		}
	}
	return nil
}

// analyzeTable runs MariaDB's ANALYZE TABLE, which answers a result set.
func (t *target) analyzeTable(ctx context.Context, tb string) error {
	rows, err := t.db.QueryContext(ctx, "ANALYZE TABLE "+tb)
	if err != nil {
		return fmt.Errorf("ANALYZE TABLE %s: %w", tb, err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
	}
	return rows.Err()
}
