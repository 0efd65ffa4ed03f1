package database

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// phoneVersion is migration 0016: UNIQUE(phone, delete_key) on sys_user, at
// most one live user per phone (a phone signs in by SMS).
const phoneVersion = 16

// ErrPhoneDuplicates is returned (wrapped) by Migrate (migration 0016) when
// live users share a phone number.
var ErrPhoneDuplicates = errors.New("live users share a phone number")

// checkPhones runs before migration 0016: blank phones become NULL (NULLs
// never collide in a unique index), then live users sharing a phone stop
// the migration, naming the users; the kernel never clears anyone's phone.
func (d *DB) checkPhones(ctx context.Context, q querier) error {
	has, err := hasTable(ctx, q, d.Dialect, MarkerTable)
	if err != nil || !has {
		return err
	}
	if _, err := q.ExecContext(ctx, "UPDATE sys_user SET phone = NULL WHERE phone IS NOT NULL AND TRIM(phone) = ''"); err != nil {
		return fmt.Errorf("clear the blank phones: %w", err)
	}
	rows, err := q.QueryContext(ctx, "SELECT id, account, phone FROM sys_user WHERE delete_key = 0 AND phone IS NOT NULL")
	if err != nil {
		return fmt.Errorf("read the phones: %w", err)
	}
	defer func() { _ = rows.Close() }()
	groups := map[string][]string{}
	for rows.Next() {
		var (
			id             int64
			account, phone string
		)
		if err := rows.Scan(&id, &account, &phone); err != nil {
			return fmt.Errorf("read the phones: %w", err)
		}
		groups[phone] = append(groups[phone], fmt.Sprintf("%q (id %d)", account, id))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the phones: %w", err)
	}
	var dups []string
	for _, g := range groups {
		if len(g) > 1 {
			sort.Strings(g)
			dups = append(dups, strings.Join(g, ", "))
		}
	}
	if len(dups) == 0 {
		return nil
	}
	sort.Strings(dups)
	return fmt.Errorf("%w: %s. A phone signs in by SMS, so at most one live user may hold it; the schema was not changed. "+
		"Change or clear the phone of all but one user of each group (the user administration, or SQL on sys_user.phone), "+
		"then start the service (or run `adminkernel migrate`) again",
		ErrPhoneDuplicates, strings.Join(dups, "; "))
}
