// Package captcha issues and verifies image captchas for the anonymous login
// and SMS-send endpoints (wire contract §2.3, GET /api/v1/auth/captcha).
//
// A challenge is a few characters from an unambiguous alphabet (no 0/O,
// 1/l/I) rendered as inline SVG markup: one <text> element per glyph with its
// own rotation, offset, size and colour, drawn in random document order over
// and under a few noise curves and dots. The answer is kept in the cache as a
// one-time value (PutOnce) under "captcha:<id>" for the TTL and stored as a
// SHA-256 digest of its upper-case form; Verify consumes it with Take, so
// every challenge allows exactly one guess, right or wrong.
//
// The endpoint is anonymous, so the answers waiting to be checked are
// capped (Options.MaxPending, Service:Security:Captcha:MaxPending) with an
// oncecap.Cap: Issue reserves a slot before it stores an answer and answers
// 429 / 40008 beyond the cap; the slot is stored with the answer and
// released when Verify takes it (a right or a wrong guess); an answer that
// expires unchecked frees its slot when its counting bucket expires.
//
// Three types (sys.security.captcha.type): char draws the characters as SVG
// text; path draws them as stroked outlines from a small built-in stroke font
// (each point jittered), so the markup does not contain them; math draws a
// small sum, difference or product whose result is the answer.
//
// Limits: char glyphs are SVG text, so a program that parses the markup can
// read them; path and math need a reader of the image. This captcha slows down casual scripts; the rate limiter and the
// login lockout are the real defences against automated guessing.
package captcha

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/oncecap"
	"github.com/adminkernel/kernel/host/errcode"
)

// Defaults of Options.
const (
	DefaultLength = 4
	DefaultTTL    = 2 * time.Minute
	// DefaultMaxPending is Options.MaxPending when it is 0.
	DefaultMaxPending = 100000
	// MaxLength caps Options.Length.
	MaxLength = 8
)

// Challenge types (sys.security.captcha.type, the original's values).
const (
	// TypeChar: characters drawn as SVG text (the default).
	TypeChar = "char"
	// TypePath: the same characters drawn as stroked outlines (SVG paths):
	// the answer's characters are not in the markup.
	TypePath = "path"
	// TypeMath: a small sum, difference or product drawn as SVG text; the
	// answer is its result, which is not in the markup.
	TypeMath = "math"
)

// Types lists the challenge types Issue draws.
var Types = []string{TypeChar, TypePath, TypeMath}

// KeyPrefix namespaces captcha answers in the cache.
const KeyPrefix = "captcha:"

// CountPrefix names the counters of the pending answers (cache counter
// space, one per time bucket; see oncecap.Cap).
const CountPrefix = "captchacount:"

// Alphabet is the set answers are drawn from: upper-case letters and digits
// without the easily confused 0, O, 1, I and L (answers are compared
// case-insensitively, so l does not occur either).
const Alphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// maxIDLen bounds the ids Verify looks up (issued ids are 26 characters).
const maxIDLen = 64

// Options configures a Service. Zero values take the defaults.
type Options struct {
	// Length is the number of characters (default 4, at most MaxLength).
	Length int
	// TTL is how long a challenge can be answered (default 2 minutes).
	TTL time.Duration
	// MaxPending caps the answers waiting to be checked (default
	// DefaultMaxPending; Service:Security:Captcha:MaxPending). Beyond it
	// Issue answers 429 / 40008 with retryAfterSeconds.
	MaxPending int
	// Log receives the throttled "cap reached" warning (nil: discarded).
	Log hclog.Logger
}

// Challenge is an issued captcha, shaped as the captcha endpoint's data.
type Challenge struct {
	ID   string `json:"captchaId"`
	SVG  string `json:"svg"`
	Type string `json:"type"`
}

// Service issues and verifies captchas.
type Service struct {
	store   cache.Store
	opts    Options
	pending *oncecap.Cap
}

