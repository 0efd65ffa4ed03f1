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
}

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
	for i, f := range out {
		if f.Version != i+1 {
			return nil, fmt.Errorf("migrations: %s: expected version %04d (versions start at 1 without gaps or duplicates)", f.Path, i+1)
		}
	}
	return out, nil
}
