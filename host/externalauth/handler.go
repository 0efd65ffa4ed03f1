package externalauth

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/bindproof"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// Cookie names (wire contract §3.2).
const (
	// StateCookie ties a callback to the browser that started the
	// authorization (its value is the binder whose SHA-256 is stored with
	// the state). One binder per browser: every authorize and bind reuses
	// a well-formed one, so the states of several tabs share it, and a
	// callback never clears a binder that matched.
	StateCookie = "tn_oauth_state"
	// PendingCookie ties a pending-link claim to the browser that was sent
	// to the login page.
	PendingCookie = "tn_oauth_pending"
	// TicketCookie ties a login ticket to the browser that ran the
	// callback: the exchange requires it (unless
	// Service:ExternalAuth:BindTicketToBrowser is off), so a ticket read
	// from a URL (Referer, history, logs, a shoulder) is worthless in
	// another browser.
	TicketCookie = "tn_oauth_ticket"
)

// Limits on what is read from a callback query.
const (
	maxQueryParams   = 32
	maxQueryValueLen = 4096
)

// Query and body names of the binding challenge (issue 18).
const (
	// ChallengeParam is the query parameter of GET {provider}/authorize
	// and the body field of POST {provider}/bind: base64url(SHA-256(verifier))
	// without padding, 43 characters.
	ChallengeParam = "bindingChallenge"
	// StartParam is the query parameter of GET {provider}/bind/start.
	StartParam = "start"
)

// ExchangeInput is the body of POST exchange. BindingVerifier is required
// for a ticket of a challenged login and ignored otherwise.
type ExchangeInput struct {
	Ticket          string `json:"ticket"`
	BindingVerifier string `json:"bindingVerifier,omitempty"`
}

// ClaimInput is the body of POST pending-link/claim. BindingVerifier is
// required for a pending link of a challenged login and ignored otherwise.
type ClaimInput struct {
	PendingLink     string `json:"pendingLink"`
	BindingVerifier string `json:"bindingVerifier,omitempty"`
}

// BindInput is the optional body of POST {provider}/bind. A challenge
// that is present but malformed (empty included) is 40014, as at
// authorize; absent or null binds the start URL to the browser.
type BindInput struct {
	BindingChallenge *string `json:"bindingChallenge,omitempty"`
}

// BindOutput is the answer of POST {provider}/bind: the one-time kernel
// start URL ({provider}/bind/start?start=…) the personal center navigates
// to (a top-level navigation).
type BindOutput struct {
	AuthorizeURL string `json:"authorizeUrl"`
}

// BindCompleteInput is the body of POST bind/complete.
type BindCompleteInput struct {
	BindTicket      string `json:"bindTicket"`
	BindingVerifier string `json:"bindingVerifier"`
}

// Handler is the HTTP side of the flow.
type Handler struct {
	svc     *Service
	trusted []*net.IPNet
	// cookiePath is <prefix>/api/v1/auth/external.
	cookiePath string
	// httpsBase: CallbackBaseUrl is https, so cookies are always Secure.
	httpsBase bool
	log       hclog.Logger
	// hostWarned: a refused Host was logged once already.
	hostWarned atomic.Bool
}

// NewHandler returns the handler; prefix is the path of CallbackBaseUrl
// ("" when unset), trusted the trusted proxies.
func NewHandler(svc *Service, prefix string, trusted []*net.IPNet) *Handler {
	return &Handler{
		svc:        svc,
		trusted:    trusted,
		cookiePath: strings.TrimRight(prefix, "/") + CallbackPath,
		httpsBase:  strings.HasPrefix(strings.ToLower(svc.o.CallbackBaseURL), "https://"),
		log:        svc.o.Log,
	}
}

// Routes registers the endpoints on the /api/v1 group.
func (h *Handler) Routes(api *route.Group) {
	g := api.Group("/auth/external")
	g.Get("/providers", route.Anonymous, h.providers).Doc("External login providers", nil, []ProviderItem{})
	g.Get("/providers/all", route.Permission, h.allProviders).Doc("All external login providers", nil, []ProviderAdminItem{})
	g.Get("/{provider}/authorize", route.Anonymous, h.authorize).Doc("Start external login (302 to the provider)", nil, nil)
	g.Get("/{provider}/callback", route.Anonymous, h.callback).Doc("External login callback (302 to the frontend result page)", nil, nil)
	g.Post("/exchange", route.Anonymous, h.exchange).Doc("Exchange a login ticket", ExchangeInput{}, auth.LoginOutput{})
	g.Post("/pending-link/claim", route.Session, h.claim).Doc("Claim a pending external identity", ClaimInput{}, true).Queries("pendingLink")
	g.Get("/bindings", route.Session, h.bindings).Doc("My external bindings", nil, []Binding{})
	// A fixed path: {provider}/bind never matches it (its second segment is
	// "complete", not "bind"), whatever the registration order.
	g.Post("/bind/complete", route.Session, h.completeBind).Doc("Complete a challenged bind", BindCompleteInput{}, true)
	g.Post("/{provider}/bind", route.Session, h.bind).Doc("Bind an external identity", BindInput{}, BindOutput{})
	g.Get("/{provider}/bind/start", route.Anonymous, h.bindStart).Doc("Start a bind (302 to the provider)", nil, nil).Queries(StartParam)
	g.Delete("/{provider}/binding", route.Session, h.unbind).Doc("Unbind an external identity", nil, true)
}

