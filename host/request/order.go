package request

import (
	"strings"

	"entgo.io/ent/dialect/sql"
)

// SortKey is how a page's sortField is looked up in a table of sortable
// columns: trimmed, lower case, underscores dropped ("create_time" and
// "createTime" are "createtime").
func SortKey(field string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(field), "_", ""))
}

// Order is the ordering of page p for an ent query (O is the entity's
// OrderOption). When p.SortField names one of columns (by SortKey), the
// rows go by that column in p's direction, then by tie (the id) in the same
// direction; without a tie, the defaults follow the column. Otherwise the
// defaults alone. The columns come from the caller's table, never from the
// request.
func Order[O ~func(*sql.Selector)](p Page, columns map[string]string, tie string, defaults ...O) []O {
	col, ok := columns[SortKey(p.SortField)]
	if !ok {
		return defaults
	}
	cols := []string{col}
	if tie != "" {
		cols = append(cols, tie)
	}
	by := O(func(s *sql.Selector) {
		for _, c := range cols {
			if p.Desc {
				s.OrderBy(sql.Desc(s.C(c)))
			} else {
				s.OrderBy(sql.Asc(s.C(c)))
			}
		}
	})
	if tie != "" {
		return []O{by}
	}
	return append([]O{by}, defaults...)
}
