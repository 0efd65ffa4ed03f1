// Package auth is the kernel's login: password and SMS login, refresh,
// logout, and the one token-issuing step every login method ends in
// (external login and the second factors included), together with the
// personal-center account endpoints, session administration and the login
// log. The second factors (TOTP, the SMS factor, passkeys, recovery,
// enrolment) are host/mfa's: see secondfactor.go for the seam.
package auth

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/captcha"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/bindproof"
	"github.com/adminkernel/kernel/host/internal/textclip"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/sms"
	"github.com/adminkernel/kernel/host/sysconfig"
	"github.com/adminkernel/kernel/host/telemetry"
	"github.com/adminkernel/kernel/host/token"
)

// Runtime config keys read by login (sys_config, wire contract §4.5).
const (
	KeyCaptchaEnabled  = "sys.security.captcha.enabled"
	KeyCaptchaType     = "sys.security.captcha.type"
	KeySmsLoginEnabled = "sys.security.smsLogin.enabled"
	KeyLockMaxFail     = "sys.security.loginLock.maxFailCount"
	KeyLockMinutes     = "sys.security.loginLock.lockMinutes"
	KeyLockCaptchaAt   = "sys.security.loginLock.accountCaptchaThreshold"
	KeyAccessMinutes   = "sys.security.session.accessMinutes"
	KeyRefreshMinutes  = "sys.security.session.refreshMinutes"
)

// Password policy keys read by login and password changes (sys_config).
//
//nolint:gosec // G101: setting names that contain "Password", not credentials
const (
	KeyPasswordExpire  = "sys.security.password.expireDays"
	KeyPasswordMinLen  = "sys.security.password.minLength"
	KeyPasswordUpper   = "sys.security.password.requireUpper"
	KeyPasswordLower   = "sys.security.password.requireLower"
	KeyPasswordDigit   = "sys.security.password.requireDigit"
	KeyPasswordSpecial = "sys.security.password.requireSpecial"
	KeyPasswordHistory = "sys.security.password.historyCount"
)

// Input limits of login (the second-factor area, host/mfa, checks its
// account and password fields with the same limits).
const (
	MaxAccountLen      = 64
	MaxPasswordLen     = 1024
	loginLogAccountLen = 128
	userAgentColumnLen = 512
)

// Methods recorded on sessions and login-log rows.
const (
	MethodPassword = "password"
	MethodSMS      = "sms"
)

// Deps are the collaborators of the login service.
type Deps struct {
	Client    *ent.Client
	Config    *config.Config
	Store     cache.Store
	Settings  *sysconfig.Service
	Hasher    password.Hasher
	Sessions  *session.Service
	Tokens    *token.Issuer
	Captcha   *captcha.Service
	SmsCodes  *sms.Codes
	SmsSender sms.Sender
	// SecondFactor is the gate every first factor passes before tokens
	// are issued (host/mfa's Gate): required.
	SecondFactor SecondFactor
	// Windows are the re-authentication windows (host/mfa/reauth):
	// changing the phone or e-mail needs one. Nil refuses those changes
	// with 40024.
	Windows ReauthWindows
	// Notify delivers a personal notice to a user (the Notice module's;
	// nil when it is disabled): the security notices of contact changes.
	Notify func(ctx context.Context, userID int64, title, content string) error
	Log    hclog.Logger
	// Metrics counts logins, refreshes and lockouts (nil = none).
	Metrics *telemetry.Metrics
}

// Service implements the login flows.
type Service struct {
	d         Deps
	dummyHash string
	cookies   *Cookies
}

// New builds the service. It prepares a dummy hash with the configured
// iteration count (password.DecoyWith) so an unknown account costs as much
// as a wrong password.
func New(d Deps) (*Service, error) {
	if d.Log == nil {
		d.Log = hclog.NewNullLogger()
	}
	if d.SecondFactor == nil {
		return nil, errors.New("auth: Deps.SecondFactor is missing (the second-factor gate, host/mfa)")
	}
	dummy, err := password.DecoyWith(context.Background(), d.Hasher)
	if err != nil {
		return nil, err
	}
	return &Service{d: d, dummyHash: dummy, cookies: NewCookies(d.Config)}, nil
}

