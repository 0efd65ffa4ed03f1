package providertest

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/pluginsdk"
)

// Fake is a small, well-behaved provider for tests of hosts and of the
// wire; its vendor is simulated in process. It passes Run with
// FakeOptions.
//
// Settings: ClientId and ClientSecret are required. AuthorizeURL answers
// https://vendor.example.test/<code>/authorize?client_id=..&redirect_uri=..&state=..
// with the state as provider data. Exchange reads the callback:
//   - error=access_denied: Denied; any other error: ExchangeFailed;
//   - no code: InvalidCallback; provider data not matching the state:
//     InvalidCallback;
//   - code FakeCode(subject) ("ok-<subject>"): the identity <subject>;
//   - code "hang": sleeps Fake.HangFor ignoring the context (to test deadlines
//     enforced by the caller);
//   - code "panic": panics (to test that a server survives it);
//   - any other code: ExchangeFailed (the vendor refused it).
type Fake struct {
	code string

	mu       sync.RWMutex
	clientID string
	secret   string
	// OnExchange, when set, is called at the start of every Exchange with
	// the callback's code.
	OnExchange func(code string)
	// HangFor is how long the code "hang" keeps Exchange busy (zero: one
	// minute).
	HangFor time.Duration
}

var _ pluginsdk.Provider = (*Fake)(nil)

// NewFake returns an unconfigured Fake reporting code.
func NewFake(code string) *Fake { return &Fake{code: code} }

// FakeCode is the code with which Fake's vendor vouches for subject.
func FakeCode(subject string) string { return "ok-" + subject }

// FakeSettings is a working settings section for Fake.
func FakeSettings() pluginsdk.Settings {
	return pluginsdk.Settings{"ClientId": "fake-client", "ClientSecret": "fake-secret-value"}
}

// FakeOptions are the Run options for a Fake with code, with a Login that
// signs in subject "fake-user".
func FakeOptions(code string) Options {
	return Options{
		Code:     code,
		Settings: FakeSettings(),
		Required: []string{"ClientId", "ClientSecret"},
		BadCode:  "refused-code",
		Login:    FakeLogin("fake-user"),
	}
}

// FakeLogin returns a Login for Options that signs subject in at Fake's
// vendor: the callback carries FakeCode(subject) and the state of the
// authorization URL.
func FakeLogin(subject string) func(t *testing.T, authorizeURL string) map[string]string {
	return func(t *testing.T, authorizeURL string) map[string]string {
		t.Helper()
		u, err := url.Parse(authorizeURL)
		if err != nil {
			t.Fatalf("FakeLogin: %v", err)
		}
		return map[string]string{"code": FakeCode(subject), "state": u.Query().Get("state")}
	}
}

// Describe reports the code given to NewFake.
func (f *Fake) Describe(context.Context) (pluginsdk.Descriptor, error) {
	return pluginsdk.Descriptor{Code: f.code, DisplayName: "Fake " + f.code, Icon: "mdi:test-tube", Brand: "fake", ProtocolVersion: pluginsdk.ProtocolVersion}, nil
}

// Configure takes ClientId and ClientSecret (keys case-insensitive).
func (f *Fake) Configure(_ context.Context, s pluginsdk.Settings) error {
	var id, secret string
	for k, v := range s {
		switch strings.ToLower(k) {
		case "clientid":
			id = v
		case "clientsecret":
			secret = v
		}
	}
	switch {
	case strings.TrimSpace(id) == "":
		return errors.New("fake: ClientId is required")
	case strings.TrimSpace(secret) == "":
		return errors.New("fake: ClientSecret is required")
	}
	f.mu.Lock()
	f.clientID, f.secret = id, secret
	f.mu.Unlock()
	return nil
}

func (f *Fake) configured() (string, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.clientID, f.clientID != "" && f.secret != ""
}

// AuthorizeURL builds the fake vendor's URL.
func (f *Fake) AuthorizeURL(ctx context.Context, r pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	id, ok := f.configured()
	if !ok {
		return pluginsdk.AuthorizeResponse{}, errors.New("fake: not configured")
	}
	if r.State == "" || r.RedirectURI == "" {
		return pluginsdk.AuthorizeResponse{}, errors.New("fake: state and redirect URI are required")
	}
	q := url.Values{"client_id": {id}, "redirect_uri": {r.RedirectURI}, "state": {r.State}, "response_type": {"code"}}
	return pluginsdk.AuthorizeResponse{
		URL:          "https://vendor.example.test/" + f.code + "/authorize?" + q.Encode(),
		ProviderData: []byte(r.State),
	}, nil
}

// Exchange simulates the vendor's token call.
func (f *Fake) Exchange(ctx context.Context, r pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	q := r.Query
	if f.OnExchange != nil {
		f.OnExchange(q["code"])
	}
	if e := q["error"]; e != "" {
		if e == "access_denied" {
			return pluginsdk.Fail(pluginsdk.Denied, "the user declined"), nil
		}
		return pluginsdk.Fail(pluginsdk.ExchangeFailed, "the vendor answered an error"), nil
	}
	code := q["code"]
	if code == "" {
		return pluginsdk.Fail(pluginsdk.InvalidCallback, "the callback carries no code"), nil
	}
	if _, ok := f.configured(); !ok {
		return pluginsdk.Fail(pluginsdk.Misconfigured, "not configured"), nil
	}
	switch code {
	case "hang":
		hang := f.HangFor
		if hang <= 0 {
			hang = time.Minute
		}
		time.Sleep(hang)
	case "panic":
		panic("fake: asked to panic")
	}
	// The vendor call: honour the caller's context.
	if err := ctx.Err(); err != nil {
		return pluginsdk.ExchangeResponse{}, err
	}
	if string(r.ProviderData) != q["state"] {
		return pluginsdk.Fail(pluginsdk.InvalidCallback, "the provider data does not belong to this state"), nil
	}
	subject, ok := strings.CutPrefix(code, "ok-")
	if !ok || subject == "" {
		return pluginsdk.Fail(pluginsdk.ExchangeFailed, "the vendor refused the code"), nil
	}
	return pluginsdk.Succeed(pluginsdk.Identity{Subject: subject, AccountHint: subject, DisplayName: "Fake " + subject}), nil
}