func (h *Handler) client(c fiber.Ctx) auth.Client {
	return auth.Client{IP: request.ClientIP(c, h.trusted), UserAgent: strings.Clone(c.Get(fiber.HeaderUserAgent))}
}

// secure: the request arrived over https (as Fiber sees it, honouring
// X-Forwarded-Proto only from trusted proxies) or CallbackBaseUrl is https.
func (h *Handler) secure(c fiber.Ctx) bool {
	return h.httpsBase || c.Scheme() == "https"
}

func (h *Handler) setCookie(c fiber.Ctx, name, value string, ttl time.Duration) {
	c.Cookie(&fiber.Cookie{
		Name: name, Value: value, Path: h.cookiePath, MaxAge: int(ttl / time.Second),
		HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: h.secure(c),
	})
}

func (h *Handler) clearCookie(c fiber.Ctx, name string) {
	c.Cookie(&fiber.Cookie{
		Name: name, Value: "", Path: h.cookiePath, MaxAge: -1,
		HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: h.secure(c),
	})
}

// requestBase is the request's scheme://host (forwarded headers only from
// trusted proxies), or "" when it cannot be used in a redirect URI. It is
// used only when CallbackBaseUrl is unset outside Production.
func requestBase(c fiber.Ctx) string {
	scheme := c.Scheme()
	host := c.Host()
	if (scheme != "http" && scheme != "https") || host == "" || strings.ContainsAny(host, "/\\?#@ \t\r\n%") {
		return ""
	}
	u, err := url.Parse(scheme + "://" + host)
	if err != nil || u.Host != host || u.Path != "" {
		return ""
	}
	return scheme + "://" + host
}

// requestBase is requestBase(c) when the request may choose the redirect
// URI: always when CallbackBaseUrl is set (the base is then unused), when a
// trusted proxy names the host (X-Forwarded-Host), or when the Host header
// names the address the kernel listens on (hostAllowed). Otherwise "" (the
// authorization answers 400 / 48002 naming host) and the first refusal is
// logged with the remedy.
func (h *Handler) requestBase(c fiber.Ctx) string {
	base := requestBase(c)
	if base == "" || h.svc.o.CallbackBaseURL != "" {
		return base
	}
	if c.IsProxyTrusted() && c.Get(fiber.HeaderXForwardedHost) != "" {
		return base
	}
	if hostAllowed(c.Scheme(), c.Host(), h.svc.o.ListenAddress, c.RequestCtx().LocalAddr()) {
		return base
	}
	if h.hostWarned.CompareAndSwap(false, true) {
		h.log.Warn("external login refused a Host header that does not name the listen address as the redirect URI base; set Service:ExternalAuth:CallbackBaseUrl to the public root of the backend",
			"listen_address", h.svc.o.ListenAddress)
	}
	return ""
}

// redirect answers 302 to a location without leaking it further.
func redirect(c fiber.Ctx, location string) error {
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Location(location)
	return c.SendStatus(fiber.StatusFound)
}

func (h *Handler) providers(c fiber.Ctx) error {
	list, err := h.svc.ProviderList(c.Context())
	if err != nil {
		return err
	}
	return envelope.OK(c, list)
}

func (h *Handler) allProviders(c fiber.Ctx) error {
	list, err := h.svc.AllProviders(c.Context())
	if err != nil {
		return err
	}
	return envelope.OK(c, list)
}

// authorize redirects to the provider; an unknown or disabled provider is
// a 40013 envelope (HTTP 200), not a redirect.
func (h *Handler) authorize(c fiber.Ctx) error {
	challenge, err := challengeQuery(c)
	if err != nil {
		return err
	}
	res, err := h.svc.Authorize(c.Context(), AuthorizeInput{
		Provider:    strings.Clone(c.Params("provider")),
		Mode:        ModeLogin,
		RequestBase: h.requestBase(c),
		UserAgent:   strings.Clone(c.Get(fiber.HeaderUserAgent)),
		Challenge:   challenge,
		Binder:      strings.Clone(c.Cookies(StateCookie)),
	})
	if err != nil {
		return err
	}
	h.setBinder(c, res.Binder)
	return redirect(c, res.URL)
}