// Cookies is the session-cookie policy (cookie session mode); the host
// mounts it on the app (Cookies.Mount).
func (s *Service) Cookies() *Cookies { return s.cookies }

// Client describes the caller of a login request (copied values only).
type Client struct {
	IP        string
	UserAgent string
	// Binder is the request's browser binder of second-factor challenges
	// (cookie MfaBinderCookie, or a fresh one the handler sets with a
	// signal), and BindingChallenge the app's binding challenge of a
	// password login (bindproof); a challenge is bound to the second when
	// given, else to the first.
	Binder           string
	BindingChallenge string
}

// LoginOutput is the token response of every login method (wire contract
// §2.2).
type LoginOutput struct {
	AccessToken        string              `json:"accessToken"`
	ExpiresAt          request.OffsetStamp `json:"expiresAt"`
	RefreshToken       string              `json:"refreshToken"`
	RefreshExpiresAt   request.OffsetStamp `json:"refreshExpiresAt"`
	UserID             int64               `json:"userId"`
	Account            string              `json:"account"`
	Name               string              `json:"name"`
	MustChangePassword bool                `json:"mustChangePassword"`
	SessionMode        string              `json:"sessionMode"`
	CsrfRequired       bool                `json:"csrfRequired"`
	IsSuperAdmin       bool                `json:"isSuperAdmin"`
}

// IssueTokens is the one token-issuing step: it creates the session under
// the session policies of Service:Security:Session (Mode Single or
// MaxConcurrent; AbsoluteHours caps the session's lifetime, which is
// otherwise sys.security.session.refreshMinutes) and signs the access token
// (never valid past the session's end). Every login method (password, SMS,
// external) ends here.
func (s *Service) IssueTokens(ctx context.Context, u *ent.SysUser, method string, cl Client) (*LoginOutput, error) {
	return s.issueTokens(ctx, u, method, cl, false)
}

// issueTokens is IssueTokens; mfa marks a session whose login verified a
// second factor (sys_session.mfa).
func (s *Service) issueTokens(ctx context.Context, u *ent.SysUser, method string, cl Client, mfa bool) (*LoginOutput, error) {
	accessMin, err := s.d.Settings.Int(ctx, KeyAccessMinutes)
	if err != nil {
		return nil, err
	}
	refreshMin, err := s.d.Settings.Int(ctx, KeyRefreshMinutes)
	if err != nil {
		return nil, err
	}
	accessMin = max(accessMin, 1)
	refreshMin = max(refreshMin, accessMin)
	policy := s.d.Config.Service.Security.Session
	lifetime := time.Duration(refreshMin) * time.Minute
	if policy.AbsoluteHours > 0 {
		lifetime = min(lifetime, time.Duration(policy.AbsoluteHours)*time.Hour)
	}
	must, err := s.mustChangePassword(ctx, u)
	if err != nil {
		return nil, err
	}
	issued, err := s.d.Sessions.Create(ctx, session.NewSession{
		UserID:             u.ID,
		Method:             method,
		MFA:                mfa,
		MustChangePassword: must,
		IP:                 cl.IP,
		UserAgent:          textclip.Runes(cl.UserAgent, userAgentColumnLen),
		MaxConcurrent:      policy.MaxConcurrent,
		Single:             policy.Single(),
		RefreshTTL:         lifetime,
	})
	if err != nil {
		return nil, err
	}
	return s.output(ctx, u, issued.SessionID, issued.RefreshToken, issued.RefreshExpiresAt, time.Duration(accessMin)*time.Minute)
}

