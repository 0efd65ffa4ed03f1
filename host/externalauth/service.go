package externalauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/internal/bindproof"
	"github.com/adminkernel/kernel/host/internal/textclip"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/pluginsdk"
)

// CallbackPath is appended to the public base URL (CallbackBaseUrl, or the
// request's scheme://host in development) followed by /{provider}/callback.
const CallbackPath = "/api/v1/auth/external"

// Lifetimes of the one-time values.
const (
	StateTTL   = 5 * time.Minute
	TicketTTL  = 120 * time.Second
	PendingTTL = 15 * time.Minute
	// providerTimeout bounds each call into a provider.
	providerTimeout = 10 * time.Second
)

// Modes of an authorize state.
const (
	ModeLogin = pluginsdk.PurposeLogin
	ModeBind  = pluginsdk.PurposeBind
)

// Cache keys of the one-time values (distinct prefixes, see cache.Store).
const (
	stateKeyPrefix      = "extauth:state:"
	ticketKeyPrefix     = "extauth:ticket:"
	pendingKeyPrefix    = "extauth:pending:"
	bindStartKeyPrefix  = "extauth:bindstart:"
	bindTicketKeyPrefix = "extauth:bindticket:"
)

// Column bounds of sys_user and sys_user_external.
const (
	maxSubjectLen     = 256
	maxDisplayNameLen = 128
	maxAccountLen     = 64
	maxNameLen        = 64
	maxEmailLen       = 128
	maxPhoneLen       = 32
	placeholderPwLen  = 32
)

// Providers is what the flow needs of the provider registry (*idp.Registry).
type Providers interface {
	Get(code string) (idp.Entry, bool)
	List() []idp.Entry
}

// TokenIssuer is the one token-issuing step every login method ends in
// (*auth.Service). CompleteLogin is the second-factor gate in front of it:
// tokens, or a second factor's signal (40018 with args.challengeId, which
// the callback turns into ?totpChallenge=<id>&error=40018; 40020).
type TokenIssuer interface {
	CompleteLogin(ctx context.Context, u *ent.SysUser, method string, cl auth.Client) (*auth.LoginOutput, error)
	WriteLoginLog(ctx context.Context, account, method string, userID *int64, result error, cl auth.Client)
	TouchLogin(ctx context.Context, u *ent.SysUser, cl auth.Client)
}

// PasswordHasher hashes the random placeholder password of provisioned
// accounts (*password.PBKDF2).
type PasswordHasher interface {
	HashContext(ctx context.Context, plain string) (string, error)
}

// Options are the collaborators of the Service.
type Options struct {
	Providers Providers
	Switches  *Switches
	Store     cache.Store
	Client    *ent.Client
	Tokens    TokenIssuer
	Hasher    PasswordHasher
	// CallbackBaseURL is Service:ExternalAuth:CallbackBaseUrl (validated,
	// without trailing slash).
	CallbackBaseURL string
	// AllowRequestBase lets a missing CallbackBaseURL fall back to the
	// request's scheme://host (never in Production), when its Host names
	// the address the kernel listens on (see hostAllowed).
	AllowRequestBase bool
	// ListenAddress is the host:port of Service:Http:ListenAddress, which
	// a request's Host must match for AllowRequestBase.
	ListenAddress string
	// FrontendResultPath is where callbacks end (default /oauth/callback).
	FrontendResultPath string
	// AllowUnboundTickets accepts a login ticket at the exchange without the
	// browser binder of the ticket cookie (Service:ExternalAuth:
	// BindTicketToBrowser=false, for frontends on another site whose XHR
	// cannot carry a SameSite=Lax cookie). Off (the zero value): the
	// exchange requires the binder.
	AllowUnboundTickets bool
	// MaxPendingStates caps the authorize states waiting for their
	// callback (Service:ExternalAuth:MaxPendingStates; 0 takes
	// DefaultMaxPendingStates). Beyond it Authorize answers 429 / 40008.
	MaxPendingStates int
	Log              hclog.Logger
}