// challengeQuery reads ?bindingChallenge; present but malformed (empty
// included) is 40014, so an app that meant to send one never silently
// falls back to the cookie binding.
func challengeQuery(c fiber.Ctx) (string, error) {
	var v string
	found := false
	for k, val := range c.Request().URI().QueryArgs().All() {
		if !found && strings.EqualFold(string(k), ChallengeParam) {
			v, found = string(val), true
		}
	}
	if !found {
		return "", nil
	}
	if !bindproof.ValidChallenge(v) {
		return "", errcode.New(errcode.OAuthStateInvalid)
	}
	return v, nil
}

// setBinder sets (or refreshes the Max-Age of) the browser's state cookie;
// nothing for a challenged state.
func (h *Handler) setBinder(c fiber.Ctx, binder string) {
	if binder != "" {
		h.setCookie(c, StateCookie, binder, StateTTL)
	}
}

// callback always ends in a redirect to the frontend result page.
func (h *Handler) callback(c fiber.Ctx) error {
	provider := strings.Clone(c.Params("provider"))
	binder := strings.Clone(c.Cookies(StateCookie))
	res, err := h.svc.Callback(c.Context(), CallbackInput{
		Provider: provider, Query: queryMap(c), Binder: binder, Client: h.client(c),
	})
	// The binder is shared by the browser's tabs: it is cleared only when
	// it is junk (malformed, or present and not matching its state), and
	// otherwise left to expire.
	if res.ClearBinder || (binder != "" && !validToken(binder)) {
		h.clearCookie(c, StateCookie)
	}
	if err != nil {
		return h.failTo(c, provider, err)
	}
	switch {
	case res.Ticket != "":
		if res.TicketBinder != "" && !h.svc.o.AllowUnboundTickets {
			h.setCookie(c, TicketCookie, res.TicketBinder, TicketTTL)
		}
		return redirect(c, h.svc.resultURL([2]string{"ticket", res.Ticket}))
	case res.BindTicket != "":
		return redirect(c, h.svc.resultURL([2]string{"bindTicket", res.BindTicket}, [2]string{"provider", res.Bound}))
	case res.Bound != "":
		return redirect(c, h.svc.resultURL([2]string{"bind", res.Bound}))
	default:
		p := res.Pending
		if p.Binder != "" {
			h.setCookie(c, PendingCookie, p.Binder, PendingTTL)
		}
		params := [][2]string{{"pendingLink", p.Token}, {"provider", p.Provider}}
		if p.DisplayName != "" {
			params = append(params, [2]string{"displayName", p.DisplayName})
		}
		return redirect(c, h.svc.resultURL(params...))
	}
}

// failTo redirects to the result page with ?error=<code>; a TOTP signal
// (40018) carries its challenge: ?totpChallenge=<id>&error=40018 (wire
// contract §3.2, callback step 6), and &passkey=1 when the user may answer
// with a passkey.
func (h *Handler) failTo(c fiber.Ctx, provider string, err error) error {
	if be, ok := errcode.As(err); ok && be.Code == errcode.TotpRequired {
		if id, ok := be.Args["challengeId"].(string); ok && id != "" {
			h.log.Info("external login needs a TOTP code", "provider", provider)
			params := [][2]string{{"totpChallenge", id}, {"error", strconv.Itoa(int(errcode.TotpRequired))}}
			if pk, _ := be.Args["passkey"].(bool); pk {
				// The user may answer with a passkey instead of a code,
				// as the password login's 40018 says with args.passkey.
				params = append(params, [2]string{"passkey", "1"})
			}
			return redirect(c, h.svc.resultURL(params...))
		}
	}
	return redirect(c, h.svc.resultURL([2]string{"error", strconv.Itoa(int(h.errorCode(c, provider, err)))}))
}

// errorCode is the code a failed callback reports; anything that is not a
// business error is logged and reported as 50000.
func (h *Handler) errorCode(c fiber.Ctx, provider string, err error) errcode.Code {
	if be, ok := errcode.As(err); ok {
		h.log.Info("external login callback refused", "provider", provider, "code", be.Code, "error", err)
		return be.Code
	}
	h.log.Error("external login callback failed", "provider", provider, "trace_id", envelope.TraceID(c), "error", err)
	return errcode.SystemError
}

