package migrations_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"entgo.io/ent/dialect"

	"github.com/adminkernel/kernel/host/database/migrations"
)

func TestCompatibleFrom(t *testing.T) {
	plain := []byte("CREATE TABLE a (id int);\n")
	expand := []byte("-- 0002 x: generated\n" + migrations.MarkExpand + "\nCREATE TABLE b (id int);\n")
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []int
		wantErr string
	}{
		{name: "no marks: each file needs a binary that knows it",
			files: fstest.MapFS{"d/0001_a.sql": {Data: plain}, "d/0002_b.sql": {Data: plain}}, want: []int{1, 2}},
		{name: "expand keeps the previous file's compatibility",
			files: fstest.MapFS{"d/0001_a.sql": {Data: plain}, "d/0002_b.sql": {Data: expand}, "d/0003_c.sql": {Data: expand}}, want: []int{1, 1, 1}},
		{name: "a contract file after expand files",
			files: fstest.MapFS{"d/0001_a.sql": {Data: plain}, "d/0002_b.sql": {Data: expand},
				"d/0003_c.sql": {Data: []byte(migrations.MarkCompatibleFrom + " 2\nALTER TABLE a DROP COLUMN x;\n")}}, want: []int{1, 1, 2}},
		{name: "expand on the first file is the file itself",
			files: fstest.MapFS{"d/0001_a.sql": {Data: expand}}, want: []int{1}},
		{name: "a mark after the first statement is not a mark",
			files: fstest.MapFS{"d/0001_a.sql": {Data: plain}, "d/0002_b.sql": {Data: []byte("CREATE TABLE b (id int);\n" + migrations.MarkExpand + "\n")}}, want: []int{1, 2}},
		{name: "compatible-from after the file",
			files: fstest.MapFS{"d/0001_a.sql": {Data: []byte(migrations.MarkCompatibleFrom + " 2\nSELECT 1;\n")}}, wantErr: "after the file's own"},
		{name: "compatible-from without a number",
			files: fstest.MapFS{"d/0001_a.sql": {Data: []byte(migrations.MarkCompatibleFrom + " x\nSELECT 1;\n")}}, wantErr: "want -- adminkernel:compatible-from <revision>"},
		{name: "both marks",
			files: fstest.MapFS{"d/0001_a.sql": {Data: plain}, "d/0002_b.sql": {Data: []byte(migrations.MarkExpand + "\n" + migrations.MarkCompatibleFrom + " 1\nSELECT 1;\n")}}, wantErr: "choose one"},
		{name: "a misspelt mark",
			files: fstest.MapFS{"d/0001_a.sql": {Data: []byte("-- adminkernel:expnad\nSELECT 1;\n")}}, wantErr: "unknown mark"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := migrations.Read(tt.files, "d")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int, len(files))
			for i, f := range files {
				got[i] = f.CompatibleFrom
			}
			if len(got) != len(tt.want) {
				t.Fatalf("compatible-from %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("compatible-from %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestAdditive(t *testing.T) {
	tests := []struct {
		stmt    string
		wantErr string
	}{
		{stmt: "CREATE TABLE `sys_x` (`id` bigint NOT NULL, PRIMARY KEY (`id`))"},
		{stmt: `CREATE INDEX "sysuser_a" ON "sys_user" ("a")`},
		{stmt: "PRAGMA foreign_keys = off"},
		{stmt: "ALTER TABLE `sys_op_log` ADD COLUMN `trace_id` varchar(64) NULL"},
		{stmt: `ALTER TABLE "sys_op_log" ADD COLUMN "n" bigint NOT NULL DEFAULT 0`},
		{stmt: "ALTER TABLE `t` ADD COLUMN `a` text NULL, ADD COLUMN `b` varchar(8) NOT NULL DEFAULT 'x,y', ADD INDEX `t_a` (`a`, `b`)"},
		{stmt: "ALTER TABLE `t` ADD COLUMN `a` varchar(8) NOT NULL", wantErr: "NOT NULL column without a default"},
		{stmt: "ALTER TABLE `t` ADD COLUMN `a` varchar(8) NOT NULL COMMENT 'DEFAULT'", wantErr: "NOT NULL column without a default"},
		{stmt: "ALTER TABLE `t` ADD COLUMN `a` text NULL, DROP COLUMN `b`", wantErr: "may only ADD COLUMN or ADD INDEX"},
		{stmt: `ALTER TABLE "t" ALTER COLUMN "a" TYPE bigint`, wantErr: "may only ADD COLUMN or ADD INDEX"},
		{stmt: "ALTER TABLE `t` ADD UNIQUE INDEX `u` (`a`)", wantErr: "may only ADD COLUMN or ADD INDEX"},
		{stmt: `CREATE UNIQUE INDEX "u" ON "t" ("a")`, wantErr: "a unique index refuses an older binary's inserts"},
		{stmt: "CREATE UNIQUE INDEX `sysuser_phone_delete_key` ON `sys_user` (`phone`, `delete_key`)"},
		{stmt: `CREATE UNIQUE INDEX "sysuser_phone_delete_key" ON "sys_user" ("phone", "delete_key")`},
		{stmt: "DROP TABLE `t`", wantErr: "not additive"},
		{stmt: "INSERT INTO `new_t` SELECT * FROM `t`", wantErr: "not additive"},
		{stmt: "ALTER TABLE `new_t` RENAME TO `t`", wantErr: "may only ADD COLUMN or ADD INDEX"},
	}
	for _, tt := range tests {
		t.Run(tt.stmt, func(t *testing.T) {
			err := migrations.Additive(tt.stmt)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestExpandFilesAreAdditive: every file marked expand holds only additive
// statements, in every dialect, and the three dialects agree on each
// file's compatibility (one release, one rule).
func TestExpandFilesAreAdditive(t *testing.T) {
	byVersion := map[int]int{}
	for _, d := range []string{dialect.SQLite, dialect.Postgres, dialect.MySQL} {
		files, err := migrations.For(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if prev, ok := byVersion[f.Version]; ok && prev != f.CompatibleFrom {
				t.Errorf("%s: compatible from %d, another dialect says %d", f.Path, f.CompatibleFrom, prev)
			}
			byVersion[f.Version] = f.CompatibleFrom
			if !f.Expand {
				continue
			}
			stmts, err := f.Statements()
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range stmts {
				if err := migrations.Additive(s); err != nil {
					t.Errorf("%s is marked expand: %v", f.Path, err)
				}
			}
		}
	}
	if len(byVersion) == 0 {
		t.Fatal("no migration files")
	}
}
