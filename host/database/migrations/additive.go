package migrations

import (
	"fmt"
	"regexp"
	"strings"
)

// Statements an expand file may hold: each leaves every table, column and
// index an older binary uses as it was, and whatever an older binary
// inserts stays valid (no NOT NULL column without a default, no unique
// index it does not know of).
var (
	createTable  = regexp.MustCompile(`(?is)^CREATE TABLE\b`)
	createIndex  = regexp.MustCompile(`(?is)^CREATE INDEX\b`)
	pragmaFK     = regexp.MustCompile(`(?is)^PRAGMA foreign_keys\s*=\s*(on|off)$`)
	alterTable   = regexp.MustCompile("(?is)^ALTER TABLE\\s+[`\"]?\\w+[`\"]?\\s+(.*)$")
	addColumn    = regexp.MustCompile(`(?is)^ADD COLUMN\b`)
	addIndex     = regexp.MustCompile(`(?is)^ADD (INDEX|KEY)\b`)
	notNull      = regexp.MustCompile(`(?i)\bNOT NULL\b`)
	withDefault  = regexp.MustCompile(`(?i)\bDEFAULT\b`)
	quotedString = regexp.MustCompile(`'(?:[^']|'')*'`)
	createUnique = regexp.MustCompile("(?is)^CREATE UNIQUE INDEX\\s+[`\"]?(\\w+)[`\"]?\\s+ON\\b")
)

// reviewedUniqueIndexes are the unique indexes an expand file may create:
// each refuses only writes that the release adding it forbids anyway (an
// older binary running beside it during a rolling upgrade gets a
// constraint error for those writes and for nothing else), reviewed by hand.
var reviewedUniqueIndexes = map[string]string{
	"sysuser_phone_delete_key": "0016: at most one live user per phone; refuses an older binary's second live user with a phone already taken (SMS login)",
}

// Additive reports why a statement is not additive (nil when it is): the
// check behind MarkExpand (TestExpandFilesAreAdditive and the generator's
// -expand). It is a guard for reviewers, not a proof: a Go data step of
// the file is reviewed by hand.
func Additive(stmt string) error {
	s := strings.TrimSpace(stmt)
	switch {
	case createTable.MatchString(s), createIndex.MatchString(s), pragmaFK.MatchString(s):
		return nil
	}
	if m := createUnique.FindStringSubmatch(s); m != nil {
		if _, ok := reviewedUniqueIndexes[m[1]]; ok {
			return nil
		}
		return fmt.Errorf("not additive: a unique index refuses an older binary's inserts (list it in reviewedUniqueIndexes only when it refuses nothing but what this release forbids): %s", clip(s))
	}
	m := alterTable.FindStringSubmatch(s)
	if m == nil {
		return fmt.Errorf("not additive (only CREATE TABLE, CREATE INDEX and ALTER TABLE ... ADD COLUMN / ADD INDEX are): %s", clip(s))
	}
	for _, clause := range splitClauses(m[1]) {
		switch {
		case addIndex.MatchString(clause):
		case addColumn.MatchString(clause):
			bare := quotedString.ReplaceAllString(clause, "''")
			if notNull.MatchString(bare) && !withDefault.MatchString(bare) {
				return fmt.Errorf("not additive: a NOT NULL column without a default breaks an older binary's inserts: %s", clip(s))
			}
		default:
			return fmt.Errorf("not additive (ALTER TABLE may only ADD COLUMN or ADD INDEX): %s", clip(s))
		}
	}
	return nil
}

// splitClauses splits the clauses of an ALTER TABLE at the commas outside
// parentheses and quotes.
func splitClauses(s string) []string {
	var (
		out   []string
		depth int
		quote rune
		start int
	)
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"' || r == '`':
			quote = r
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