func (s *Service) output(ctx context.Context, u *ent.SysUser, sid, refresh string, refreshExp time.Time, accessTTL time.Duration) (*LoginOutput, error) {
	// An access token never outlives its session.
	accessTTL = max(min(accessTTL, time.Until(refreshExp)), time.Second)
	access, exp, err := s.d.Tokens.Issue(token.Claims{
		UserID:     u.ID,
		Account:    u.Account,
		SessionID:  sid,
		SuperAdmin: u.IsSuperAdmin,
	}, accessTTL)
	if err != nil {
		return nil, err
	}
	must, err := s.mustChangePassword(ctx, u)
	if err != nil {
		return nil, err
	}
	return &LoginOutput{
		AccessToken:        access,
		ExpiresAt:          request.OffsetStamp{Time: exp},
		RefreshToken:       refresh,
		RefreshExpiresAt:   request.OffsetStamp{Time: refreshExp},
		UserID:             u.ID,
		Account:            u.Account,
		Name:               u.Name,
		MustChangePassword: must,
		SessionMode:        SessionModeBody,
		CsrfRequired:       false,
		IsSuperAdmin:       u.IsSuperAdmin,
	}, nil
}

// mustChangePassword: set by an admin create/reset, or the password is older
// than sys.security.password.expireDays (0 = never). The login succeeds; the
// session it opens may only change the password, read the profile and log
// out (40028 elsewhere, host/authn) until the password is changed.
func (s *Service) mustChangePassword(ctx context.Context, u *ent.SysUser) (bool, error) {
	if u.MustChangePassword {
		return true, nil
	}
	days, err := s.d.Settings.Int(ctx, KeyPasswordExpire)
	if err != nil || days <= 0 || u.PasswordChangedAt == nil {
		return false, err
	}
	return time.Since(*u.PasswordChangedAt) > time.Duration(days)*24*time.Hour, nil
}

// captchaRequired: the settings switch or the runtime switch.
func (s *Service) captchaRequired(ctx context.Context) (bool, error) {
	if s.d.Config.Service.Security.Captcha.Enabled {
		return true, nil
	}
	return s.d.Settings.Bool(ctx, KeyCaptchaEnabled)
}

// captchaType is the challenge type the captcha endpoint draws (the
// registry's default, char, when unset or unreadable).
func (s *Service) captchaType(ctx context.Context) string {
	typ, err := s.d.Settings.String(ctx, KeyCaptchaType)
	if err != nil {
		return captcha.TypeChar
	}
	return typ
}

func (s *Service) checkCaptcha(ctx context.Context, id, code string) error {
	on, err := s.captchaRequired(ctx)
	if err != nil || !on {
		return err
	}
	return s.verifyCaptcha(ctx, id, code, errcode.CaptchaExpired)
}

// verifyCaptcha checks an answer; absent gives the code missing.
func (s *Service) verifyCaptcha(ctx context.Context, id, code string, missing errcode.Code) error {
	if strings.TrimSpace(id) == "" || strings.TrimSpace(code) == "" {
		return errcode.New(missing)
	}
	return s.d.Captcha.Verify(ctx, id, code)
}

// PasswordInput is the login body.
type PasswordInput struct {
	Account     string  `json:"account"`
	Password    string  `json:"password"`
	CaptchaID   *string `json:"captchaId"`
	CaptchaCode *string `json:"captchaCode"`
	// BindingChallenge binds a second-factor challenge to the app's
	// verifier instead of the browser binder cookie (an app on another
	// site; bindproof): base64url(SHA-256(verifier)), 43 characters.
	BindingChallenge *string `json:"bindingChallenge"`
}

// PasswordLogin checks captcha, lockout and the password, then issues
// tokens. Every attempt is written to the login log.
func (s *Service) PasswordLogin(ctx context.Context, in PasswordInput, cl Client) (*LoginOutput, error) {
	var userID *int64
	out, err := s.passwordLogin(ctx, in, cl, &userID)
	s.WriteLoginLog(ctx, in.Account, MethodPassword, userID, err, cl)
	return out, err
}