// Service is the external-login flow: authorize, callback, ticket
// exchange, pending links, binding and unbinding.
type Service struct {
	o     Options
	slots *stateSlots
	// dropped remembers the invalid icons and brands already logged
	// (provider, field and value), so a public list warns once, not on
	// every request.
	dropped sync.Map
}

// NewService returns the flow.
func NewService(o Options) *Service {
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	if o.FrontendResultPath == "" {
		o.FrontendResultPath = "/oauth/callback"
	}
	o.CallbackBaseURL = strings.TrimRight(o.CallbackBaseURL, "/")
	return &Service{o: o, slots: newStateSlots(o.Store, o.MaxPendingStates, o.Log)}
}

// stateRecord is stored under the authorize state.
type stateRecord struct {
	Provider    string `json:"p"`
	Mode        string `json:"m"`
	UserID      int64  `json:"u,omitempty"`
	Nonce       string `json:"n"`
	Verifier    string `json:"v"`
	RedirectURI string `json:"r"`
	// BinderHash is the SHA-256 of the browser binder (unchallenged
	// states); Challenge the app's binding challenge (challenged states,
	// which have no binder).
	BinderHash   string `json:"b,omitempty"`
	Challenge    string `json:"c,omitempty"`
	ProviderData []byte `json:"d,omitempty"`
	// Slot is the counting bucket of the state (see stateSlots), freed
	// when the state is taken.
	Slot int64 `json:"t,omitempty"`
}

// pendingRecord is stored under a pending-link ticket.
type pendingRecord struct {
	Provider    string `json:"p"`
	Subject     string `json:"s"`
	Issuer      string `json:"i,omitempty"`
	DisplayName string `json:"dn,omitempty"`
	Email       string `json:"e,omitempty"`
	Phone       string `json:"ph,omitempty"`
	BinderHash  string `json:"b,omitempty"`
	Challenge   string `json:"c,omitempty"`
}

// provider returns a registered provider that is switched on; unknown and
// disabled providers, and plugins recorded without a provider
// (unconfigured, missing, not launched), are 40013. The callback and a
// pending-link claim use it: a login already under way completes while its
// provider is degraded (a plugin restart).
func (s *Service) provider(ctx context.Context, code string) (idp.Entry, error) {
	e, ok := s.o.Providers.Get(code)
	if !ok || e.Provider == nil {
		return idp.Entry{}, errcode.New(errcode.OAuthProviderDisabled)
	}
	on, err := s.o.Switches.Enabled(ctx, code)
	if err != nil {
		return idp.Entry{}, err
	}
	if !on {
		return idp.Entry{}, errcode.New(errcode.OAuthProviderDisabled)
	}
	return e, nil
}

// offered returns a provider a new login or binding may start with: switched
// on and ready. Any other (unknown, disabled, unconfigured, misconfigured,
// missing, not launched, degraded) is 40013.
func (s *Service) offered(ctx context.Context, code string) (idp.Entry, error) {
	e, err := s.provider(ctx, code)
	if err != nil {
		return idp.Entry{}, err
	}
	if !e.Ready() {
		return idp.Entry{}, errcode.New(errcode.OAuthProviderDisabled)
	}
	return e, nil
}

// ProviderItem is one entry of GET providers. Icon is an Iconify name
// "prefix:name" and Brand a brand key (pluginsdk.ValidIcon, ValidBrand),
// null when the provider declares none or an invalid one. Brand goes
// beyond the wire contract (docs/reference/compatibility.md).
type ProviderItem struct {
	Code        string  `json:"code"`
	DisplayName string  `json:"displayName"`
	Icon        *string `json:"icon"`
	Brand       *string `json:"brand"`
}

// ProviderAdminItem is one entry of GET providers/all. Status and
// StatusReason go beyond the wire contract (docs/reference/compatibility.md): the
// provider's condition (ready, degraded, misconfigured, unconfigured,
// missing, not launched) and why it is not ready ("" when it is).
type ProviderAdminItem struct {
	ProviderItem
	Enabled       bool   `json:"enabled"`
	LinkByAccount bool   `json:"linkByAccount"`
	Status        string `json:"status"`
	StatusReason  string `json:"statusReason"`
}

