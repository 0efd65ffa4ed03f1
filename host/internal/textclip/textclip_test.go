package textclip

import "testing"

func TestClip(t *testing.T) {
	const bad = "a\xff\xfeb" // two invalid bytes between a and b
	cases := []struct {
		name string
		f    func(string, int) string
		s    string
		n    int
		want string
	}{
		{"runes fits", Runes, "héllo", 5, "héllo"},
		{"runes counts characters", Runes, "héllo", 2, "hé"},
		{"runes cjk", Runes, "日本語テキスト", 3, "日本語"},
		{"runes zero", Runes, "abc", 0, ""},
		{"runes negative", Runes, "abc", -1, ""},
		{"runes empty", Runes, "", 3, ""},
		{"runes invalid kept when it fits", Runes, bad, 4, bad},
		{"runes invalid byte becomes U+FFFD when cut", Runes, bad, 3, "a\uFFFD\uFFFD"},
		{"valid fits", ValidRunes, "héllo", 5, "héllo"},
		{"valid cut", ValidRunes, "héllo", 2, "hé"},
		{"valid repairs a short string", ValidRunes, bad, 10, "a\uFFFDb"},
		{"valid counts after repair", ValidRunes, bad, 2, "a\uFFFD"},
		{"valid zero", ValidRunes, "abc", 0, ""},
		{"bytes fits", Bytes, "héllo", 6, "héllo"},
		{"bytes counts bytes", Bytes, "héllo", 3, "hé"},
		{"bytes may split a character", Bytes, "héllo", 2, "h\xc3"},
		{"bytes zero", Bytes, "abc", 0, ""},
		{"marked fits", func(s string, n int) string { return BytesMarked(s, n, "…") }, "abc", 3, "abc"},
		{"marked cut", func(s string, n int) string { return BytesMarked(s, n, "…") }, "abcdef", 3, "abc…"},
		{"marked zero", func(s string, n int) string { return BytesMarked(s, n, "…") }, "abc", 0, "…"},
		{"marked empty", func(s string, n int) string { return BytesMarked(s, n, "…") }, "", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f(tc.s, tc.n); got != tc.want {
				t.Fatalf("(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

func TestRuneOffset(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want int
	}{
		{"héllo", 2, 3},
		{"héllo", 5, 6},
		{"héllo", 9, 6},
		{"héllo", 0, 0},
		{"a\xffb", 2, 2},
		{"", 1, 0},
	}
	for _, tc := range cases {
		if got := RuneOffset(tc.s, tc.n); got != tc.want {
			t.Errorf("RuneOffset(%q, %d) = %d, want %d", tc.s, tc.n, got, tc.want)
		}
	}
}