func (s *Service) passwordLogin(ctx context.Context, in PasswordInput, cl Client, userID **int64) (*LoginOutput, error) {
	if strings.TrimSpace(in.Account) == "" || utf8.RuneCountInString(in.Account) > MaxAccountLen {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "account")
	}
	if in.Password == "" || len(in.Password) > MaxPasswordLen {
		return nil, errcode.New(errcode.RequestInvalid).With("field", "password")
	}
	if c := deref(in.BindingChallenge); c != "" {
		if !bindproof.ValidChallenge(c) {
			return nil, errcode.New(errcode.RequestInvalid).With("field", "bindingChallenge")
		}
		cl.BindingChallenge = c
	}
	pc, err := s.checkPassword(ctx, in, true, cl, userID)
	if err != nil {
		return nil, err
	}
	s.TouchLogin(ctx, pc.user, cl)
	return s.secondFactor(ctx, pc.user, MethodPassword, cl)
}

// passwordCheck is a passed password check: the user and the lockout
// counters of the (user, client) pair, which later steps of the same
// request (a wrong recovery code) count on.
type passwordCheck struct {
	user   *ent.SysUser
	lock   *lockout
	policy lockPolicy
}

// checkPassword is the password step of a login, a TOTP bind start and a
// recovery: lockout, captcha, the password, the account enabled. Failures
// count toward the lockout; a success clears the pair's failures. The
// captcha switch (loginCaptcha) applies to the login only: the TOTP
// self-service bodies have no captcha fields (wire contract §2.3), but an
// account whose failures passed accountCaptchaThreshold needs one there
// too (40029 without it).
func (s *Service) checkPassword(ctx context.Context, in PasswordInput, loginCaptcha bool, cl Client, userID **int64) (*passwordCheck, error) {
	policy, err := s.lockPolicy(ctx)
	if err != nil {
		return nil, err
	}
	globalCaptcha := false
	if loginCaptcha {
		if globalCaptcha, err = s.captchaRequired(ctx); err != nil {
			return nil, err
		}
	}
	// Accounts are unique case-insensitively: login matches them so too.
	u, err := s.d.Client.SysUser.Query().
		Where(sysuser.AccountNorm(schema.NormalizeAccount(strings.TrimSpace(in.Account))), sysuser.IsDelete(false)).
		Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	lock, err := s.openLockout(ctx, subjectOf(u, in.Account), cl.IP)
	if err != nil {
		return nil, err
	}
	st, err := lock.state(ctx, policy)
	if err != nil {
		return nil, err
	}
	if st.locked > 0 {
		return nil, errcode.New(errcode.AccountLocked).With("lockMinutes", minutesCeil(st.locked))
	}
	switch {
	case st.needCaptcha:
		if err := s.verifyCaptcha(ctx, deref(in.CaptchaID), deref(in.CaptchaCode), errcode.CaptchaRequired); err != nil {
			return nil, err
		}
	case globalCaptcha:
		if err := s.verifyCaptcha(ctx, deref(in.CaptchaID), deref(in.CaptchaCode), errcode.CaptchaExpired); err != nil {
			return nil, err
		}
	}
	hash := s.dummyHash
	if u != nil {
		hash = u.PasswordHash
		*userID = &u.ID
	}
	// The hashing pool shares its slots fairly per client address and
	// caps the calls of one client and of one account (429 beyond).
	ctx = hashCaller(ctx, cl.IP, in.Account)
	ok, verr := s.d.Hasher.VerifyContext(ctx, hash, in.Password)
	if password.Refused(verr) {
		// The hashing pool is saturated (503): no answer about the
		// password, so no failure is counted.
		return nil, verr
	}
	if u == nil || verr != nil || !ok {
		if verr != nil && u != nil {
			s.d.Log.Warn("stored password hash is unreadable", "user_id", u.ID, "error", verr)
		}
		return nil, s.recordFailure(ctx, lock, policy)
	}
	if !u.Enabled {
		return nil, errcode.New(errcode.AccountDisabled)
	}
	if err := lock.succeed(ctx); err != nil {
		s.d.Log.Warn("resetting the failed-login counter failed", "error", err)
	}
	if password.NeedsRehash(s.d.Hasher, u.PasswordHash) {
		s.rehash(ctx, u, in.Password)
	}
	return &passwordCheck{user: u, lock: lock, policy: policy}, nil
}

