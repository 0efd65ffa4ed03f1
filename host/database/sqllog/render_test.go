package sqllog

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
)

type named string

func TestRender(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123000000, time.UTC)
	str := "ptr"
	var nilPtr *string
	tests := []struct {
		name    string
		dialect string
		query   string
		args    []any
		want    string
	}{
		{
			name:    "insert column list",
			dialect: dialect.MySQL,
			query:   "INSERT INTO `sys_user` (`account`, `password_hash`, `enabled`) VALUES (?, ?, ?)",
			args:    []any{"bob", "hash", true},
			want:    "INSERT INTO `sys_user` (`account`, `password_hash`, `enabled`) VALUES ('bob', '***', 1)",
		},
		{
			name:    "multi-row insert",
			dialect: dialect.SQLite,
			query:   "INSERT INTO `t` (`id`, `api_key`) VALUES (?, ?), (?, ?)",
			args:    []any{1, "k1", 2, "k2"},
			want:    "INSERT INTO `t` (`id`, `api_key`) VALUES (1, '***'), (2, '***')",
		},
		{
			name:    "insert with expressions and nested parens",
			dialect: dialect.SQLite,
			query:   "INSERT INTO t (a, token, b) VALUES (lower(?), COALESCE(?, ''), ?)",
			args:    []any{"X", "tok", 3},
			want:    "INSERT INTO t (a, token, b) VALUES (lower('X'), COALESCE('***', ''), 3)",
		},
		{
			name:    "insert returning postgres",
			dialect: dialect.Postgres,
			query:   `INSERT INTO "sys_user" ("account", "password_hash", "enabled", "is_delete") VALUES ($1, $2, $3, $4) RETURNING "id"`,
			args:    []any{"bob", "hash", true, false},
			want:    `INSERT INTO "sys_user" ("account", "password_hash", "enabled", "is_delete") VALUES ('bob', '***', 1, 0) RETURNING "id"`,
		},
		{
			name:    "update set",
			dialect: dialect.MySQL,
			query:   "UPDATE `sys_user` SET `password_hash` = ?, `name` = ? WHERE `id` = ?",
			args:    []any{"h", "Bob", 7},
			want:    "UPDATE `sys_user` SET `password_hash` = '***', `name` = 'Bob' WHERE `id` = 7",
		},
		{
			name:    "set with expression",
			dialect: dialect.Postgres,
			query:   `UPDATE "t" SET "secret_count" = COALESCE("t"."secret_count", 0) + $1, "n" = $2 WHERE "t"."id" = $3`,
			args:    []any{1, 2, 3},
			want:    `UPDATE "t" SET "secret_count" = COALESCE("t"."secret_count", 0) + '***', "n" = 2 WHERE "t"."id" = 3`,
		},
		{
			name:    "equals and not equals",
			dialect: dialect.SQLite,
			query:   "SELECT * FROM t WHERE password = ? AND name <> ? AND pwd != ?",
			args:    []any{"p", "n", "q"},
			want:    "SELECT * FROM t WHERE password = '***' AND name <> 'n' AND pwd != '***'",
		},
		{
			name:    "table-qualified",
			dialect: dialect.SQLite,
			query:   "SELECT * FROM sys_session s WHERE s.refresh_token = ? AND s.user_id = ?",
			args:    []any{"rt", 5},
			want:    "SELECT * FROM sys_session s WHERE s.refresh_token = '***' AND s.user_id = 5",
		},
		{
			name:    "in list",
			dialect: dialect.MySQL,
			query:   "SELECT * FROM t WHERE `t`.`token` IN (?, ?) AND `id` NOT IN (?, ?)",
			args:    []any{"a", "b", 1, 2},
			want:    "SELECT * FROM t WHERE `t`.`token` IN ('***', '***') AND `id` NOT IN (1, 2)",
		},
		{
			name:    "quoted identifiers",
			dialect: dialect.Postgres,
			query:   `SELECT "id" FROM "sys_user" WHERE "sys_user"."Authorization" = $1 AND "account" = $2`,
			args:    []any{"Bearer x", "bob"},
			want:    `SELECT "id" FROM "sys_user" WHERE "sys_user"."Authorization" = '***' AND "account" = 'bob'`,
		},
		{
			name:    "postgres placeholders out of order and repeated",
			dialect: dialect.Postgres,
			query:   `SELECT * FROM t WHERE "cookie" = $2 OR "name" = $1 OR "other" = $2`,
			args:    []any{"n", "c"},
			want:    `SELECT * FROM t WHERE "cookie" = '***' OR "name" = 'n' OR "other" = '***'`,
		},
		{
			name:    "postgres question mark is an operator",
			dialect: dialect.Postgres,
			query:   `SELECT * FROM t WHERE data ? 'k' AND "id" = $1`,
			args:    []any{9},
			want:    `SELECT * FROM t WHERE data ? 'k' AND "id" = 9`,
		},
		{
			name:    "reverse comparison and function",
			dialect: dialect.SQLite,
			query:   "SELECT * FROM t WHERE ? = secret AND lower(`email`) = ? AND upper(credential) LIKE ?",
			args:    []any{"s", "E", "C%"},
			want:    "SELECT * FROM t WHERE '***' = secret AND lower(`email`) = 'E' AND upper(credential) LIKE '***'",
		},
		{
			name:    "comparison with function call value",
			dialect: dialect.SQLite,
			query:   "SELECT * FROM t WHERE token_hash = lower(trim(?)) LIMIT ? OFFSET ?",
			args:    []any{"t", 10, 20},
			want:    "SELECT * FROM t WHERE token_hash = lower(trim('***')) LIMIT 10 OFFSET 20",
		},
		{
			name:    "between",
			dialect: dialect.SQLite,
			query:   "SELECT * FROM t WHERE token BETWEEN ? AND ? AND id BETWEEN ? AND ?",
			args:    []any{"a", "z", 1, 2},
			want:    "SELECT * FROM t WHERE token BETWEEN '***' AND '***' AND id BETWEEN 1 AND 2",
		},
		{
			name:    "booleans, nil and numbers",
			dialect: dialect.SQLite,
			query:   "UPDATE t SET a = ?, b = ?, c = ?, d = ?, e = ?, f = ? WHERE g = ?",
			args:    []any{true, false, nil, 1.5, int64(-3), uint8(7), nilPtr},
			want:    "UPDATE t SET a = 1, b = 0, c = NULL, d = 1.5, e = -3, f = 7 WHERE g = NULL",
		},
		{
			name:    "quotes escaped, pointers, named types, valuers",
			dialect: dialect.SQLite,
			query:   "SELECT ?, ?, ?, ?, ?",
			args:    []any{"O'Brien", &str, named("x'y"), sql.NullString{}, sql.NullInt64{Int64: 4, Valid: true}},
			want:    "SELECT 'O''Brien', 'ptr', 'x''y', NULL, 4",
		},
		{
			name:    "times and bytes",
			dialect: dialect.SQLite,
			query:   "SELECT ?, ?, ?, ?",
			args:    []any{ts, []byte(`{"a":1}`), []byte{0, 1, 0xfe}, make([]byte, 100)},
			want:    `SELECT '2024-05-06T07:08:09.123Z', '{"a":1}', X'0001fe', '<100 bytes>'`,
		},
		{
			name:    "postgres bytes",
			dialect: dialect.Postgres,
			query:   "SELECT $1",
			args:    []any{[]byte{0xab}},
			want:    `SELECT '\xab'`,
		},
		{
			name:    "masked null and boolean",
			dialect: dialect.SQLite,
			query:   "UPDATE t SET totp_secret = ?, header_ok = ?",
			args:    []any{nil, true},
			want:    "UPDATE t SET totp_secret = '***', header_ok = '***'",
		},
		{
			name:    "named argument",
			dialect: dialect.SQLite,
			query:   "SELECT ?, ?",
			args:    []any{sql.Named("apiKey", "k"), sql.Named("n", "v")},
			want:    "SELECT '***', 'v'",
		},
		{
			name:    "placeholders in literals and comments are not parameters",
			dialect: dialect.MySQL,
			query:   "SELECT '?' AS q, `a?` /* ? */ FROM t WHERE password = ? -- ?\n AND x = ?",
			args:    []any{"p", 1},
			want:    "SELECT '?' AS q, `a?` /* ? */ FROM t WHERE password = '***' -- ?\n AND x = 1",
		},
		{
			name:    "upsert on duplicate key",
			dialect: dialect.MySQL,
			query:   "INSERT INTO t (id, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE token = ?, v = VALUES(v)",
			args:    []any{1, "v", "t"},
			want:    "INSERT INTO t (id, v) VALUES (1, 'v') ON DUPLICATE KEY UPDATE token = '***', v = VALUES(v)",
		},
		{
			name:    "fewer args than placeholders",
			dialect: dialect.SQLite,
			query:   "SELECT * FROM t WHERE a = ? AND b = ?",
			args:    []any{1},
			want:    "SELECT * FROM t WHERE a = 1 AND b = ?",
		},
		{
			name:    "values are never tested, only names",
			dialect: dialect.SQLite,
			query:   "SELECT * FROM t WHERE name = ?",
			args:    []any{"password"},
			want:    "SELECT * FROM t WHERE name = 'password'",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Render(tc.dialect, tc.query, tc.args); got != tc.want {
				t.Errorf("Render:\n got  %s\n want %s", got, tc.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"short", "SELECT 1", 10, "SELECT 1"},
		{"exact", "SELECT 1", 8, "SELECT 1"},
		{"cut", "SELECT 12345", 8, "SELECT 1… (12 chars)"},
		{"runes", "SELECT 'ééé'", 9, "SELECT 'é… (12 chars)"},
		{"default", strings.Repeat("x", DefaultMaxSQLChars+1), 0, strings.Repeat("x", DefaultMaxSQLChars) + "… (4001 chars)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := truncate(tc.in, tc.max); got != tc.want {
				t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
		})
	}
}

func TestScrub(t *testing.T) {
	args := []any{"bob", "topsecret", "ab"}
	masked := map[int]bool{1: true, 2: true}
	got := scrub("Duplicate entry 'topsecret-0' for key 'ab_idx' (bob)", args, masked)
	want := "Duplicate entry '***-0' for key 'ab_idx' (bob)"
	if got != want {
		t.Errorf("scrub = %q, want %q", got, want)
	}
}
