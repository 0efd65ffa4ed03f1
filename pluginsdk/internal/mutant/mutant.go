// Package mutant holds deliberately broken providers: each breaks one rule
// of the pluginsdk.Provider contract that the conformance kit must catch
// (pluginsdk/providertest's mutant tests assert that it does, with the
// right message). The test plugin serves them under their kind as code
// (adminkernel-provider-racy, ...).
package mutant

import (
	"context"
	"errors"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

// The kinds of mutant.
const (
	// Racy's Configure stores its settings in a field that AuthorizeURL
	// reads, without a lock: a data race when the kernel configures the
	// provider again while logins are under way.
	Racy = "racy"
	// ChangeableSubject reports the display name, which users can change,
	// as the subject instead of the vendor's stable id.
	ChangeableSubject = "changeable_subject"
	// IgnoresContext calls its vendor with a context of its own, so a
	// login the kernel gave up on still completes.
	IgnoresContext = "ignores_context"
)

// Kinds lists every mutant.
var Kinds = []string{Racy, ChangeableSubject, IgnoresContext}

// New wraps f in the mutant kind; an unknown kind returns f unchanged.
func New(kind string, f *providertest.Fake) pluginsdk.Provider {
	switch kind {
	case Racy:
		return &racy{Fake: f}
	case ChangeableSubject:
		return changeableSubject{f}
	case IgnoresContext:
		return ignoresContext{f}
	}
	return f
}

type racy struct {
	*providertest.Fake
	settings pluginsdk.Settings // guarded by nothing: the mutation
}

func (r *racy) Configure(ctx context.Context, s pluginsdk.Settings) error {
	r.settings = s
	return r.Fake.Configure(ctx, s)
}

func (r *racy) AuthorizeURL(ctx context.Context, req pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	if r.settings == nil {
		return pluginsdk.AuthorizeResponse{}, errors.New("racy: not configured")
	}
	return r.Fake.AuthorizeURL(ctx, req)
}

type changeableSubject struct{ *providertest.Fake }

func (c changeableSubject) Exchange(ctx context.Context, req pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	resp, err := c.Fake.Exchange(ctx, req)
	if resp.Identity != nil {
		id := *resp.Identity
		id.Subject = id.DisplayName
		resp.Identity = &id
	}
	return resp, err
}

type ignoresContext struct{ *providertest.Fake }

func (i ignoresContext) Exchange(_ context.Context, req pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	return i.Fake.Exchange(context.Background(), req)
}
