package externalauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/bindproof"
	"github.com/adminkernel/kernel/pluginsdk"
)

// Browser binding: every one-time value of the flow (authorize state, login
// ticket, pending link, bind start token, bind ticket) is bound either to
// the browser, by a binder in an HttpOnly SameSite=Lax cookie whose SHA-256
// is stored with the value, or — when the app sent a binding challenge — to
// a verifier the app keeps in sessionStorage: challenge =
// base64url(SHA-256(verifier)) without padding, like PKCE S256 (RFC 7636
// §4.2). The challenge form needs no cookie, so it works for an app on
// another site, whose requests never carry SameSite=Lax cookies.

// Proof is what a client presents with a one-time value: the browser
// binder (a cookie) and the binding verifier (the body). Which one counts
// is decided by the value's record, never by the client (bindproof).
type Proof = bindproof.Proof

// binderFor returns the browser binder a new value is bound to: none when
// the app sent a challenge, the browser's current binder when it is
// well-formed (one binder per browser, shared by its tabs), else a fresh
// one.
func (s *Service) binderFor(challenge, current string) (string, error) {
	switch {
	case challenge != "":
		return "", nil
	case validToken(current):
		return current, nil
	default:
		return newToken()
	}
}

// bindStartRecord is stored under a bind start token: who starts the
// bind, for which provider, bound to the browser binder or to the app's
// challenge.
type bindStartRecord struct {
	UserID     int64  `json:"u"`
	Provider   string `json:"p"`
	BinderHash string `json:"b,omitempty"`
	Challenge  string `json:"c,omitempty"`
}

// bindTicketRecord is stored under a bind ticket (challenged bind mode):
// the identity the callback verified, waiting for the user who started
// the bind to complete it with the verifier.
type bindTicketRecord struct {
	UserID      int64  `json:"u"`
	Provider    string `json:"p"`
	Subject     string `json:"s"`
	Issuer      string `json:"i,omitempty"`
	DisplayName string `json:"dn,omitempty"`
	Challenge   string `json:"c"`
}

// BindStartInput starts a bind (POST {provider}/bind).
type BindStartInput struct {
	UserID   int64
	Provider string
	// RequestBase is the request's scheme://host (see RedirectURI).
	RequestBase string
	// Challenge is the app's binding challenge, "" to bind to the browser.
	Challenge string
	// Binder is the browser's current state cookie (reused when
	// well-formed).
	Binder string
}

// BindStart is the one-time kernel URL the app navigates to, and the
// binder for the state cookie ("" with a challenge).
type BindStart struct {
	URL    string
	Binder string
}

// StartBind starts binding an identity of a switched-on provider to the
// signed-in user: 40017 when the user already has one for it, 40013 when
// the provider is not offered, 40014 for a malformed challenge. It stores
// a one-time start token for StateTTL and returns the kernel URL
// {base}/api/v1/auth/external/{provider}/bind/start?start=<token>: the
// browser's top-level navigation to it creates the authorize state (see
// BeginBind), so any cookie is set on a top-level response.
func (s *Service) StartBind(ctx context.Context, in BindStartInput) (BindStart, error) {
	if in.Challenge != "" && !bindproof.ValidChallenge(in.Challenge) {
		return BindStart{}, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("malformed binding challenge"))
	}
	e, err := s.offered(ctx, in.Provider)
	if err != nil {
		return BindStart{}, err
	}
	n, err := s.liveBindings(e.Code).Where(bindingUser(in.UserID)).Count(ctx)
	if err != nil {
		return BindStart{}, err
	}
	if n > 0 {
		return BindStart{}, errcode.New(errcode.OAuthAlreadyBound)
	}
	base, err := s.publicBase(in.RequestBase)
	if err != nil {
		return BindStart{}, err
	}
	token, err1 := newToken()
	binder, err2 := s.binderFor(in.Challenge, in.Binder)
	if err := errors.Join(err1, err2); err != nil {
		return BindStart{}, err
	}
	rec, err := json.Marshal(bindStartRecord{UserID: in.UserID, Provider: e.Code, BinderHash: hashOf(binder), Challenge: in.Challenge})
	if err != nil {
		return BindStart{}, err
	}
	if err := s.o.Store.PutOnce(ctx, bindStartKeyPrefix+token, rec, StateTTL); err != nil {
		return BindStart{}, fmt.Errorf("storing the bind start token: %w", err)
	}
	u := base + CallbackPath + "/" + url.PathEscape(e.Code) + "/bind/start?start=" + token
	return BindStart{URL: u, Binder: binder}, nil
}

// BeginBindInput is a GET {provider}/bind/start request.
type BeginBindInput struct {
	Provider    string
	Start       string
	Binder      string
	RequestBase string
	UserAgent   string
}

