// Package migrations holds the kernel's versioned schema migrations: one
// directory of SQL files per dialect (sqlite, postgres, mysql), embedded in
// the binary. A file is named NNNN_name.sql; versions start at 1 and have no
// gaps, and every dialect has the same versions with the same names.
//
// The files are generated, never written by hand: `go run
// ./host/database/migrations/gen -name <what_changed>` diffs "every existing
// file applied to an empty database" against the current ent schema on each
// dialect and writes the next file (see README.md in this directory).
// host/database applies them (database.DB.ApplyMigrations) and records them in
// the table sys_schema_revision.
package migrations

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"

	"ariga.io/atlas/sql/migrate"
	"entgo.io/ent/dialect"
)

//go:embed sqlite/*.sql postgres/*.sql mysql/*.sql
var files embed.FS

// File is one migration of one dialect.
type File struct {
	// Version is the number NNNN of the file name (1, 2, ...).
	Version int
	// Name is the part after the number, without ".sql" ("initial").
	Name string
	// Path is the file's path inside the embedded tree ("sqlite/0001_initial.sql").
	Path string
	// SQL is the file's content.
	SQL []byte
	// Checksum is the hex SHA-256 of SQL (line ends normalised to LF): an
	// applied file whose checksum changed is refused.
	Checksum string
	// CompatibleFrom is the oldest revision a binary must know to run
	// against a schema that has this file applied (rolling upgrades,
	// docs/operators/upgrade.md): the file's own version unless the file carries a
	// compatibility mark (MarkExpand, MarkCompatibleFrom).
	CompatibleFrom int
	// Expand: the file carries MarkExpand (additive only).
	Expand bool
}

// Compatibility marks: a comment line of a migration file, the same in
// every dialect, saying which older binaries may keep running against a
// schema that has the file applied.
const (
	// MarkExpand marks an additive file (new tables, nullable or defaulted
	// columns, non-unique indexes; Additive checks the statements): it
	// keeps the compatibility of the file before it, so the previous
	// release runs against it.
	MarkExpand = "-- adminkernel:expand"
	// MarkCompatibleFrom, followed by a version, names the oldest revision
	// a binary must know: the mark of a contract file that removes what
	// releases since that revision no longer use.
	MarkCompatibleFrom = "-- adminkernel:compatible-from"
)

// Statements splits the file into its statements (comments dropped),
// without the terminating semicolons.
func (f File) Statements() ([]string, error) {
	stmts, err := migrate.Stmts(string(f.SQL))
	if err != nil {
		return nil, fmt.Errorf("migration %s: %w", f.Path, err)
	}
	out := make([]string, 0, len(stmts))
	for _, s := range stmts {
		text := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s.Text), ";"))
		if text != "" {
			out = append(out, text)
		}
	}
	return out, nil
}

// Dir returns the directory of an ent dialect (dialect.SQLite, dialect.Postgres,
// dialect.MySQL): "sqlite", "postgres" or "mysql".
func Dir(entDialect string) (string, error) {
	switch entDialect {
	case dialect.SQLite:
		return "sqlite", nil
	case dialect.Postgres:
		return "postgres", nil
	case dialect.MySQL:
		return "mysql", nil
	}
	return "", fmt.Errorf("migrations: no migrations for dialect %q", entDialect)
}

var fileName = regexp.MustCompile(`^([0-9]{4})_([a-z0-9_]+)\.sql$`)

// For returns the migrations of an ent dialect in version order.
func For(entDialect string) ([]File, error) {
	dir, err := Dir(entDialect)
	if err != nil {
		return nil, err
	}
	return Read(files, dir)
}

// Read reads and checks the migrations in dir of fsys: names NNNN_name.sql,
// versions 1..n without gaps or duplicates. The generator reads the source
// tree with it; the kernel reads the embedded files (For).
func Read(fsys fs.FS, dir string) ([]File, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var out []File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migrations: %s/%s is not named NNNN_name.sql (lower-case name)", dir, e.Name())
		}
		version, _ := strconv.Atoi(m[1])
		p := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		// A checkout that turned the line ends into CRLF (git's autocrlf)
		// must not change the checksum of an applied file.
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
		sum := sha256.Sum256(data)
		out = append(out, File{Version: version, Name: m[2], Path: p, SQL: data, Checksum: hex.EncodeToString(sum[:])})
	}
	// fs.ReadDir sorts by name, so by version.
	for i := range out {
		f := &out[i]
		if f.Version != i+1 {
			return nil, fmt.Errorf("migrations: %s: expected version %04d (versions start at 1 without gaps or duplicates)", f.Path, i+1)
		}
		expand, from, err := marks(f.SQL)
		if err != nil {
			return nil, fmt.Errorf("migrations: %s: %w", f.Path, err)
		}
		f.Expand = expand
		switch {
		case expand && i > 0:
			f.CompatibleFrom = out[i-1].CompatibleFrom
		case from > 0:
			if from > f.Version {
				return nil, fmt.Errorf("migrations: %s: %s %d names a revision after the file's own", f.Path, MarkCompatibleFrom, from)
			}
			f.CompatibleFrom = from
		default:
			f.CompatibleFrom = f.Version
		}
	}
	return out, nil
}

// marks reads the compatibility marks of a file: the comment lines before
// its first statement.
func marks(sql []byte) (expand bool, from int, err error) {
	for _, line := range strings.Split(string(sql), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "--") {
			break
		}
		switch {
		case line == MarkExpand:
			expand = true
		case strings.HasPrefix(line, MarkCompatibleFrom+" "):
			n, convErr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, MarkCompatibleFrom)))
			if convErr != nil || n < 1 {
				return false, 0, fmt.Errorf("%q: want %s <revision>", line, MarkCompatibleFrom)
			}
			from = n
		case strings.HasPrefix(line, "-- adminkernel:"):
			return false, 0, fmt.Errorf("unknown mark %q (known: %s, %s <revision>)", line, MarkExpand, MarkCompatibleFrom)
		}
	}
	if expand && from > 0 {
		return false, 0, fmt.Errorf("both %s and %s: choose one", MarkExpand, MarkCompatibleFrom)
	}
	return expand, from, nil
}
