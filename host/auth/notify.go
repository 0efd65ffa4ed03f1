package auth

import (
	"context"
	"fmt"
	"time"
)

// A change of the account's contacts the user is told about in a personal
// notice (securityNotice). The second factors' changes are told by
// host/mfa, in the same words (NoticeText).
type securityChange int

const (
	changePhone securityChange = iota
	changeEmail
)

// securityTexts are the notice's wording in both console languages (a
// notice is stored once, so it carries both).
var securityTexts = map[securityChange][2]string{
	changePhone: {"The phone number of your account was changed", "您的账号更改了手机号"},
	changeEmail: {"The e-mail address of your account was changed", "您的账号更改了电子邮箱"},
}

// NoticeText is the security notice of a change of the account's factors
// or contacts, what in English (en) and Chinese (zh), made at: its title
// and content, with the time and what to do if it was not the user.
func NoticeText(en, zh string, at time.Time) (title, content string) {
	stamp := at.UTC().Format("2006-01-02 15:04 UTC")
	return "Security alert · 安全提醒", fmt.Sprintf("%s (%s). If this was not you, change your password and tell your administrator at once.\n\n%s（%s）。如果这不是您本人的操作，请立即修改密码并联系管理员。",
		en, stamp, zh, stamp)
}

// securityNotice tells the user in a personal notice (Deps.Notify; none
// when the Notice module is disabled) that a contact of the account
// changed. A failed notice never undoes the change; it is logged.
func (s *Service) securityNotice(ctx context.Context, userID int64, c securityChange) {
	if s.d.Notify == nil {
		return
	}
	t, ok := securityTexts[c]
	if !ok {
		return
	}
	title, content := NoticeText(t[0], t[1], time.Now())
	if err := s.d.Notify(context.WithoutCancel(ctx), userID, title, content); err != nil {
		s.d.Log.Warn("the security notice to the user failed", "user_id", userID, "error", err)
	}
}