// describe asks a provider for its name, icon and brand; an entry recorded
// without a provider is shown under its code. An invalid icon or brand is
// left out (logged once per value): the provider stays listed.
func (s *Service) describe(ctx context.Context, e idp.Entry) ProviderItem {
	item := ProviderItem{Code: e.Code, DisplayName: e.Code}
	if e.Provider == nil {
		return item
	}
	dctx, cancel := context.WithTimeout(ctx, providerTimeout)
	defer cancel()
	d, err := e.Provider.Describe(dctx)
	if err != nil {
		s.o.Log.Warn("describing an external login provider failed", "provider", e.Code, "error", err)
		return item
	}
	if d.DisplayName != "" {
		item.DisplayName = d.DisplayName
	}
	item.Icon = s.decoration(e.Code, "icon", d.Icon, pluginsdk.ValidIcon)
	item.Brand = s.decoration(e.Code, "brand", d.Brand, pluginsdk.ValidBrand)
	return item
}

// decoration returns v when valid, nil when empty or invalid; an invalid
// value is logged the first time it is seen.
func (s *Service) decoration(code, field, v string, valid func(string) bool) *string {
	if v == "" {
		return nil
	}
	if !valid(v) {
		if _, seen := s.dropped.LoadOrStore(code+"\x00"+field+"\x00"+v, struct{}{}); !seen {
			s.o.Log.Warn("an external login provider declares an invalid "+field+"; it is left out", "provider", code, field, textclip.ValidRunes(v, 80))
		}
		return nil
	}
	return &v
}

// ProviderList lists the providers a login may start with, in registration
// order: switched on and ready.
func (s *Service) ProviderList(ctx context.Context) ([]ProviderItem, error) {
	out := []ProviderItem{}
	for _, e := range s.o.Providers.List() {
		if !e.Ready() {
			continue
		}
		on, err := s.o.Switches.Enabled(ctx, e.Code)
		if err != nil {
			return nil, err
		}
		if on {
			out = append(out, s.describe(ctx, e))
		}
	}
	return out, nil
}

// AllProviders lists every registered or recorded provider with its
// switches and status.
func (s *Service) AllProviders(ctx context.Context) ([]ProviderAdminItem, error) {
	out := []ProviderAdminItem{}
	for _, e := range s.o.Providers.List() {
		sw, err := s.o.Switches.All(ctx, e.Code)
		if err != nil {
			return nil, err
		}
		out = append(out, ProviderAdminItem{
			ProviderItem: s.describe(ctx, e), Enabled: sw.Enabled, LinkByAccount: sw.LinkByAccount,
			Status: string(e.Status), StatusReason: e.Reason,
		})
	}
	return out, nil
}

// AuthorizeInput starts an authorization.
type AuthorizeInput struct {
	Provider string
	Mode     string
	// UserID is the signed-in user (bind mode).
	UserID int64
	// RequestBase is the request's scheme://host, used only when
	// CallbackBaseURL is unset outside Production ("" when unusable).
	RequestBase string
	UserAgent   string
	// Challenge is the app's binding challenge (see bindproof.ValidChallenge): the
	// state is then bound to it instead of a browser binder. "" binds the
	// state to the browser.
	Challenge string
	// Binder is the browser's current binder (the state cookie), reused
	// when well-formed so that several tabs share one binder.
	Binder string
}

// AuthorizeResult is where to send the browser, and the binder the
// browser must carry back in the state cookie ("" for a challenged state:
// no cookie).
type AuthorizeResult struct {
	URL    string
	Binder string
}

// RedirectURI returns the callback URL of a provider.
func (s *Service) RedirectURI(code, requestBase string) (string, error) {
	base, err := s.publicBase(requestBase)
	if err != nil {
		return "", err
	}
	return base + CallbackPath + "/" + code + "/callback", nil
}