// New returns a Service storing answers in store.
func New(store cache.Store, opts Options) *Service {
	if opts.Length <= 0 {
		opts.Length = DefaultLength
	}
	if opts.Length > MaxLength {
		opts.Length = MaxLength
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	pending := oncecap.New(store, oncecap.Kind{
		Prefix:  CountPrefix,
		Values:  "pending captcha answers",
		Request: "captcha",
		Setting: "Service:Security:Captcha:MaxPending",
	}, opts.MaxPending, opts.TTL, opts.Log)
	return &Service{store: store, opts: opts, pending: pending}
}

// TTL is how long an issued challenge stays answerable.
func (s *Service) TTL() time.Duration { return s.opts.TTL }

// Issue creates a challenge and stores its answer for the TTL. With
// MaxPending answers pending it answers 429 / 40008 (errcode.TooManyRequests
// with retryAfterSeconds) and stores nothing; a cache failure is returned
// as a plain error (fail closed).
func (s *Service) Issue(ctx context.Context) (Challenge, error) {
	return s.IssueType(ctx, TypeChar)
}

// IssueType is Issue with a challenge type (TypeChar, TypePath or
// TypeMath); any other value draws TypeChar.
func (s *Service) IssueType(ctx context.Context, typ string) (Challenge, error) {
	// Reserve the answer's slot first: at the cap the request ends here,
	// before any drawing.
	slot, err := s.pending.Acquire(ctx)
	if err != nil {
		return Challenge{}, fmt.Errorf("captcha: %w", err)
	}
	ch, err := s.issue(ctx, slot, typ)
	if err != nil {
		s.pending.Release(ctx, slot)
	}
	return ch, err
}

func (s *Service) issue(ctx context.Context, slot oncecap.Slot, typ string) (Challenge, error) {
	var answer, shown string
	var err error
	switch typ {
	case TypeMath:
		shown, answer, err = randomSum()
	case TypePath:
		answer, err = randomAnswer(s.opts.Length)
	default:
		typ = TypeChar
		answer, err = randomAnswer(s.opts.Length)
		shown = answer
	}
	if err != nil {
		return Challenge{}, fmt.Errorf("captcha: answer: %w", err)
	}
	var svg string
	if typ == TypePath {
		svg, err = renderPaths(answer)
	} else {
		svg, err = render(shown)
	}
	if err != nil {
		return Challenge{}, fmt.Errorf("captcha: render: %w", err)
	}
	// crypto/rand.Text: 26 characters of A-Z2-7, 130 random bits.
	id := rand.Text()
	if err := s.store.PutOnce(ctx, KeyPrefix+id, record(digestOf(answer), slot), s.opts.TTL); err != nil {
		return Challenge{}, fmt.Errorf("captcha: store answer: %w", err)
	}
	return Challenge{ID: id, SVG: svg, Type: typ}, nil
}

// Verify consumes the challenge id and checks answer against it
// (case-insensitively, surrounding blanks ignored). An unknown, expired or
// already used id gives errcode.CaptchaExpired; a wrong answer gives
// errcode.CaptchaWrong and uses the challenge up all the same. A cache
// failure is returned as a plain error (fail closed).
func (s *Service) Verify(ctx context.Context, id, answer string) error {
	want, slot, err := s.take(ctx, id)
	if err != nil {
		return err
	}
	// The answer is gone, right or wrong: its slot is free.
	s.pending.Release(ctx, slot)
	got := digestOf(answer)
	if subtle.ConstantTimeCompare(got[:], want) != 1 {
		return errcode.New(errcode.CaptchaWrong)
	}
	return nil
}

// take consumes the pending challenge id and returns its answer's digest
// and pending-cap slot: errcode.CaptchaExpired for a malformed, unknown,
// expired or used id, a plain error when the cache fails (fail closed).
func (s *Service) take(ctx context.Context, id string) (digest []byte, slot oncecap.Slot, err error) {
	if !validID(id) {
		return nil, 0, errcode.New(errcode.CaptchaExpired)
	}
	stored, ok, err := s.store.Take(ctx, KeyPrefix+id)
	if err != nil {
		return nil, 0, fmt.Errorf("captcha: take answer: %w", err)
	}
	if !ok {
		return nil, 0, errcode.New(errcode.CaptchaExpired)
	}
	digest, slot = parseRecord(stored)
	return digest, slot, nil
}

// IsCaptchaError reports whether err is one of the two captcha business
// errors (expired/unknown or wrong).
func IsCaptchaError(err error) bool {
	e, ok := errcode.As(err)
	return ok && (e.Code == errcode.CaptchaExpired || e.Code == errcode.CaptchaWrong)
}

// record is the stored form of an answer: its digest, then the slot of the
// pending cap in decimal.
func record(digest [sha256.Size]byte, slot oncecap.Slot) []byte {
	return strconv.AppendInt(digest[:], int64(slot), 10)
}

// parseRecord splits a stored answer into digest and slot. A bare digest
// (stored before the cap existed) has no slot to free.
func parseRecord(stored []byte) (digest []byte, slot oncecap.Slot) {
	if len(stored) <= sha256.Size {
		return stored, 0
	}
	n, err := strconv.ParseInt(string(stored[sha256.Size:]), 10, 64)
	if err != nil {
		return stored[:sha256.Size], 0
	}
	return stored[:sha256.Size], oncecap.Slot(n)
}

func digestOf(answer string) [sha256.Size]byte {
	return sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(answer))))
}

