package mfa

import (
	"context"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/errcode"
)

// Logins is the login service a second factor finishes a login in, and
// whose password check and lockout the self-service uses
// (*auth.Service; see host/auth/secondfactor.go).
type Logins interface {
	// CheckPassword is the password step of a TOTP bind start and a
	// recovery, answered as the login answers.
	CheckPassword(ctx context.Context, account, plain string, cl auth.Client) (*ent.SysUser, *auth.Attempt, error)
	// OpenAttempt opens the lockout of u from a client (40004 while
	// locked).
	OpenAttempt(ctx context.Context, u *ent.SysUser, clientIP string) (*auth.Attempt, error)
	// CountFailure counts a wrong answer of u toward the lockout.
	CountFailure(ctx context.Context, u *ent.SysUser, clientIP string) error
	// IssueVerified issues the tokens of a login whose second factor was
	// verified.
	IssueVerified(ctx context.Context, u *ent.SysUser, method string, cl auth.Client) (*auth.LoginOutput, error)
	// WriteLoginLog records one attempt.
	WriteLoginLog(ctx context.Context, account, method string, userID *int64, result error, cl auth.Client)
}

// Factors completes the challenges the Gate stored (a TOTP code, an SMS
// code, a passkey), logs in with a passkey alone, and enrols and removes
// a user's factors (TOTP binding, recovery, passkeys).
type Factors struct {
	*Gate
	logins Logins
}

// NewFactors returns the area's flows over the gate g, ending logins in
// logins (the kernel's *auth.Service).
func NewFactors(g *Gate, logins Logins) *Factors {
	return &Factors{Gate: g, logins: logins}
}

func (f *Factors) liveUser(ctx context.Context, id int64) (*ent.SysUser, error) {
	u, err := f.d.Client.SysUser.Query().Where(sysuser.ID(id), sysuser.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.UserNotFound)
	}
	return u, err
}

// requireReauth answers HTTP 403 / 40024 unless the caller's session has
// an open re-authentication window (without windows wired, never).
func (f *Factors) requireReauth(ctx context.Context, userID int64, sid string) error {
	if f.d.Windows != nil {
		open, err := f.d.Windows.IsOpen(ctx, userID, sid)
		if err != nil {
			return err
		}
		if open {
			return nil
		}
	}
	f.d.Log.Debug("re-authentication required for a factor or contact change", "user_id", userID)
	return errcode.New(errcode.ReauthRequired)
}

// factorChanged ends every session of the user after a change of its
// factors (the change is written to the operation log by the route).
func (f *Factors) factorChanged(ctx context.Context, userID int64, reason string) {
	f.otherSessionsEnd(ctx, userID, "", reason)
}

// otherSessionsEnd ends every session of the user but sid ("": all).
func (f *Factors) otherSessionsEnd(ctx context.Context, userID int64, sid, reason string) {
	n, err := f.d.Sessions.RevokeUser(ctx, userID, reason, sid)
	if err != nil {
		f.d.Log.Error("ending the sessions of a user after a factor change failed", "user_id", userID, "error", err)
		return
	}
	f.d.Log.Info("second factor changed", "user_id", userID, "change", reason, "sessions_ended", n)
}

// A change of the account's second factors the user is told about in a
// personal notice (securityNotice).
type securityChange int

const (
	changeTotpBound securityChange = iota
	changeTotpUnbound
	changePasskeyAdded
	changePasskeyRemoved
	changeFactorsCleared
)

// securityTexts are the notice's wording in both console languages (a
// notice is stored once, so it carries both).
var securityTexts = map[securityChange][2]string{
	changeTotpBound:      {"An authenticator app was bound to your account", "您的账号绑定了身份验证器应用"},
	changeTotpUnbound:    {"The authenticator app was removed from your account", "您的账号解绑了身份验证器应用"},
	changePasskeyAdded:   {"A passkey was added to your account", "您的账号添加了通行密钥"},
	changePasskeyRemoved: {"A passkey was removed from your account", "您的账号删除了通行密钥"},
	changeFactorsCleared: {"An administrator removed the second factors of your account", "管理员清除了您账号的第二因素"},
}

// FactorsCleared tells the user in a personal notice that an administrator
// cleared the account's second factors (host/mfa/reauth's Clear calls it).
func (g *Gate) FactorsCleared(ctx context.Context, userID int64) {
	g.securityNotice(ctx, userID, changeFactorsCleared)
}

// securityNotice tells the user in a personal notice (Deps.Notify; none
// when the Notice module is disabled) that a factor of the account
// changed, with the time and what to do if it was not them
// (auth.NoticeText). A failed notice never undoes the change; it is
// logged.
func (g *Gate) securityNotice(ctx context.Context, userID int64, c securityChange) {
	if g.d.Notify == nil {
		return
	}
	t, ok := securityTexts[c]
	if !ok {
		return
	}
	title, content := auth.NoticeText(t[0], t[1], time.Now())
	if err := g.d.Notify(context.WithoutCancel(ctx), userID, title, content); err != nil {
		g.d.Log.Warn("the security notice to the user failed", "user_id", userID, "error", err)
	}
}