// publicBase is CallbackBaseURL, or the request's scheme://host when that
// may be used (AllowRequestBase); a request base that cannot be used is
// 48002 naming host.
func (s *Service) publicBase(requestBase string) (string, error) {
	if s.o.CallbackBaseURL != "" {
		return s.o.CallbackBaseURL, nil
	}
	if !s.o.AllowRequestBase {
		return "", errors.New("externalauth: Service:ExternalAuth:CallbackBaseUrl is not configured")
	}
	if requestBase == "" {
		return "", errcode.New(errcode.RequestInvalid).With("field", "host")
	}
	return requestBase, nil
}

// Authorize issues a one-time state for a switched-on provider and returns
// the provider's authorization URL. The state, nonce, PKCE verifier,
// redirect URI and either the app's binding challenge or the SHA-256 of the
// browser binder are stored for StateTTL; the binder itself goes to the
// browser only. The browser's binder (in.Binder) is reused when it is
// well-formed, so that every tab of a browser shares it; otherwise a fresh
// one is minted. A malformed challenge is 40014.
func (s *Service) Authorize(ctx context.Context, in AuthorizeInput) (AuthorizeResult, error) {
	if in.Challenge != "" && !bindproof.ValidChallenge(in.Challenge) {
		return AuthorizeResult{}, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("malformed binding challenge"))
	}
	e, err := s.offered(ctx, in.Provider)
	if err != nil {
		return AuthorizeResult{}, err
	}
	redirect, err := s.RedirectURI(e.Code, in.RequestBase)
	if err != nil {
		return AuthorizeResult{}, err
	}
	state, err := newState()
	if err != nil {
		return AuthorizeResult{}, err
	}
	nonce, err1 := newToken()
	verifier, err2 := newToken()
	binder, err3 := s.binderFor(in.Challenge, in.Binder)
	if err := errors.Join(err1, err2, err3); err != nil {
		return AuthorizeResult{}, err
	}
	challenge := sha256.Sum256([]byte(verifier))
	// Reserve the state's slot before asking the provider: at the cap the
	// request ends here, without a provider call or a stored state.
	slot, err := s.slots.acquire(ctx)
	if err != nil {
		return AuthorizeResult{}, err
	}
	stored := false
	defer func() {
		if !stored {
			s.slots.release(ctx, slot)
		}
	}()
	actx, cancel := context.WithTimeout(ctx, providerTimeout)
	defer cancel()
	resp, err := e.Provider.AuthorizeURL(actx, pluginsdk.AuthorizeRequest{
		State:               state,
		RedirectURI:         redirect,
		UserAgent:           in.UserAgent,
		Nonce:               nonce,
		CodeChallenge:       base64.RawURLEncoding.EncodeToString(challenge[:]),
		CodeChallengeMethod: pluginsdk.CodeChallengeS256,
		Purpose:             in.Mode,
	})
	if err != nil {
		s.o.Log.Warn("building the authorization URL failed", "provider", e.Code, "error", err)
		return AuthorizeResult{}, errcode.New(errcode.OAuthExchangeFailed).Wrap(err)
	}
	if !isHTTPURL(resp.URL) {
		s.o.Log.Error("provider returned an unusable authorization URL", "provider", e.Code)
		return AuthorizeResult{}, errcode.New(errcode.OAuthExchangeFailed)
	}
	rec, err := json.Marshal(stateRecord{
		Provider: e.Code, Mode: in.Mode, UserID: in.UserID, Nonce: nonce, Verifier: verifier,
		RedirectURI: redirect, BinderHash: hashOf(binder), Challenge: in.Challenge, ProviderData: resp.ProviderData, Slot: slot,
	})
	if err != nil {
		return AuthorizeResult{}, err
	}
	if err := s.o.Store.PutOnce(ctx, stateKeyPrefix+state, rec, StateTTL); err != nil {
		return AuthorizeResult{}, fmt.Errorf("storing the authorize state: %w", err)
	}
	stored = true
	return AuthorizeResult{URL: resp.URL, Binder: binder}, nil
}

// CallbackInput is a callback request.
type CallbackInput struct {
	Provider string
	// Query is the callback query, first value of each parameter.
	Query map[string]string
	// Binder is the value of the state cookie.
	Binder string
	Client auth.Client
}

