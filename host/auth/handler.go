package auth

import (
	"bytes"
	"net"
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/authority"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
	"github.com/adminkernel/kernel/host/session"
)

// Handler mounts the login, personal-account, session and login-log
// endpoints. The second-factor endpoints (the TOTP and SMS login steps,
// TOTP binding, recovery, passkeys) are host/mfa's.
type Handler struct {
	svc         *Service
	trusted     []*net.IPNet
	maxPageSize int
	// targets decides whom an administrator may force out (force logout)
	// and whose sessions they see (the online list: their data scope).
	targets *authority.Targets
}

// NewHandler returns the HTTP side of the service.
func NewHandler(svc *Service, trusted []*net.IPNet, maxPageSize int) *Handler {
	return &Handler{svc: svc, trusted: trusted, maxPageSize: maxPageSize,
		targets: authority.NewTargets(svc.d.Client, svc.d.Store, svc.d.Config)}
}

// Routes registers the endpoints on the /api/v1 group.
func (h *Handler) Routes(api *route.Group) {
	a := api.Group("/auth")
	a.Get("/captcha", route.Anonymous, h.captcha).Title = "Captcha"
	a.Post("/login", route.Anonymous, h.login).Doc("Password login", PasswordInput{}, LoginOutput{})
	a.Post("/sms/send", route.Anonymous, h.smsSend).Doc("Send SMS login code", SmsSendInput{}, SmsSendOutput{})
	a.Post("/sms/login", route.Anonymous, h.smsLogin).Doc("SMS login", SmsLoginInput{}, LoginOutput{})
	a.Post("/refresh", route.Anonymous, h.refresh).Doc("Refresh tokens", refreshInput{}, LoginOutput{})
	a.Post("/logout", route.Token, h.logout).Doc("Logout", nil, true)

	api.Get("/ping", route.Permission, h.ping).Doc("Connectivity probe", nil, Ping{})

	p := api.Group("/personal")
	p.Get("/profile", route.Session, h.profile).Doc("My profile", nil, Profile{})
	p.Put("/profile", route.Session, h.updateProfile).Doc("Update my profile", ProfileInput{}, true)
	p.Put("/password", route.Session, h.changePassword).Doc("Change my password", ChangePasswordInput{}, true)
	p.Get("/sessions", route.Session, h.mySessions).Doc("My sessions", nil, []MySession{})
	p.Delete("/sessions/{sessionId}", route.Session, h.revokeMySession).Title = "End one of my sessions"
	api.Get("/sys/config/password-policy", route.Session, h.passwordPolicy).Doc("Password policy", nil, PasswordPolicy{})

	s := api.Group("/sys/session")
	s.Get("/online", route.Permission, h.online).Doc("Online sessions", nil, request.PagedList[session.Info]{}).Paged("UserId:int64")
	s.Delete("/{sessionId}", route.Permission, h.forceLogout).NeedsReauth().Title = "Force logout"

	l := api.Group("/sys/log/login")
	l.Get("/page", route.Permission, h.loginLogPage).Doc("Login log", nil, request.PagedList[LoginLogItem]{}).
		Paged("Account", "Success:bool", "StartTime:date-time", "EndTime:date-time")
	l.Delete("", route.Permission, h.clearLoginLog).NeedsReauth().Title = "Clear the login log"
}

func (h *Handler) client(c fiber.Ctx) Client {
	return Client{IP: request.ClientIP(c, h.trusted), UserAgent: strings.Clone(c.Get(fiber.HeaderUserAgent))}
}

func (h *Handler) captcha(c fiber.Ctx) error {
	ch, err := h.svc.d.Captcha.IssueType(c.Context(), h.svc.captchaType(c.Context()))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return envelope.OK(c, fiber.Map{"captchaId": ch.ID, "svg": ch.SVG, "type": ch.Type})
}

func (h *Handler) login(c fiber.Ctx) error {
	var in PasswordInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	cl, err := h.loginClient(c)
	if err != nil {
		return err
	}
	out, err := h.svc.PasswordLogin(c.Context(), in, cl)
	if err != nil {
		return h.answerSignal(c, in, cl, err)
	}
	return WriteTokens(c, out)
}

func (h *Handler) smsSend(c fiber.Ctx) error {
	var in SmsSendInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.svc.SendSmsCode(c.Context(), in)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *Handler) smsLogin(c fiber.Ctx) error {
	var in SmsLoginInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	out, err := h.svc.SmsLogin(c.Context(), in, h.client(c))
	if err != nil {
		return err
	}
	return WriteTokens(c, out)
}

type refreshInput struct {
	RefreshToken string `json:"refreshToken"`
}

// Ping is the answer of GET /api/v1/ping.
type Ping struct {
	Pong    bool                `json:"pong"`
	Account string              `json:"account"`
	At      request.OffsetStamp `json:"at"`
}

