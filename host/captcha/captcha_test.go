package captcha

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/errcode"
)

// glyphs parses the SVG with encoding/xml and returns the text glyphs in
// reading (x) order, failing the test when the markup is not well-formed.
func glyphs(t *testing.T, svg string) []string {
	t.Helper()
	type glyph struct {
		x float64
		s string
	}
	var out []glyph
	dec := xml.NewDecoder(strings.NewReader(svg))
	depth, sawRoot := 0, false
	var cur *glyph
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("svg is not well-formed XML: %v\n%s", err, svg)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root element = %v", el.Name)
				}
				sawRoot = true
			}
			depth++
			if el.Name.Local == "text" {
				cur = &glyph{}
				for _, a := range el.Attr {
					if a.Name.Local == "x" {
						cur.x, _ = strconv.ParseFloat(a.Value, 64)
					}
				}
			}
		case xml.CharData:
			if cur != nil {
				cur.s += string(el)
			}
		case xml.EndElement:
			depth--
			if el.Name.Local == "text" && cur != nil {
				out = append(out, *cur)
				cur = nil
			}
		}
	}
	if !sawRoot || depth != 0 {
		t.Fatalf("svg incomplete")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].x < out[j].x })
	s := make([]string, len(out))
	for i, g := range out {
		s[i] = g.s
	}
	return s
}

func answerOf(t *testing.T, ch Challenge) string {
	t.Helper()
	return strings.Join(glyphs(t, ch.SVG), "")
}

func wantCode(t *testing.T, err error, code errcode.Code) {
	t.Helper()
	e, ok := errcode.As(err)
	if !ok || e.Code != code {
		t.Fatalf("err = %v, want code %d", err, code)
	}
}

func TestIssueShape(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{})
	seen := map[string]bool{}
	for range 300 {
		ch, err := svc.Issue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ch.Type != TypeChar {
			t.Fatalf("type = %q", ch.Type)
		}
		if len(ch.ID) < 22 || !validID(ch.ID) { // 26 base32 chars = 130 bits
			t.Fatalf("id %q", ch.ID)
		}
		if seen[ch.ID] {
			t.Fatalf("duplicate id %q", ch.ID)
		}
		seen[ch.ID] = true
		gs := glyphs(t, ch.SVG)
		if len(gs) != DefaultLength {
			t.Fatalf("%d glyphs, want %d", len(gs), DefaultLength)
		}
		answer := strings.Join(gs, "")
		for _, g := range gs {
			if len(g) != 1 || !strings.Contains(Alphabet, g) {
				t.Fatalf("glyph %q not from alphabet", g)
			}
		}
		if strings.ContainsAny(answer, "0O1lI") {
			t.Fatalf("ambiguous character in %q", answer)
		}
		if strings.Contains(ch.SVG, answer) {
			t.Fatalf("answer %q appears contiguously in svg", answer)
		}
		if strings.Contains(ch.SVG, ch.ID) {
			t.Fatal("id leaked into svg")
		}
	}
}

func TestVerifyRightOnceAndCaseInsensitive(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{})
	ctx := context.Background()
	ch, err := svc.Issue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answer := answerOf(t, ch)
	if err := svc.Verify(ctx, ch.ID, " "+strings.ToLower(answer)+" "); err != nil {
		t.Fatalf("right answer (lower case): %v", err)
	}
	wantCode(t, svc.Verify(ctx, ch.ID, answer), errcode.CaptchaExpired)
}

func TestVerifySingleUseParallel(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{})
	ctx := context.Background()
	ch, err := svc.Issue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answer := answerOf(t, ch)
	var ok, expired atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := svc.Verify(ctx, ch.ID, answer)
			if err == nil {
				ok.Add(1)
				return
			}
			if e, isBiz := errcode.As(err); isBiz && e.Code == errcode.CaptchaExpired {
				expired.Add(1)
				return
			}
			t.Errorf("unexpected error %v", err)
		}()
	}
	close(start)
	wg.Wait()
	if ok.Load() != 1 || expired.Load() != 19 {
		t.Fatalf("successes = %d, expired = %d; want 1 and 19", ok.Load(), expired.Load())
	}
}

func TestWrongThenRight(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{})
	ctx := context.Background()
	ch, err := svc.Issue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answer := answerOf(t, ch)
	wrong := "ZZZZ"
	if answer == wrong {
		wrong = "YYYY"
	}
	wantCode(t, svc.Verify(ctx, ch.ID, wrong), errcode.CaptchaWrong)
	wantCode(t, svc.Verify(ctx, ch.ID, answer), errcode.CaptchaExpired)
	wantCode(t, svc.Verify(ctx, ch.ID, ""), errcode.CaptchaExpired)
}

func TestEmptyAnswerIsWrongAndConsumes(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{})
	ctx := context.Background()
	ch, _ := svc.Issue(ctx)
	wantCode(t, svc.Verify(ctx, ch.ID, ""), errcode.CaptchaWrong)
	wantCode(t, svc.Verify(ctx, ch.ID, answerOf(t, ch)), errcode.CaptchaExpired)
}