// PendingLink is an unbound identity waiting for the user to sign in and
// claim it.
type PendingLink struct {
	Token       string
	Binder      string
	Provider    string
	DisplayName string
}

// ticketRecord is stored under a login ticket: the token response and the
// SHA-256 of the browser binder the callback handed out with it, or the
// binding challenge of a challenged login (no binder).
type ticketRecord struct {
	Output     json.RawMessage `json:"o"`
	BinderHash string          `json:"b,omitempty"`
	Challenge  string          `json:"c,omitempty"`
}

// CallbackResult is exactly one of: a login ticket (with the binder the
// browser must present at the exchange, "" for a challenged ticket), a
// completed binding (the provider code), a bind ticket (challenged bind
// mode: BindTicket and the provider code in Bound), or a pending link.
// ClearBinder (also with an error) says the state cookie did not match its
// state and is junk to be cleared; a matching binder is left in place for
// the browser's other tabs.
type CallbackResult struct {
	Ticket       string
	TicketBinder string
	Bound        string
	BindTicket   string
	Pending      *PendingLink
	ClearBinder  bool
}

// Callback completes an authorization: it consumes the state atomically,
// checks the browser binder, exchanges the code and then binds (bind mode)
// or resolves the identity to a user and issues a one-time login ticket
// (login mode). Errors carry the code the browser is redirected with.
func (s *Service) Callback(ctx context.Context, in CallbackInput) (CallbackResult, error) {
	e, err := s.provider(ctx, in.Provider)
	if err != nil {
		return CallbackResult{}, err
	}
	q := in.Query
	state := q["state"]
	if q["error"] != "" || state == "" { // the code parameter is the provider's business (team_chat's is authCode)
		if validState(state) {
			// Burn the state: this login is over either way.
			_, _ = s.takeState(ctx, state)
		}
		return CallbackResult{}, errcode.New(errcode.OAuthExchangeFailed).Wrap(fmt.Errorf("callback without state, or with error %q", textclip.Bytes(q["error"], 64)))
	}
	st, err := s.takeState(ctx, state)
	if err != nil {
		return CallbackResult{}, err
	}
	if st.Provider != e.Code {
		return CallbackResult{}, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("state issued for another provider"))
	}
	// A challenged state is bound to the app's verifier, checked where the
	// result is redeemed; an unchallenged one to the browser binder.
	if st.Challenge == "" && !binderMatches(in.Binder, st.BinderHash) {
		return CallbackResult{ClearBinder: in.Binder != ""}, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("browser binder missing or wrong"))
	}
	id, err := s.exchange(ctx, e, st, q)
	if err != nil {
		return CallbackResult{}, err
	}
	switch st.Mode {
	case ModeBind:
		if st.Challenge != "" {
			return s.bindTicket(ctx, st, e.Code, id)
		}
		if err := s.bind(ctx, st.UserID, e.Code, id); err != nil {
			return CallbackResult{}, err
		}
		return CallbackResult{Bound: e.Code}, nil
	case ModeLogin:
		return s.login(ctx, e.Code, id, in.Client, st.Challenge, in.Binder)
	default:
		return CallbackResult{}, errcode.New(errcode.OAuthStateInvalid)
	}
}

// takeState consumes a state; a cache error fails the callback (it never
// counts as valid).
func (s *Service) takeState(ctx context.Context, state string) (stateRecord, error) {
	var st stateRecord
	if !validState(state) {
		return st, errcode.New(errcode.OAuthStateInvalid)
	}
	raw, ok, err := s.o.Store.Take(ctx, stateKeyPrefix+state)
	if err != nil {
		return st, fmt.Errorf("consuming the authorize state: %w", err)
	}
	if !ok {
		return st, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("state unknown, expired or already used"))
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, errcode.New(errcode.OAuthStateInvalid).Wrap(err)
	}
	// The state is gone: its slot is free for the next authorize.
	s.slots.release(ctx, st.Slot)
	return st, nil
}