// BeginBind consumes a bind start token (exactly once) and creates the
// bind-mode authorize state for the user it names. An unknown, expired or
// used token, one of another provider, or — for an unchallenged token — a
// missing or wrong browser binder is 40014 (the token is spent either way).
func (s *Service) BeginBind(ctx context.Context, in BeginBindInput) (AuthorizeResult, error) {
	if !validToken(in.Start) {
		return AuthorizeResult{}, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("malformed bind start token"))
	}
	raw, ok, err := s.o.Store.Take(ctx, bindStartKeyPrefix+in.Start)
	if err != nil {
		return AuthorizeResult{}, fmt.Errorf("consuming a bind start token: %w", err)
	}
	if !ok {
		return AuthorizeResult{}, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("bind start token unknown, expired or already used"))
	}
	var rec bindStartRecord
	if err := json.Unmarshal(raw, &rec); err != nil || rec.UserID == 0 {
		return AuthorizeResult{}, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("unreadable bind start token"))
	}
	if rec.Provider != in.Provider {
		return AuthorizeResult{}, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("bind start token issued for another provider"))
	}
	if rec.Challenge == "" && !binderMatches(in.Binder, rec.BinderHash) {
		return AuthorizeResult{}, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("bind start without the browser binder of the bind request"))
	}
	return s.Authorize(ctx, AuthorizeInput{
		Provider: rec.Provider, Mode: ModeBind, UserID: rec.UserID, RequestBase: in.RequestBase, UserAgent: in.UserAgent,
		Challenge: rec.Challenge, Binder: in.Binder,
	})
}

// bindTicket ends a challenged bind-mode callback: the identity is not
// bound yet but kept under a one-time bind ticket (TicketTTL) that only the
// user who started the bind can redeem, with the verifier (CompleteBind).
// A binding that cannot be made is refused here already (40017, 40015).
func (s *Service) bindTicket(ctx context.Context, st stateRecord, code string, id identity) (CallbackResult, error) {
	if _, err := s.bindingSettled(ctx, st.UserID, code, id); err != nil {
		return CallbackResult{}, err
	}
	token, err := newToken()
	if err != nil {
		return CallbackResult{}, err
	}
	rec, err := json.Marshal(bindTicketRecord{
		UserID: st.UserID, Provider: code, Subject: id.Subject, Issuer: id.Issuer, DisplayName: id.DisplayName, Challenge: st.Challenge,
	})
	if err != nil {
		return CallbackResult{}, err
	}
	if err := s.o.Store.PutOnce(ctx, bindTicketKeyPrefix+token, rec, TicketTTL); err != nil {
		return CallbackResult{}, fmt.Errorf("storing the bind ticket: %w", err)
	}
	return CallbackResult{BindTicket: token, Bound: code}, nil
}

// CompleteBind redeems a bind ticket: it is consumed first (exactly once),
// then the caller must be the user who started the bind and present the
// verifier of its challenge — else 40014, and the ticket is spent. Then,
// as a bind: 40013 when the provider was switched off meanwhile, 40015 when
// its issuer changed, 40017 on a conflict; binding an identity already
// bound to the same user succeeds.
func (s *Service) CompleteBind(ctx context.Context, userID int64, ticket, verifier string) error {
	if !validToken(ticket) {
		return errcode.New(errcode.OAuthStateInvalid)
	}
	raw, ok, err := s.o.Store.Take(ctx, bindTicketKeyPrefix+ticket)
	if err != nil {
		return fmt.Errorf("consuming a bind ticket: %w", err)
	}
	if !ok {
		return errcode.New(errcode.OAuthStateInvalid)
	}
	var rec bindTicketRecord
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Challenge == "" || rec.Subject == "" {
		return errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("unreadable bind ticket"))
	}
	if rec.UserID != userID || !bindproof.VerifierMatches(verifier, rec.Challenge) {
		s.o.Log.Info("bind ticket refused: another user, or the binding verifier is missing or wrong; the ticket is spent", "provider", rec.Provider, "user_id", userID)
		return errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("bind ticket of another user, or binding verifier missing or wrong"))
	}
	e, err := s.provider(ctx, rec.Provider)
	if err != nil {
		return err
	}
	if now := issuerOf(e.Provider); now != rec.Issuer {
		s.o.Log.Warn("bind ticket refused: the provider's issuer changed since the callback", "provider", rec.Provider, "issuer", rec.Issuer, "now", now)
		return errcode.New(errcode.OAuthExchangeFailed).Wrap(errIssuerChanged)
	}
	return s.bind(ctx, userID, rec.Provider, identity{
		Identity: pluginsdk.Identity{Subject: rec.Subject, DisplayName: rec.DisplayName}, Issuer: rec.Issuer,
	})
}