// rehash recomputes an old hash with the configured count; a failure only
// postpones it to the next login.
func (s *Service) rehash(ctx context.Context, u *ent.SysUser, plain string) {
	h, err := s.d.Hasher.HashContext(ctx, plain)
	if err == nil {
		err = s.d.Client.SysUser.UpdateOneID(u.ID).Where(sysuser.PasswordHash(u.PasswordHash)).SetPasswordHash(h).Exec(ctx)
	}
	if err != nil && !ent.IsNotFound(err) {
		s.d.Log.Warn("password rehash failed; retried at the next login", "user_id", u.ID, "error", err)
		return
	}
	s.d.Log.Info("password hash upgraded", "user_id", u.ID)
}

// TouchLogin records the time and IP of a successful login.
func (s *Service) TouchLogin(ctx context.Context, u *ent.SysUser, cl Client) {
	upd := s.d.Client.SysUser.UpdateOneID(u.ID).SetLastLoginTime(time.Now())
	if cl.IP != "" {
		upd.SetLastLoginIP(textclip.Runes(cl.IP, 64))
	}
	if err := upd.Exec(ctx); err != nil {
		s.d.Log.Warn("recording the last login failed", "user_id", u.ID, "error", err)
	}
}

func (s *Service) lockPolicy(ctx context.Context) (lockPolicy, error) {
	var p lockPolicy
	var err error
	if p.maxFail, err = s.d.Settings.Int(ctx, KeyLockMaxFail); err != nil {
		return p, err
	}
	if p.minutes, err = s.d.Settings.Int(ctx, KeyLockMinutes); err != nil {
		return p, err
	}
	if p.captchaAt, err = s.d.Settings.Int(ctx, KeyLockCaptchaAt); err != nil {
		return p, err
	}
	p.minutes = min(max(p.minutes, 1), maxLockMinutes)
	return p, nil
}

// recordFailure counts a failed attempt — for an existing account or not,
// so a lock reveals nothing — and returns the error to answer with: 40004
// when it locked the pair, else 40001. A cache error fails closed.
func (s *Service) recordFailure(ctx context.Context, lock *lockout, p lockPolicy) error {
	locked, err := lock.fail(ctx, p)
	if err != nil {
		return err
	}
	if locked {
		return errcode.New(errcode.AccountLocked).With("lockMinutes", p.minutes)
	}
	return errcode.New(errcode.PasswordWrong)
}

// Unlock clears every login-lock counter of an account name (an
// administrator's password reset does this; so does `adminkernel user
// unlock`).
func (s *Service) Unlock(ctx context.Context, account string) error {
	_, err := ClearLockout(ctx, s.d.Client, s.d.Store, account)
	return err
}

// Refresh rotates a refresh token and returns a new pair. A disabled or
// deleted user's session is revoked.
func (s *Service) Refresh(ctx context.Context, refreshToken string) (out *LoginOutput, err error) {
	defer func() { s.d.Metrics.Refresh(int(envelope.CodeOf(err))) }()
	if strings.TrimSpace(refreshToken) == "" || len(refreshToken) > 512 {
		return nil, errcode.New(errcode.RefreshTokenInvalid)
	}
	r, err := s.d.Sessions.Refresh(ctx, refreshToken)
	if err != nil {
		return nil, err
	}
	u, err := s.d.Client.SysUser.Query().Where(sysuser.ID(r.UserID), sysuser.IsDelete(false)).Only(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	if u == nil || !u.Enabled {
		_ = s.d.Sessions.Revoke(ctx, r.SessionID, "user disabled")
		return nil, errcode.New(errcode.RefreshTokenInvalid)
	}
	accessMin, err := s.d.Settings.Int(ctx, KeyAccessMinutes)
	if err != nil {
		return nil, err
	}
	return s.output(ctx, u, r.SessionID, r.RefreshToken, r.RefreshExpiresAt, time.Duration(max(accessMin, 1))*time.Minute)
}

func minutesCeil(d time.Duration) int {
	if d <= 0 {
		return 1
	}
	return int((d + time.Minute - 1) / time.Minute)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