// exchange asks the provider for the identity, with the issuer the
// provider reports (IssuerReporter); every failure is 40015.
func (s *Service) exchange(ctx context.Context, e idp.Entry, st stateRecord, q map[string]string) (identity, error) {
	issuer := issuerOf(e.Provider)
	xctx, cancel := context.WithTimeout(ctx, providerTimeout)
	defer cancel()
	resp, err := e.Provider.Exchange(xctx, pluginsdk.ExchangeRequest{
		Query: q, RedirectURI: st.RedirectURI, ProviderData: st.ProviderData, Nonce: st.Nonce, CodeVerifier: st.Verifier,
	})
	fail := errcode.New(errcode.OAuthExchangeFailed)
	switch {
	case err != nil:
		s.o.Log.Warn("external login exchange failed", "provider", e.Code, "error", err)
		return identity{}, fail.Wrap(err)
	case resp.Error != nil:
		if resp.Error.Kind == pluginsdk.Misconfigured {
			s.o.Log.Error("external login provider is misconfigured", "provider", e.Code, "error", resp.Error)
		} else {
			s.o.Log.Info("external login refused", "provider", e.Code, "kind", resp.Error.Kind, "reason", resp.Error.Message)
		}
		return identity{}, fail.Wrap(resp.Error)
	case resp.Identity == nil:
		return identity{}, fail.Wrap(errors.New("provider returned neither identity nor error"))
	}
	id := identity{Identity: *resp.Identity, Issuer: issuer}
	if id.Subject == "" || utf8.RuneCountInString(id.Subject) > maxSubjectLen {
		s.o.Log.Warn("external login provider returned an unusable subject", "provider", e.Code)
		return identity{}, fail.Wrap(errors.New("unusable subject"))
	}
	// The provider was reconfigured while the code was redeemed: which
	// issuer vouched for the identity is unclear.
	if after := issuerOf(e.Provider); after != issuer {
		s.o.Log.Warn("external login refused: the provider's issuer changed during the exchange", "provider", e.Code, "issuer", issuer, "now", after)
		return identity{}, fail.Wrap(errors.New("issuer changed during the exchange"))
	}
	if !validIssuer(issuer) {
		s.o.Log.Error("external login provider reports an unusable issuer", "provider", e.Code)
		return identity{}, fail.Wrap(errors.New("unusable issuer"))
	}
	id.DisplayName = textclip.Runes(strings.TrimSpace(id.DisplayName), maxDisplayNameLen)
	return id, nil
}

// login resolves the identity and issues a ticket bound to the browser
// binder the state was bound to (or to the state's binding challenge), or
// a pending link when provisioning is denied. Reusing the browser's one
// binder (not a fresh one per ticket) keeps the ticket and pending cookies
// of several tabs from overwriting each other. Each resolution is logged
// with the rule that fired.
func (s *Service) login(ctx context.Context, code string, id identity, cl auth.Client, challenge, browser string) (CallbackResult, error) {
	u, rule, err := s.resolve(ctx, code, id)
	if be, ok := errcode.As(err); ok && be.Code == errcode.OAuthAccountNotBound {
		p, err := s.pending(ctx, code, id, challenge, browser)
		if err != nil {
			return CallbackResult{}, err
		}
		s.logResolution(code, rulePending, 0, id, nil)
		return CallbackResult{Pending: p}, nil
	}
	if u != nil {
		s.logResolution(code, rule, u.ID, id, err)
	}
	if err != nil {
		if u != nil {
			s.recordLogin(ctx, u, code, cl, err)
		}
		return CallbackResult{}, err
	}
	out, err := s.o.Tokens.CompleteLogin(ctx, u, code, cl)
	s.recordLogin(ctx, u, code, cl, err)
	if err != nil {
		return CallbackResult{}, err
	}
	// The token response is kept server-side under the one-time ticket;
	// Exchange hands it to the client that holds the ticket and its binder.
	outRaw, err := json.Marshal(out) //nolint:gosec // G117: marshalling the access token is the point: this is the token response
	if err != nil {
		return CallbackResult{}, err
	}
	ticket, err1 := newToken()
	binder, err2 := s.binderFor(challenge, browser)
	if err := errors.Join(err1, err2); err != nil {
		return CallbackResult{}, err
	}
	raw, err := json.Marshal(ticketRecord{Output: outRaw, BinderHash: hashOf(binder), Challenge: challenge})
	if err != nil {
		return CallbackResult{}, err
	}
	if err := s.o.Store.PutOnce(ctx, ticketKeyPrefix+ticket, raw, TicketTTL); err != nil {
		return CallbackResult{}, fmt.Errorf("storing the login ticket: %w", err)
	}
	return CallbackResult{Ticket: ticket, TicketBinder: binder}, nil
}