func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

var errShortRead = errors.New("short random read")

// randomAnswer draws n characters of Alphabet uniformly with crypto/rand
// (rejection sampling, no modulo bias).
func randomAnswer(n int) (string, error) {
	const limit = 256 - 256%len(Alphabet)
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n+8)
	for len(out) < n {
		m, err := rand.Read(buf)
		if err != nil {
			return "", err
		}
		if m != len(buf) {
			return "", errShortRead
		}
		for _, b := range buf {
			if int(b) >= limit {
				continue
			}
			out = append(out, Alphabet[int(b)%len(Alphabet)])
			if len(out) == n {
				break
			}
		}
	}
	return string(out), nil
}

// Rendering. Visual randomness (positions, colours, noise) comes from a
// per-challenge ChaCha8 stream seeded from crypto/rand; only the answer
// itself is security-relevant and is drawn with crypto/rand directly.

const (
	glyphStep  = 28.0
	padX       = 14.0
	height     = 44.0
	noiseCurve = 4
	noiseDots  = 24
)

// painter draws one challenge's SVG markup.
type painter struct {
	b   strings.Builder
	rnd *mrand.Rand
}

func render(text string) (string, error) {
	p, err := newPainter()
	if err != nil {
		return "", err
	}
	return p.draw(text), nil
}

// newPainter returns a painter with its own ChaCha8 stream seeded from
// crypto/rand.
func newPainter() (*painter, error) {
	var seed [32]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, err
	}
	// ChaCha8 is a cryptographically strong generator; the values only
	// decorate the image.
	return &painter{rnd: mrand.New(mrand.NewChaCha8(seed))}, nil //nolint:gosec // G404: ChaCha8 seeded from crypto/rand, used for visual noise only
}

func (p *painter) draw(text string) string {
	r, b := p.rnd, &p.b
	glyphs := []rune(text)
	n := len(glyphs)
	width := p.background(n, 260)
	// Glyphs in random document order; the x position keeps the reading order.
	for _, i := range r.Perm(n) {
		x := padX + glyphStep*float64(i) + glyphStep/2 + p.jitter(4)
		y := height/2 + 9 + p.jitter(5)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" transform="rotate(%.0f %.1f %.1f)" fill="%s" font-size="%d" font-family="Verdana,Arial,sans-serif" font-weight="bold" text-anchor="middle">%s</text>`,
			x, y, p.jitter(28), x, y, p.rgb(20, 140), 24+r.IntN(7), xmlEscape(string(glyphs[i])))
	}
	p.curve(width) // one curve crosses the glyphs
	b.WriteString(`</svg>`)
	return b.String()
}

// background opens the SVG for n glyphs (growing the buffer by perGlyph
// bytes each) and draws the fill and the noise under the glyphs; it returns
// the image width.
func (p *painter) background(n, perGlyph int) float64 {
	r, b := p.rnd, &p.b
	width := padX*2 + glyphStep*float64(n)
	b.Grow(1600 + perGlyph*n)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`, width, height, width, height)
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="%s"/>`, p.rgb(232, 250))
	for range noiseCurve - 1 {
		p.curve(width)
	}
	for range noiseDots {
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"/>`,
			r.Float64()*width, r.Float64()*height, 0.6+r.Float64()*1.2, p.rgb(120, 210))
	}
	return width
}

func (p *painter) curve(width float64) {
	r := p.rnd
	fmt.Fprintf(&p.b, `<path d="M%.1f %.1f C%.1f %.1f,%.1f %.1f,%.1f %.1f" stroke="%s" stroke-width="%.1f" fill="none"/>`,
		r.Float64()*width*0.2, r.Float64()*height,
		r.Float64()*width, r.Float64()*height,
		r.Float64()*width, r.Float64()*height,
		width*0.8+r.Float64()*width*0.2, r.Float64()*height,
		p.rgb(60, 180), 1+r.Float64()*1.5)
}

// jitter returns a value in [-d, d].
func (p *painter) jitter(d float64) float64 { return (p.rnd.Float64()*2 - 1) * d }

// rgb returns a colour whose channels lie in [lo, hi).
func (p *painter) rgb(lo, hi int) string {
	c := func() int { return lo + p.rnd.IntN(hi-lo) }
	return fmt.Sprintf("rgb(%d,%d,%d)", c(), c(), c())
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