// queryMap copies the first value of each query parameter (bounded).
func queryMap(c fiber.Ctx) map[string]string {
	m := map[string]string{}
	for k, v := range c.Request().URI().QueryArgs().All() {
		if len(m) >= maxQueryParams {
			break
		}
		key := string(k)
		if _, dup := m[key]; dup || len(v) > maxQueryValueLen {
			continue
		}
		m[key] = string(v)
	}
	return m
}

// exchange redeems a ticket with the ticket cookie (or, for a challenged
// ticket, the binding verifier). The cookie is never cleared here: it holds
// the browser's one binder, which another tab's ticket may still need; it
// expires with TicketTTL.
func (h *Handler) exchange(c fiber.Ctx) error {
	var in ExchangeInput
	if err := request.JSON(c, &in); err != nil {
		return errcode.New(errcode.OAuthStateInvalid)
	}
	binder := strings.Clone(c.Cookies(TicketCookie))
	out, err := h.svc.Exchange(c.Context(), in.Ticket, Proof{Binder: binder, Verifier: in.BindingVerifier})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderPragma, "no-cache")
	return auth.WriteTokens(c, out)
}

func (h *Handler) claim(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in ClaimInput
	if len(strings.TrimSpace(string(c.Body()))) > 0 {
		if err := request.JSON(c, &in); err != nil {
			return errcode.New(errcode.OAuthStateInvalid)
		}
	}
	if in.PendingLink == "" {
		in.PendingLink = request.Query(c, "pendingLink")
	}
	binder := strings.Clone(c.Cookies(PendingCookie))
	if err := h.svc.Claim(c.Context(), p.UserID, in.PendingLink, Proof{Binder: binder, Verifier: in.BindingVerifier}); err != nil {
		// The cookie stays: a failed claim of another (or no) link must not
		// cost the browser its real one, and a consumed link's binder
		// matches nothing any more.
		return err
	}
	// The cookie stays on success too: it holds the browser's one binder,
	// which another tab's pending link may still need (PendingTTL ends it).
	return envelope.OK(c, true)
}

func (h *Handler) bindings(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	list, err := h.svc.Bindings(c.Context(), p.UserID)
	if err != nil {
		return err
	}
	return envelope.OK(c, list)
}

// bind returns the one-time kernel start URL for the personal center to
// navigate to. Without a binding challenge the start token is bound to
// this browser with the state cookie, like a login: otherwise a bind URL
// handed to someone else would bind their identity to the requester's
// account. With a challenge no cookie is set; the bind then completes only
// through bind/complete by the same user with the verifier.
func (h *Handler) bind(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in BindInput
	if len(strings.TrimSpace(string(c.Body()))) > 0 {
		if err := request.JSON(c, &in); err != nil {
			return err
		}
	}
	challenge := ""
	if in.BindingChallenge != nil {
		if !bindproof.ValidChallenge(*in.BindingChallenge) {
			return errcode.New(errcode.OAuthStateInvalid)
		}
		challenge = *in.BindingChallenge
	}
	res, err := h.svc.StartBind(c.Context(), BindStartInput{
		UserID: p.UserID, Provider: strings.Clone(c.Params("provider")), RequestBase: h.requestBase(c),
		Challenge: challenge, Binder: strings.Clone(c.Cookies(StateCookie)),
	})
	if err != nil {
		return err
	}
	h.setBinder(c, res.Binder)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, BindOutput{AuthorizeURL: res.URL})
}

// bindStart is the top-level navigation to a bind start URL: it consumes
// the start token and 302s to the provider, re-setting the state cookie on
// this top-level response (unchallenged). Any refusal ends on the result
// page with ?error=<code>, like a callback.
func (h *Handler) bindStart(c fiber.Ctx) error {
	provider := strings.Clone(c.Params("provider"))
	res, err := h.svc.BeginBind(c.Context(), BeginBindInput{
		Provider:    provider,
		Start:       request.Query(c, StartParam),
		Binder:      strings.Clone(c.Cookies(StateCookie)),
		RequestBase: h.requestBase(c),
		UserAgent:   strings.Clone(c.Get(fiber.HeaderUserAgent)),
	})
	if err != nil {
		return h.failTo(c, provider, err)
	}
	h.setBinder(c, res.Binder)
	return redirect(c, res.URL)
}

// completeBind redeems a bind ticket of a challenged bind for the signed-in
// user.
func (h *Handler) completeBind(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in BindCompleteInput
	if err := request.JSON(c, &in); err != nil {
		return errcode.New(errcode.OAuthStateInvalid)
	}
	if err := h.svc.CompleteBind(c.Context(), p.UserID, in.BindTicket, in.BindingVerifier); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *Handler) unbind(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	if err := h.svc.Unbind(c.Context(), p.UserID, strings.Clone(c.Params("provider"))); err != nil {
		return err
	}
	return envelope.OK(c, true)
}