// refresh takes the refresh token from the body; in cookie mode a body
// without one (empty, absent, or refreshToken "") falls back to the
// smart_rt cookie.
func (h *Handler) refresh(c fiber.Ctx) error {
	var in refreshInput
	if len(bytes.TrimSpace(c.Body())) > 0 {
		if err := request.JSON(c, &in); err != nil {
			return errcode.New(errcode.RefreshTokenInvalid)
		}
	}
	if strings.TrimSpace(in.RefreshToken) == "" && h.svc.cookies.On() {
		in.RefreshToken = strings.Clone(c.Cookies(RefreshCookie))
	}
	out, err := h.svc.Refresh(c.Context(), in.RefreshToken)
	if err != nil {
		return err
	}
	return WriteTokens(c, out)
}

func (h *Handler) logout(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	if err := h.svc.d.Sessions.Revoke(c.Context(), p.SessionID, "logout"); err != nil {
		return err
	}
	h.svc.cookies.Clear(c)
	return envelope.OK(c, true)
}

func (h *Handler) ping(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	return envelope.OK(c, Ping{Pong: true, Account: p.Account, At: request.OffsetStamp{Time: time.Now()}})
}

func (h *Handler) profile(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	out, err := h.svc.Profile(c.Context(), p.UserID)
	if err != nil {
		return err
	}
	return envelope.OK(c, out)
}

func (h *Handler) updateProfile(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in ProfileInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	if err := h.svc.UpdateProfile(c.Context(), p.UserID, p.SessionID, in); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *Handler) changePassword(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	var in ChangePasswordInput
	if err := request.JSON(c, &in); err != nil {
		return err
	}
	if err := h.svc.ChangePassword(c.Context(), p.UserID, p.SessionID, in, h.client(c)); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *Handler) passwordPolicy(c fiber.Ctx) error {
	pol, err := h.svc.Policy(c.Context())
	if err != nil {
		return err
	}
	return envelope.OK(c, pol)
}

// MySession is the contract's MySessionItem.
type MySession struct {
	SessionID string              `json:"sessionId"`
	IP        *string             `json:"ip"`
	UserAgent *string             `json:"userAgent"`
	LoginTime request.EntityStamp `json:"loginTime"`
	ExpiresAt request.EntityStamp `json:"expiresAt"`
	IsCurrent bool                `json:"isCurrent"`
}

func (h *Handler) mySessions(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	list, err := h.svc.d.Sessions.ListUser(c.Context(), p.UserID)
	if err != nil {
		return err
	}
	out := make([]MySession, len(list))
	for i, s := range list {
		out[i] = MySession{SessionID: s.SessionID, IP: s.IP, UserAgent: s.UserAgent, LoginTime: s.LoginTime, ExpiresAt: s.ExpiresAt, IsCurrent: s.SessionID == p.SessionID}
	}
	return envelope.OK(c, out)
}

func (h *Handler) revokeMySession(c fiber.Ctx) error {
	p, err := authn.Require(c)
	if err != nil {
		return err
	}
	if err := h.svc.d.Sessions.RevokeOwn(c.Context(), p.UserID, request.Param(c, "sessionId")); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *Handler) online(c fiber.Ctx) error {
	page, err := request.Paging(c, h.maxPageSize)
	if err != nil {
		return err
	}
	uid, err := request.QueryInt64(c, "UserId")
	if err != nil {
		return err
	}
	visible, err := h.targets.Visible(c)
	if err != nil {
		return err
	}
	items, total, err := h.svc.d.Sessions.Online(c.Context(), session.OnlineFilter{UserID: uid, Users: visible, Offset: page.Offset(), Limit: page.Size})
	if err != nil {
		return err
	}
	return envelope.OK(c, request.NewPagedList(page, total, items))
}

func (h *Handler) forceLogout(c fiber.Ctx) error {
	sid := request.Param(c, "sessionId")
	owner, ok, err := h.svc.d.Sessions.UserOf(c.Context(), sid)
	if err != nil {
		return err
	}
	if !ok {
		return errcode.New(errcode.SessionNotFound)
	}
	// Ending a session acts on its user: the authority boundaries apply.
	if err := h.targets.Check(c, owner); err != nil {
		return err
	}
	if err := h.svc.d.Sessions.Revoke(c.Context(), sid, "forced by an administrator"); err != nil {
		return err
	}
	return envelope.OK(c, true)
}

func (h *Handler) loginLogPage(c fiber.Ctx) error {
	page, err := request.Paging(c, h.maxPageSize)
	if err != nil {
		return err
	}
	var f LoginLogFilter
	f.Account = request.Query(c, "Account")
	if f.Success, err = request.QueryBool(c, "Success"); err != nil {
		return err
	}
	if f.StartTime, err = request.QueryTime(c, "StartTime"); err != nil {
		return err
	}
	if f.EndTime, err = request.QueryTime(c, "EndTime"); err != nil {
		return err
	}
	items, total, err := h.svc.LoginLogPage(c.Context(), f, page)
	if err != nil {
		return err
	}
	return envelope.OK(c, request.NewPagedList(page, total, items))
}

func (h *Handler) clearLoginLog(c fiber.Ctx) error {
	if err := h.svc.ClearLoginLog(c.Context()); err != nil {
		return err
	}
	return envelope.OK(c, true)
}
