package migrations_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/adminkernel/kernel/host/database/migrations"
)

func TestRead(t *testing.T) {
	lf := "CREATE TABLE a (id int);\nCREATE TABLE b (id int);\n"
	tests := []struct {
		name    string
		files   fstest.MapFS
		wantErr string
		want    []int
	}{
		{name: "in order", files: fstest.MapFS{"d/0001_a.sql": {Data: []byte(lf)}, "d/0002_b.sql": {Data: []byte("SELECT 1;")}}, want: []int{1, 2}},
		{name: "gap", files: fstest.MapFS{"d/0001_a.sql": {Data: []byte(lf)}, "d/0003_c.sql": {Data: []byte(lf)}}, wantErr: "expected version 0002"},
		{name: "duplicate", files: fstest.MapFS{"d/0001_a.sql": {Data: []byte(lf)}, "d/0001_b.sql": {Data: []byte(lf)}}, wantErr: "expected version 0002"},
		{name: "not starting at 1", files: fstest.MapFS{"d/0002_a.sql": {Data: []byte(lf)}}, wantErr: "expected version 0001"},
		{name: "bad name", files: fstest.MapFS{"d/1_Add.sql": {Data: []byte(lf)}}, wantErr: "not named NNNN_name.sql"},
		{name: "other files ignored", files: fstest.MapFS{"d/0001_a.sql": {Data: []byte(lf)}, "d/README.md": {Data: []byte("x")}}, want: []int{1}},
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
			if len(files) != len(tt.want) {
				t.Fatalf("%d files, want %d", len(files), len(tt.want))
			}
			for i, f := range files {
				if f.Version != tt.want[i] {
					t.Errorf("file %d version %d, want %d", i, f.Version, tt.want[i])
				}
			}
		})
	}
}

// TestChecksumIgnoresLineEnds: a CRLF checkout hashes like the LF file; any
// other change does not.
func TestChecksumIgnoresLineEnds(t *testing.T) {
	read := func(body string) migrations.File {
		files, err := migrations.Read(fstest.MapFS{"d/0001_a.sql": {Data: []byte(body)}}, "d")
		if err != nil {
			t.Fatal(err)
		}
		return files[0]
	}
	lf := read("CREATE TABLE a (id int);\nCREATE TABLE b (id int);\n")
	crlf := read("CREATE TABLE a (id int);\r\nCREATE TABLE b (id int);\r\n")
	changed := read("CREATE TABLE a (id bigint);\nCREATE TABLE b (id int);\n")
	if lf.Checksum != crlf.Checksum {
		t.Errorf("CRLF changed the checksum: %s != %s", lf.Checksum, crlf.Checksum)
	}
	if lf.Checksum == changed.Checksum {
		t.Error("a changed statement kept the checksum")
	}
	stmts, err := lf.Statements()
	if err != nil || len(stmts) != 2 || stmts[0] != "CREATE TABLE a (id int)" {
		t.Fatalf("statements = %q, %v", stmts, err)
	}
}