// pending stores a pending link bound to the browser binder, or to the
// state's binding challenge (no binder).
func (s *Service) pending(ctx context.Context, code string, id identity, challenge, browser string) (*PendingLink, error) {
	token, err1 := newToken()
	binder, err2 := s.binderFor(challenge, browser)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	rec, err := json.Marshal(pendingRecord{
		Provider: code, Subject: id.Subject, Issuer: id.Issuer, DisplayName: id.DisplayName, Email: id.Email, Phone: id.Phone,
		BinderHash: hashOf(binder), Challenge: challenge,
	})
	if err != nil {
		return nil, err
	}
	if err := s.o.Store.PutOnce(ctx, pendingKeyPrefix+token, rec, PendingTTL); err != nil {
		return nil, fmt.Errorf("storing the pending link: %w", err)
	}
	return &PendingLink{Token: token, Binder: binder, Provider: code, DisplayName: id.DisplayName}, nil
}

// Exchange consumes a login ticket and returns the stored token response
// (JSON). The ticket is consumed first (exactly once), then its proof is
// checked in constant time: a challenged ticket needs the verifier of its
// challenge (always), any other the browser binder (the ticket cookie)
// unless AllowUnboundTickets. An unknown, expired or used ticket, or a
// missing or wrong proof, is 40014, and the ticket is spent either way. A
// cache error is a system error (never a valid ticket).
func (s *Service) Exchange(ctx context.Context, ticket string, proof Proof) (json.RawMessage, error) {
	if !validToken(ticket) {
		return nil, errcode.New(errcode.OAuthStateInvalid)
	}
	raw, ok, err := s.o.Store.Take(ctx, ticketKeyPrefix+ticket)
	if err != nil {
		return nil, fmt.Errorf("consuming a login ticket: %w", err)
	}
	if !ok {
		return nil, errcode.New(errcode.OAuthStateInvalid)
	}
	var rec ticketRecord
	if err := json.Unmarshal(raw, &rec); err != nil || len(rec.Output) == 0 || (rec.BinderHash == "") == (rec.Challenge == "") {
		return nil, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("unreadable login ticket"))
	}
	if rec.Challenge != "" {
		if !bindproof.VerifierMatches(proof.Verifier, rec.Challenge) {
			s.o.Log.Info("login ticket refused: the binding verifier is missing or wrong; the ticket is spent")
			return nil, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("binding verifier missing or wrong"))
		}
		return rec.Output, nil
	}
	if !s.o.AllowUnboundTickets && !binderMatches(proof.Binder, rec.BinderHash) {
		s.o.Log.Info("login ticket refused: the ticket cookie is missing or belongs to another ticket; the ticket is spent")
		return nil, errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("ticket binder missing or wrong"))
	}
	return rec.Output, nil
}

