package captcha

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
)

func issueOrFail(t *testing.T, svc *Service, what string) Challenge {
	t.Helper()
	ch, err := svc.Issue(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return ch
}

// refusedIssue checks that Issue answers 429 / 40008 with a Retry-After
// within the life of a counting bucket, and stores nothing.
func refusedIssue(t *testing.T, svc *Service, store interface{ Keys() []string }, what string) {
	t.Helper()
	before := len(store.Keys())
	_, err := svc.Issue(context.Background())
	wantCode(t, err, errcode.TooManyRequests)
	e, _ := errcode.As(err)
	secs, _ := e.Args["retryAfterSeconds"].(int64)
	if secs < 1 || secs > int64((DefaultTTL+time.Minute)/time.Second) {
		t.Errorf("%s: retryAfterSeconds = %v, want 1..%d", what, e.Args["retryAfterSeconds"], int64((DefaultTTL+time.Minute)/time.Second))
	}
	if after := len(store.Keys()); after != before {
		t.Errorf("%s: a refused issue changed the stored keys from %d to %d", what, before, after)
	}
}

// TestPendingCap: with MaxPending 2 the third pending answer is refused;
// taking an answer — a right guess, a wrong one, an empty one — frees its
// slot; an unknown or reused id frees nothing.
func TestPendingCap(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{MaxPending: 2})
	ctx := context.Background()
	a := issueOrFail(t, svc, "first")
	b := issueOrFail(t, svc, "second")
	refusedIssue(t, svc, store, "third")

	wantCode(t, svc.Verify(ctx, a.ID, "wrong"), errcode.CaptchaWrong)
	c := issueOrFail(t, svc, "after a wrong answer")
	refusedIssue(t, svc, store, "cap reached again")

	// Replays and unknown ids free nothing.
	wantCode(t, svc.Verify(ctx, a.ID, "wrong"), errcode.CaptchaExpired)
	wantCode(t, svc.Verify(ctx, "UNKNOWNID", "x"), errcode.CaptchaExpired)
	refusedIssue(t, svc, store, "after a replay")

	if err := svc.Verify(ctx, b.ID, answerOf(t, b)); err != nil {
		t.Fatalf("right answer: %v", err)
	}
	issueOrFail(t, svc, "after a right answer")
	refusedIssue(t, svc, store, "cap reached after the right answer")

	wantCode(t, svc.Verify(ctx, c.ID, ""), errcode.CaptchaWrong)
	issueOrFail(t, svc, "after an empty answer")
}

// An answer that expires unchecked frees its slot when its counting
// bucket expires (at most a minute after the answer).
func TestExpiredAnswersFreeSlots(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{MaxPending: 1})
	issueOrFail(t, svc, "first")
	refusedIssue(t, svc, store, "second")
	store.Advance(DefaultTTL + 2*time.Minute)
	// The service's cap reads the wall clock for its bucket while the
	// fake's TTLs run on the fake clock: the counter has expired either way.
	issueOrFail(t, svc, "after the answer and its bucket expired")
}

// failingPuts fails PutOnce only.
type failingPuts struct{ cache.Store }

func (failingPuts) PutOnce(context.Context, string, []byte, time.Duration) error {
	return errors.New("put: cache full")
}

// A failed store of the answer gives its slot back.
func TestFailedStoreReleasesSlot(t *testing.T) {
	fake := newFakeStore()
	store := &failingPuts{Store: fake}
	svc := New(store, Options{MaxPending: 1})
	for i := range 3 {
		_, err := svc.Issue(context.Background())
		if err == nil {
			t.Fatal("issue succeeded although the answer could not be stored")
		}
		if _, biz := errcode.As(err); biz {
			t.Fatalf("issue %d: store failure reported as business error %v (a slot leaked?)", i+1, err)
		}
	}
}

// The stored record carries the slot after the digest, and a bare digest
// (written before the cap existed) still verifies.
func TestStoredRecord(t *testing.T) {
	store := newFakeStore()
	svc := New(store, Options{})
	ch := issueOrFail(t, svc, "issue")
	raw, ok := store.Raw(KeyPrefix + ch.ID)
	if !ok {
		t.Fatal("no stored answer")
	}
	digest, slot := parseRecord(raw)
	if want := digestOf(answerOf(t, ch)); string(digest) != string(want[:]) || slot == 0 {
		t.Fatalf("stored record %x parsed to digest %x slot %d", raw, digest, slot)
	}

	d := digestOf("ABCD")
	if err := store.PutOnce(context.Background(), KeyPrefix+"LEGACY", d[:], time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := svc.Verify(context.Background(), "LEGACY", "abcd"); err != nil {
		t.Fatalf("a bare digest did not verify: %v", err)
	}
	if got, slot := parseRecord(d[:]); len(got) != sha256.Size || slot != 0 {
		t.Fatalf("bare digest parsed to %x slot %d", got, slot)
	}
}
