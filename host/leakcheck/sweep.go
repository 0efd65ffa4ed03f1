// Package leakcheck checks that secrets never reach what a kernel writes
// down. Sweep is the suite-wide check: a test package calls it (through
// SweepAtCleanup) for every kernel it starts, so every test of the package
// is covered, not only the dedicated scenario of leakcheck_test.go.
package leakcheck

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/ent"
)

// Target is what Sweep reads of a kernel (*kerneltest.Kernel satisfies it).
type Target interface {
	// Log is everything the kernel logged.
	Log() string
	// Ent is the kernel's database client.
	Ent() *ent.Client
}

// Shapes of bearer values that must never be written down, whatever test
// issued them: a JWT (the kernel's access tokens, an IdP's ID tokens) and a
// refresh token (64 random bytes, base64url: 86 characters; other random
// identifiers the kernel logs — trace ids, session ids — are 43).
var (
	jwtShape     = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}`)
	refreshShape = regexp.MustCompile(`(^|[^A-Za-z0-9_-])[A-Za-z0-9_-]{86}([^A-Za-z0-9_-]|$)`)
)

// Check says what Sweep looks for.
type Check struct {
	// Secrets are literal values (passwords, client and corp secrets,
	// tokens a test received); empty strings are ignored.
	Secrets []string
	// NoShapes turns off the search for anything shaped like a JWT or a
	// refresh token: for fuzzing, whose random inputs are op-logged and may
	// take any shape.
	NoShapes bool
}

// Sweep searches the kernel's log, every operation-log row (stored input
// and exception message) and every exception-log row (message and stack)
// for each literal secret and, unless c.NoShapes, for anything shaped like
// a JWT or a refresh token. It reports each finding with t.Errorf and
// returns how many places it searched.
func Sweep(t testing.TB, k Target, c Check) int {
	t.Helper()
	var lits []string
	for _, s := range c.Secrets {
		if s != "" {
			lits = append(lits, s)
		}
	}
	places := 0
	scan := func(where, text string) {
		t.Helper()
		places++
		for _, s := range lits {
			if i := strings.Index(text, s); i >= 0 {
				t.Errorf("leakcheck: %s contains a test secret: %s", where, around(text, i, len(s)))
			}
		}
		if c.NoShapes {
			return
		}
		for name, re := range map[string]*regexp.Regexp{"a JWT": jwtShape, "a refresh token": refreshShape} {
			if loc := re.FindStringIndex(text); loc != nil {
				t.Errorf("leakcheck: %s contains %s: %s", where, name, around(text, loc[0], loc[1]-loc[0]))
			}
		}
	}
	scan("the kernel log", k.Log())
	ctx := context.Background()
	ops, err := k.Ent().SysOpLog.Query().All(ctx)
	if err != nil {
		t.Errorf("leakcheck: reading the operation log: %v", err)
	}
	for _, r := range ops {
		scan(fmt.Sprintf("operation-log row %d (%s %s)", r.ID, r.HTTPMethod, r.Path), r.Path+"\n"+deref(r.ParamJSON)+deref(r.ExceptionMessage))
	}
	exs, err := k.Ent().SysExceptionLog.Query().All(ctx)
	if err != nil {
		t.Errorf("leakcheck: reading the exception log: %v", err)
	}
	for _, r := range exs {
		scan(fmt.Sprintf("exception-log row %d (%s %s)", r.ID, r.HTTPMethod, r.Path), r.Path+"\n"+deref(r.Message)+deref(r.StackTrace))
	}
	return places
}

// SweepAtCleanup runs Sweep when the test ends, before the kernel is
// closed (call it after starting the kernel: cleanups run last-in
// first-out).
func SweepAtCleanup(t testing.TB, k Target, c Check) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			return // the database may be in any state; the failure is reported already
		}
		Sweep(t, k, c)
	})
}

// around is a short excerpt of text around [i, i+n), with the secret itself
// elided so the report does not repeat it.
func around(text string, i, n int) string {
	from, to := max(i-80, 0), min(i+n+80, len(text))
	return "…" + text[from:i] + "<" + fmt.Sprint(n) + " chars>" + text[i+n:to] + "…"
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return "\n" + *p
}