// Claim binds a pending identity to the signed-in user. The pending-link
// ticket is consumed first (exactly once), then its proof is checked in
// constant time (the verifier of a challenged link, else the browser
// binder): 40014 for a blank, unknown, used ticket or a missing or wrong
// proof; 40013 when the provider was switched off
// meanwhile; 40017 when the identity belongs to another user or the user
// already has another identity of that provider; 40015 when the
// provider's issuer changed since the link was made, or the identity is
// bound to the user under another issuer. Claiming an identity already
// bound to the same user succeeds.
func (s *Service) Claim(ctx context.Context, userID int64, token string, proof Proof) error {
	if !validToken(token) {
		return errcode.New(errcode.OAuthStateInvalid)
	}
	raw, ok, err := s.o.Store.Take(ctx, pendingKeyPrefix+token)
	if err != nil {
		return fmt.Errorf("consuming a pending link: %w", err)
	}
	if !ok {
		return errcode.New(errcode.OAuthStateInvalid)
	}
	var p pendingRecord
	if err := json.Unmarshal(raw, &p); err != nil {
		return errcode.New(errcode.OAuthStateInvalid).Wrap(err)
	}
	if !proof.Matches(p.BinderHash, p.Challenge) {
		return errcode.New(errcode.OAuthStateInvalid).Wrap(errors.New("pending-link binder or binding verifier missing or wrong"))
	}
	e, err := s.provider(ctx, p.Provider)
	if err != nil {
		return err
	}
	// The provider was pointed at another issuer since the pending link was
	// made: the identity is not one of the current issuer's.
	if now := issuerOf(e.Provider); now != p.Issuer {
		s.o.Log.Warn("pending link refused: the provider's issuer changed since it was made", "provider", p.Provider, "issuer", p.Issuer, "now", now)
		return errcode.New(errcode.OAuthExchangeFailed).Wrap(errIssuerChanged)
	}
	return s.bind(ctx, userID, p.Provider, identity{
		Identity: pluginsdk.Identity{Subject: p.Subject, DisplayName: p.DisplayName}, Issuer: p.Issuer,
	})
}

// Binding is one entry of GET bindings (never the subject).
type Binding struct {
	Provider    string  `json:"provider"`
	DisplayName *string `json:"displayName"`
	BoundAt     string  `json:"boundAt"`
}

// Bindings lists the user's live bindings, oldest first.
func (s *Service) Bindings(ctx context.Context, userID int64) ([]Binding, error) {
	rows, err := s.userBindings(ctx, userID)
	if err != nil {
		return nil, err
	}
	out := make([]Binding, len(rows))
	for i, r := range rows {
		out[i] = Binding{Provider: r.Provider, DisplayName: r.DisplayName, BoundAt: r.CreateTime.Local().Format(request.EntityTimeLayout)}
	}
	return out, nil
}

// Unbind soft-deletes the user's binding for a provider (none is no
// error); the unique keys are freed so the identity can be bound again.
func (s *Service) Unbind(ctx context.Context, userID int64, code string) error {
	rows, err := s.liveBindings(code).Where(bindingUser(userID)).All(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := s.softDeleteBinding(ctx, r.ID); err != nil {
			return err
		}
	}
	return nil
}

// resultURL appends parameters to FrontendResultPath, with & when it
// already has a query.
func (s *Service) resultURL(params ...[2]string) string {
	var b strings.Builder
	base := s.o.FrontendResultPath
	b.WriteString(base)
	sep := "?"
	switch {
	case strings.HasSuffix(base, "?") || strings.HasSuffix(base, "&"):
		sep = ""
	case strings.Contains(base, "?"):
		sep = "&"
	}
	for i, p := range params {
		if i == 0 {
			b.WriteString(sep)
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(p[0]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(p[1]))
	}
	return b.String()
}

// newState returns 32 random bytes as 64 upper-case hex characters
// (letters and digits only: some vendors reject anything else).
func newState() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return strings.ToUpper(hex.EncodeToString(b)), nil
}

func validState(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// newToken returns 32 random bytes as 43 base64url characters (tickets,
// pending links, binders, nonces, PKCE verifiers).
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func validToken(s string) bool {
	if len(s) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

func hashBinder(binder string) string {
	sum := sha256.Sum256([]byte(binder))
	return hex.EncodeToString(sum[:])
}

// hashOf is hashBinder, "" for no binder (a challenged value).
func hashOf(binder string) string {
	if binder == "" {
		return ""
	}
	return hashBinder(binder)
}

// binderMatches compares the hash of a cookie value with the stored hash
// in constant time; a missing cookie never matches.
func binderMatches(cookie, storedHash string) bool {
	if cookie == "" || storedHash == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashBinder(cookie)), []byte(storedHash)) == 1
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
