package sqllog

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
)

var fuzzDialects = []string{dialect.MySQL, dialect.SQLite, dialect.Postgres}

// sensitiveShapes bind the placeholder @ to the sensitive column %C in the
// forms Render documents.
var sensitiveShapes = []string{
	"%C = @",
	"%C <> @",
	"%C != @",
	"%C IN (@)",
	"%C NOT IN (1, @)",
	"%C BETWEEN @ AND 9",
	"%C LIKE @",
	"lower(%C) = @",
	"@ = %C",
	"UPDATE t SET %C = @",
	"UPDATE t SET %C = COALESCE(%C, 0) + @",
	"INSERT INTO t (id, %C) VALUES (1, @)",
}

var sensitiveColumns = []string{
	"password", "password_hash", "`password_hash`", `"refresh_token"`, "t.secret",
	`s."api_key"`, "`t`.`Token`", "credential", "totp_secret", "Authorization",
}

// FuzzRender renders random statements with random arguments (no panic),
// then embeds a sensitive binding in random surroundings: the rendered
// statement must not depend on the value bound to the sensitive column
// (whenever that placeholder is a placeholder at all, not text inside a
// literal or comment).
func FuzzRender(f *testing.F) {
	f.Add(uint8(0), uint8(0), "SELECT * FROM sys_user WHERE", "AND id = ?", "filler", int64(7), []byte("raw"))
	f.Add(uint8(1), uint8(11), "", "", "O'Brien", int64(-1), []byte{0, 1, 0xfe})
	f.Add(uint8(2), uint8(3), "SELECT * FROM t WHERE a = $2 AND", "OR b = $1 RETURNING id", "x", int64(1<<62), []byte(nil))
	f.Add(uint8(0), uint8(9), "SELECT '?' AS q, `a?` /* ? */ FROM t WHERE", "-- ?\n AND x = ?", "y", int64(0), []byte("{}"))
	f.Add(uint8(1), uint8(27), "INSERT INTO x (a, b) VALUES (?, (", ")) ON CONFLICT DO UPDATE SET v = ?", "\u00e9\u200b", int64(42), []byte("\xff"))
	f.Add(uint8(2), uint8(40), "SELECT $0, $99999999999999999999, $", "$1::text", "", int64(3), []byte("b"))
	f.Add(uint8(0), uint8(5), "SELECT `unterminated", "'also", "\\'", int64(9), []byte("\\"))
	f.Fuzz(func(t *testing.T, d, shape uint8, pre, post, filler string, n int64, raw []byte) {
		dia := fuzzDialects[int(d)%len(fuzzDialects)]

		// Arbitrary statements and argument kinds never panic.
		var nilPtr *string
		args := []any{filler, n, raw, nil, true, float64(n) / 3, sql.Named(filler, filler), time.Unix(n%1e10, 0).UTC(),
			nilPtr, &filler, sql.NullString{String: filler, Valid: n%2 == 0}, uint64(n), []string{filler}}
		_ = Render(dia, pre+" "+post, args)
		_ = truncate(Render(dia, pre+post, args[:int(uint64(n)%uint64(len(args)+1))]), int(n%64))

		// A sensitive binding in random surroundings.
		s := sensitiveShapes[int(shape)%len(sensitiveShapes)]
		col := sensitiveColumns[int(shape)/len(sensitiveShapes)%len(sensitiveColumns)]
		body := strings.ReplaceAll(s, "%C", col)
		// The binding is its own predicate (or statement), so the
		// surroundings cannot make it part of another expression: in
		// "a = ? = secret" the value is compared with a.
		sep := " AND "
		if strings.HasPrefix(body, "UPDATE") || strings.HasPrefix(body, "INSERT") {
			sep = " ; "
		}
		at := strings.Index(body, "@")
		query := pre + sep + body[:at]
		offset := len(query)
		ph := "?"
		if dia == dialect.Postgres {
			ph = "$" + strconv.Itoa(int(uint64(n)%4)+1)
		}
		query += ph + body[at+1:] + sep + post

		toks := tokenize(query, dia)
		ours, maxArg := -1, -1
		for _, tk := range toks {
			if tk.kind != tkPlaceholder {
				continue
			}
			if tk.start == offset {
				ours = tk.arg
			}
			maxArg = max(maxArg, tk.arg)
		}
		if ours < 0 || maxArg > 1000 {
			return // inside a literal or comment: not a parameter
		}
		if strings.HasPrefix(body, "INSERT") && hasKeyword(tokenize(pre, dia), "INSERT", "REPLACE") {
			return // an INSERT inside another one's VALUES is not SQL
		}
		with := func(v any) string {
			a := make([]any, maxArg+1)
			for i := range a {
				a[i] = filler
			}
			a[ours] = v
			return Render(dia, query, a)
		}
		one, other := with("s3cr3t-value-one"), with("an0ther-secret-value")
		if one != other {
			t.Fatalf("%s: the value bound to %s shows in the log:\nquery: %s\nout:   %s\nout:   %s", dia, col, query, one, other)
		}
		// A sensitive named argument is masked wherever it is bound.
		named := func(v string) string {
			a := make([]any, maxArg+1)
			for i := range a {
				a[i] = filler
			}
			a[ours] = sql.Named("refreshToken", v)
			return Render(dia, pre+" "+ph+" "+post, a)
		}
		if x, y := named("s3cr3t-value-one"), named("an0ther-secret-value"); x != y {
			t.Fatalf("%s: a sensitive named argument shows in the log: %s", dia, x)
		}
	})
}

func hasKeyword(toks []token, words ...string) bool {
	for _, tk := range toks {
		for _, w := range words {
			if tk.is(w) {
				return true
			}
		}
	}
	return false
}
