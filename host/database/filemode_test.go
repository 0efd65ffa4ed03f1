package database_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestSqliteFilesArePrivate starts a kernel on a SQLite file, writes (a
// login writes a session and the login log) and checks that the database,
// -wal and -shm files are 0600 (they were 0644 before: password hashes and
// sessions readable by every local user). Files left 0644 by an older
// version are narrowed at start, with an Info line.
func TestSqliteFilesArePrivate(t *testing.T) {
	for _, tt := range []struct {
		name     string
		existing bool
	}{
		{name: "new database"},
		{name: "existing files with mode 0644", existing: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ak.db")
			if tt.existing {
				// An empty file is a valid SQLite database; the companions
				// are recreated by SQLite when empty.
				for _, p := range []string{path, path + "-wal", path + "-shm"} {
					if err := os.WriteFile(p, nil, 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Chmod(p, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			k := kerneltest.Start(t, []string{
				"Service__Database__DbType=Sqlite",
				"Service__Database__ConnectionString=Data Source=" + path,
			})
			k.Admin() // a write
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				st, err := os.Stat(p)
				if err != nil {
					t.Fatalf("after a start and a write: %v", err)
				}
				if got := st.Mode().Perm(); got != 0o600 {
					t.Errorf("%s has mode %v, want -rw-------", filepath.Base(p), got)
				}
			}
			narrowed := strings.Count(k.Log(), "Sqlite file mode narrowed")
			if want := map[bool]int{false: 0, true: 3}[tt.existing]; narrowed != want {
				t.Errorf("%d files narrowed in the log, want %d:\n%s", narrowed, want, k.Log())
			}
		})
	}
}