func TestExpired(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{TTL: 30 * time.Second})
	ctx := context.Background()
	ch, err := svc.Issue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	store.Advance(31 * time.Second)
	wantCode(t, svc.Verify(ctx, ch.ID, answerOf(t, ch)), errcode.CaptchaExpired)

	// Default TTL is two minutes.
	svc = New(store, Options{})
	if svc.TTL() != 2*time.Minute {
		t.Fatalf("default ttl %v", svc.TTL())
	}
	ch, _ = svc.Issue(ctx)
	store.Advance(119 * time.Second)
	if err := svc.Verify(ctx, ch.ID, answerOf(t, ch)); err != nil {
		t.Fatalf("inside ttl: %v", err)
	}
}

func TestUnknownAndMalformedIDs(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{})
	ctx := context.Background()
	for _, id := range []string{"", "NOSUCHID", "a:b", "captcha:x", strings.Repeat("A", 65), "ä"} {
		wantCode(t, svc.Verify(ctx, id, "ABCD"), errcode.CaptchaExpired)
	}
}

func TestLengthOption(t *testing.T) {
	svc := New(newFakeStore(), Options{Length: 6})
	ch, err := svc.Issue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(glyphs(t, ch.SVG)); n != 6 {
		t.Fatalf("%d glyphs", n)
	}
	svc = New(newFakeStore(), Options{Length: 100})
	ch, _ = svc.Issue(context.Background())
	if n := len(glyphs(t, ch.SVG)); n != MaxLength {
		t.Fatalf("%d glyphs, want cap %d", n, MaxLength)
	}
}

func TestStoreFailureFailsClosed(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{})
	ctx := context.Background()
	ch, _ := svc.Issue(ctx)
	answer := answerOf(t, ch)
	store.Fail(errors.New("cache down"))
	err := svc.Verify(ctx, ch.ID, answer)
	if err == nil {
		t.Fatal("verify succeeded with a failing cache")
	}
	if _, biz := errcode.As(err); biz {
		t.Fatalf("cache failure reported as business error %v", err)
	}
	if _, err := svc.Issue(ctx); err == nil {
		t.Fatal("issue succeeded with a failing cache")
	}
}

func TestAnswerStoredHashed(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{})
	ch, _ := svc.Issue(context.Background())
	answer := answerOf(t, ch)
	val, ok := store.Raw(KeyPrefix + ch.ID)
	if !ok {
		t.Fatalf("no value under %q", KeyPrefix+ch.ID)
	}
	if strings.Contains(string(val), answer) {
		t.Fatal("answer stored in plain text")
	}
}

func TestRandomAnswerUniform(t *testing.T) {
	counts := map[rune]int{}
	for range 2000 {
		a, err := randomAnswer(4)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range a {
			counts[r]++
		}
	}
	if len(counts) != len(Alphabet) {
		t.Fatalf("%d distinct characters, want %d", len(counts), len(Alphabet))
	}
}

// TestStrokeFontCoversAlphabet: every character an answer can hold has an
// outline, each stroke at least two points inside the 10×14 grid.
func TestStrokeFontCoversAlphabet(t *testing.T) {
	for i := range len(Alphabet) {
		c := Alphabet[i]
		glyph, ok := strokeFont[c]
		if !ok {
			t.Errorf("no outline for %q", c)
			continue
		}
		for _, stroke := range strings.Split(glyph, "|") {
			pts := strings.Fields(stroke)
			if len(pts) < 2 {
				t.Errorf("%q: stroke %q has fewer than two points", c, stroke)
			}
			for _, pt := range pts {
				var x, y int
				if _, err := fmt.Sscanf(pt, "%d,%d", &x, &y); err != nil || x < 0 || x > 10 || y < 0 || y > 14 {
					t.Errorf("%q: point %q outside the 10×14 grid", c, pt)
				}
			}
		}
	}
	if len(strokeFont) != len(Alphabet) {
		t.Errorf("%d outlines for an alphabet of %d", len(strokeFont), len(Alphabet))
	}
}

// TestPathChallengeHasNoText: a path challenge is one <path> per glyph
// over the noise, no <text>, and two drawings of one answer differ.
func TestPathChallengeHasNoText(t *testing.T) {
	a, err := renderPaths("AB23")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := renderPaths("AB23")
	if strings.Contains(a, "<text") || strings.Count(a, "<path") != 4+noiseCurve {
		t.Fatalf("want %d paths and no text: %s", 4+noiseCurve, a)
	}
	if a == b {
		t.Fatal("two drawings of one answer are identical")
	}
}

// TestRandomSumAnswers: the answer is the question's result, never negative.
func TestRandomSumAnswers(t *testing.T) {
	ops := map[string]int{}
	for range 300 {
		shown, answer, err := randomSum()
		if err != nil {
			t.Fatal(err)
		}
		var a, b int
		var op string
		q := strings.TrimSuffix(shown, "=?")
		for _, o := range []string{"+", "-", "×"} {
			if l, r, ok := strings.Cut(q, o); ok {
				op = o
				a, _ = strconv.Atoi(l)
				b, _ = strconv.Atoi(r)
			}
		}
		want := map[string]int{"+": a + b, "-": a - b, "×": a * b}[op]
		if op == "" || answer != strconv.Itoa(want) || want < 0 {
			t.Fatalf("%q answered %q (want %d)", shown, answer, want)
		}
		ops[op]++
	}
	if len(ops) != 3 {
		t.Fatalf("operators drawn: %v, want all three", ops)
	}
}
