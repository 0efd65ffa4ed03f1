package seed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBannerLinesAreEquallyWide(t *testing.T) {
	tests := []struct {
		name, account string
		// wide is the number of two-column characters on the account line.
		wide int
	}{
		{"ascii", "superAdmin", 0},
		{"long account widens the box", strings.Repeat("a", 90), 0},
		{"CJK account", "超级管理员", 5},
		{"control characters are escaped", "evil\n| password: x", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := strings.Split(Banner(tt.account, "Abcdefghjkmnpqrs"), "\n")
			if len(lines) != 7 {
				t.Fatalf("banner has %d lines, want 7:\n%s", len(lines), strings.Join(lines, "\n"))
			}
			want := utf8.RuneCountInString(lines[0])
			for i, l := range lines {
				cols := utf8.RuneCountInString(l)
				if strings.Contains(l, "account:") {
					cols += tt.wide
				}
				if cols != want {
					t.Errorf("line %d is %d columns wide, the border %d:\n%s", i, cols, want, strings.Join(lines, "\n"))
				}
				border := "|"
				if i == 0 || i == len(lines)-1 {
					border = "+"
				}
				if !strings.HasPrefix(l, border) || !strings.HasSuffix(l, border) {
					t.Errorf("line %d is not boxed: %q", i, l)
				}
			}
		})
	}
}

func TestWritePasswordFileNeverOverwrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // created on demand
	first, err := writePasswordFile(dir, "superAdmin", "FirstPassword123")
	if err != nil {
		t.Fatal(err)
	}
	if first != filepath.Join(dir, PasswordFileName) {
		t.Fatalf("first file = %s, want %s", first, PasswordFileName)
	}
	second, err := writePasswordFile(dir, "superAdmin", "SecondPassword45")
	if err != nil {
		t.Fatal(err)
	}
	if second == first || filepath.Dir(second) != dir || !strings.HasPrefix(filepath.Base(second), "superadmin-password-") {
		t.Fatalf("second file = %s", second)
	}
	for path, want := range map[string]string{first: "FirstPassword123", second: "SecondPassword45"} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %o, want 600", path, st.Mode().Perm())
		}
		body, _ := os.ReadFile(path)
		if !strings.Contains(string(body), "password: "+want+"\n") {
			t.Errorf("%s holds %q, want the password %s", path, body, want)
		}
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	if os.Geteuid() != 0 { // root writes anywhere
		if _, err := writePasswordFile(dir, "superAdmin", "x"); err == nil {
			t.Error("writing into a read-only directory succeeded")
		}
	}
}
