package auth

import (
	"context"
	"fmt"
	"time"
)

// A change of the account's sign-in factors or contacts the user is told
// about in a personal notice (securityNotice).
type securityChange int

const (
	changeTotpBound securityChange = iota
	changeTotpUnbound
	changePasskeyAdded
	changePasskeyRemoved
	changePhone
	changeEmail
	changeFactorsCleared
)

// securityTexts are the notice's wording in both console languages (a
// notice is stored once, so it carries both).
var securityTexts = map[securityChange][2]string{
	changeTotpBound:      {"An authenticator app was bound to your account", "您的账号绑定了身份验证器应用"},
	changeTotpUnbound:    {"The authenticator app was removed from your account", "您的账号解绑了身份验证器应用"},
	changePasskeyAdded:   {"A passkey was added to your account", "您的账号添加了通行密钥"},
	changePasskeyRemoved: {"A passkey was removed from your account", "您的账号删除了通行密钥"},
	changePhone:          {"The phone number of your account was changed", "您的账号更改了手机号"},
	changeEmail:          {"The e-mail address of your account was changed", "您的账号更改了电子邮箱"},
	changeFactorsCleared: {"An administrator removed the second factors of your account", "管理员清除了您账号的第二因素"},
}

// FactorsCleared tells the user in a personal notice that an administrator
// cleared the account's second factors (host/reauth's Clear calls it).
func (s *Service) FactorsCleared(ctx context.Context, userID int64) {
	s.securityNotice(ctx, userID, changeFactorsCleared)
}

// securityNotice tells the user in a personal notice (Deps.Notify; none
// when the Notice module is disabled) that a factor or contact of the
// account changed, with the time and what to do if it was not them. A
// failed notice never undoes the change; it is logged.
func (s *Service) securityNotice(ctx context.Context, userID int64, c securityChange) {
	if s.d.Notify == nil {
		return
	}
	t, ok := securityTexts[c]
	if !ok {
		return
	}
	at := time.Now().UTC().Format("2006-01-02 15:04 UTC")
	title := "Security alert · 安全提醒"
	content := fmt.Sprintf("%s (%s). If this was not you, change your password and tell your administrator at once.\n\n%s（%s）。如果这不是您本人的操作，请立即修改密码并联系管理员。",
		t[0], at, t[1], at)
	if err := s.d.Notify(context.WithoutCancel(ctx), userID, title, content); err != nil {
		s.d.Log.Warn("the security notice to the user failed", "user_id", userID, "error", err)
	}
}
