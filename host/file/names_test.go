package file

import (
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/file/link"
	"github.com/adminkernel/kernel/host/file/storage"
)

func TestCleanName(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a.png", "a.png"},
		{`..\..\windows\win.ini`, "win.ini"},
		{"../../etc/passwd", "passwd"},
		{"  report .pdf. ", "report .pdf"},
		{"a\x00b\u202e.png", "ab.png"},
		{`say "hi".txt`, "say hi.txt"},
		{"...", ""},
		{"/", ""},
		{strings.Repeat("x", 300) + ".docx", strings.Repeat("x", 195) + ".docx"},
		{"bad\xffutf8.zip", "badutf8.zip"},
	}
	for _, c := range cases {
		if got := CleanName(c.in); got != c.want {
			t.Errorf("CleanName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDisposition(t *testing.T) {
	cases := []struct{ kind, name, want string }{
		{"attachment", "a.pdf", `attachment; filename="a.pdf"; filename*=UTF-8''a.pdf`},
		{"inline", "报告 1.png", `inline; filename="__ 1.png"; filename*=UTF-8''%E6%8A%A5%E5%91%8A%201.png`},
		{"attachment", `a;b%c\d.txt`, `attachment; filename="a_b_c_d.txt"; filename*=UTF-8''a%3Bb%25c%5Cd.txt`},
	}
	for _, c := range cases {
		if got := Disposition(c.kind, c.name); got != c.want {
			t.Errorf("Disposition(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCheckContent(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n0000")
	html := []byte("<!DOCTYPE html><script>x</script>")
	zip := []byte("PK\x03\x04rest")
	cases := []struct {
		ext  string
		head []byte
		want string
		ok   bool
	}{
		{".png", png, "image/png", true},
		{".png", html, "", false},
		{".jpg", png, "", false},
		{".xlsx", zip, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", true},
		{".xlsx", html, "", false},
		{".txt", []byte("hello"), "text/plain; charset=utf-8", true},
		{".txt", html, "", false},
		{".bin", zip, "application/octet-stream", true},
		{".bin", html, "", false},
		{".svg", []byte("<?xml version=\"1.0\"?><svg/>"), "", false},
	}
	for _, c := range cases {
		got, ok := CheckContent(c.ext, c.head)
		if got != c.want || ok != c.ok {
			t.Errorf("CheckContent(%s, %q) = %q, %v; want %q, %v", c.ext, c.head, got, ok, c.want, c.ok)
		}
	}
}

func TestParseRange(t *testing.T) {
	cases := []struct {
		h               string
		off, n          int64
		ok, satisfiable bool
	}{
		{"bytes=0-9", 0, 10, true, true},
		{"bytes=5-", 5, 95, true, true},
		{"bytes=-10", 90, 10, true, true},
		{"bytes=-1000", 0, 100, true, true},
		{"bytes=90-1000", 90, 10, true, true},
		{"bytes=100-", 0, 0, false, false},
		{"bytes=-0", 0, 0, false, false},
		{"bytes=0-1,3-4", 0, 0, false, true},
		{"bytes=9-1", 0, 0, false, true},
		{"items=0-1", 0, 0, false, true},
		{"bytes=a-b", 0, 0, false, true},
	}
	for _, c := range cases {
		off, n, ok, sat := parseRange(c.h, 100)
		if off != c.off || n != c.n || ok != c.ok || sat != c.satisfiable {
			t.Errorf("parseRange(%q) = %d, %d, %v, %v", c.h, off, n, ok, sat)
		}
	}
}

func TestLinkRing(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	oldKey := link.Key{ID: "old", Secret: []byte(strings.Repeat("o", 32))}
	newKey := link.Key{ID: "new", Secret: []byte(strings.Repeat("n", 32))}
	before := link.New([]link.Key{oldKey}, time.Hour)
	rotated := link.New([]link.Key{newKey, oldKey}, time.Hour)
	dropped := link.New([]link.Key{newKey}, time.Hour)
	exp := now.Add(time.Hour).Unix()
	sig, err := before.Sign(link.PurposeView, 42, exp, now.Unix())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		ring    *link.Ring
		purpose string
		id, exp int64
		at      time.Time
		want    bool
	}{
		{"same ring", before, link.PurposeView, 42, exp, now, true},
		{"after rotation", rotated, link.PurposeView, 42, exp, now, true},
		{"old key dropped", dropped, link.PurposeView, 42, exp, now, false},
		{"other id", before, link.PurposeView, 43, exp, now, false},
		{"other purpose", before, "download", 42, exp, now, false},
		{"other expiry", before, link.PurposeView, 42, exp + 1, now, false},
		{"expired", before, link.PurposeView, 42, exp, now.Add(2 * time.Hour), false},
	}
	for _, c := range cases {
		if got := c.ring.Verify(c.purpose, c.id, c.exp, sig, c.at); got != c.want {
			t.Errorf("%s: Verify = %v, want %v", c.name, got, c.want)
		}
	}
	if s, _ := rotated.Sign(link.PurposeView, 42, exp, now.Unix()); !strings.HasPrefix(s, "new.") {
		t.Errorf("the rotated ring signs with %q, want the first key", s)
	}
	if _, err := link.New(nil, 0).Sign(link.PurposeView, 1, 0, now.Unix()); err == nil {
		t.Error("a ring without keys signed")
	}
}

func TestObjectNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"files/2026/11/0123abcd": true, "chunks/123/4": true,
		"../x": false, "files/../x": false, "/abs": false, "a//b": false, "A/B": false, "": false, "a/./b": false,
	} {
		if err := storage.CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}
