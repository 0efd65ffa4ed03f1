package auth

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/ent/sysposition"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/file/link"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/sms"
)

// Profile is the contract's UserProfile.
type Profile struct {
	ID           int64   `json:"id"`
	Account      string  `json:"account"`
	Name         string  `json:"name"`
	OrgID        *int64  `json:"orgId"`
	PositionID   *int64  `json:"positionId"`
	OrgName      *string `json:"orgName"`
	PositionName *string `json:"positionName"`
	Nickname     *string `json:"nickname"`
	Phone        *string `json:"phone"`
	Email        *string `json:"email"`
	Gender       *string `json:"gender"`
	Avatar       *string `json:"avatar"`
	IsSuperAdmin bool    `json:"isSuperAdmin"`
	// TotpEnabled tells whether an authenticator app is bound (a kernel
	// addition: the console's personal page offers the binding when not).
	TotpEnabled bool `json:"totpEnabled"`
}

func (s *Service) liveUser(ctx context.Context, id int64) (*ent.SysUser, error) {
	u, err := s.d.Client.SysUser.Query().Where(sysuser.ID(id), sysuser.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.UserNotFound)
	}
	return u, err
}

// Profile returns the caller's profile.
func (s *Service) Profile(ctx context.Context, userID int64) (*Profile, error) {
	u, err := s.liveUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	p := &Profile{
		ID: u.ID, Account: u.Account, Name: u.Name, OrgID: u.OrgID, PositionID: u.PositionID,
		Nickname: u.Nickname, Phone: u.Phone, Email: u.Email, Gender: u.Gender, Avatar: u.Avatar,
		IsSuperAdmin: u.IsSuperAdmin, TotpEnabled: u.TotpEnabled,
	}
	if u.OrgID != nil {
		if o, err := s.d.Client.SysOrg.Query().Where(sysorg.ID(*u.OrgID)).Only(ctx); err == nil {
			p.OrgName = &o.Name
		}
	}
	if u.PositionID != nil {
		if ps, err := s.d.Client.SysPosition.Query().Where(sysposition.ID(*u.PositionID)).Only(ctx); err == nil {
			p.PositionName = &ps.Name
		}
	}
	return p, nil
}

// ProfileInput is the full-replace body of PUT /personal/profile.
type ProfileInput struct {
	Name     string  `json:"name"`
	Nickname *string `json:"nickname"`
	Phone    *string `json:"phone"`
	Email    *string `json:"email"`
	Gender   *string `json:"gender"`
	Avatar   *string `json:"avatar"`
}

// UpdateProfile replaces the caller's editable fields; a missing field
// becomes null. Changing the phone (a factor: SMS login and the SMS second
// factor) or the e-mail needs an open re-authentication window of the
// caller's session sid (40024, whatever sys.security.totp.enabled says); a
// phone another live user holds answers 40036; the old phone is told of a
// change (sms.Notifier).
func (s *Service) UpdateProfile(ctx context.Context, userID int64, sid string, in ProfileInput) error {
	name := strings.TrimSpace(in.Name)
	if name == "" || utf8.RuneCountInString(name) > 64 {
		return errcode.New(errcode.RequestInvalid).With("field", "name")
	}
	checks := []struct {
		field string
		v     *string
		max   int
	}{{"nickname", in.Nickname, 64}, {"phone", in.Phone, 32}, {"email", in.Email, 128}, {"gender", in.Gender, 8}}
	for _, c := range checks {
		if c.v != nil && utf8.RuneCountInString(*c.v) > c.max {
			return errcode.New(errcode.RequestInvalid).With("field", c.field)
		}
	}
	if in.Phone != nil && *in.Phone != "" && !validPhone(*in.Phone) {
		return errcode.New(errcode.RequestInvalid).With("field", "phone")
	}
	var avatar *string
	if in.Avatar != nil && strings.TrimSpace(*in.Avatar) != "" {
		// Only signed file-view URLs of an image are accepted (host/file/link).
		a, err := link.Avatar(ctx, s.d.Client, s.d.Config, *in.Avatar)
		if err != nil {
			return err
		}
		avatar = &a
	}
	u, err := s.liveUser(ctx, userID)
	if err != nil {
		return err
	}
	oldPhone, newPhone := strings.TrimSpace(deref(u.Phone)), deref(blankToNil(in.Phone))
	oldEmail, newEmail := strings.TrimSpace(deref(u.Email)), deref(blankToNil(in.Email))
	if oldPhone != newPhone || oldEmail != newEmail {
		if err := s.requireReauth(ctx, userID, sid); err != nil {
			return err
		}
	}
	if newPhone != "" && newPhone != oldPhone {
		if err := PhoneFree(ctx, s.d.Client, newPhone, userID); err != nil {
			return err
		}
	}
	upd := s.d.Client.SysUser.UpdateOne(u).SetName(name).SetUpdateUserID(userID)
	setOrClear(in.Nickname, upd.SetNickname, upd.ClearNickname)
	setOrClear(in.Phone, upd.SetPhone, upd.ClearPhone)
	setOrClear(in.Email, upd.SetEmail, upd.ClearEmail)
	setOrClear(in.Gender, upd.SetGender, upd.ClearGender)
	setOrClear(avatar, upd.SetAvatar, upd.ClearAvatar)
	if err := upd.Exec(ctx); err != nil {
		if ent.IsConstraintError(err) && newPhone != oldPhone {
			return errcode.New(errcode.PhoneTaken).With("field", "phone")
		}
		return err
	}
	s.notifyContactChange(ctx, u, oldPhone, newPhone, oldEmail, newEmail)
	return nil
}

// PhoneFree answers 40036 when a live user other than self (0: none)
// holds phone. UNIQUE(phone, delete_key) (migration 0016) is the guard
// against a race; this check names the field first.
func PhoneFree(ctx context.Context, c *ent.Client, phone string, self int64) error {
	phone = strings.TrimSpace(phone)
	if phone == "" {
		return nil
	}
	taken, err := c.SysUser.Query().Where(sysuser.Phone(phone), sysuser.IsDelete(false), sysuser.IDNEQ(self)).Exist(ctx)
	if err != nil {
		return err
	}
	if taken {
		return errcode.New(errcode.PhoneTaken).With("field", "phone")
	}
	return nil
}

// setOrClear applies the full-replace rule: a blank or missing value is null.
func setOrClear(v *string, set func(string) *ent.SysUserUpdateOne, clear func() *ent.SysUserUpdateOne) {
	if b := blankToNil(v); b != nil {
		set(*b)
	} else {
		clear()
	}
}

func blankToNil(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	v := strings.TrimSpace(*s)
	return &v
}

// PasswordPolicy is the runtime password policy (GET /sys/config/password-policy).
type PasswordPolicy struct {
	MinLength      int  `json:"minLength"`
	RequireUpper   bool `json:"requireUpper"`
	RequireLower   bool `json:"requireLower"`
	RequireDigit   bool `json:"requireDigit"`
	RequireSpecial bool `json:"requireSpecial"`
}

// Policy reads the password policy from sys.security.password.*.
func (s *Service) Policy(ctx context.Context) (PasswordPolicy, error) {
	return ReadPolicy(ctx, s.d.Settings)
}

// Check returns 42019 with the policy as args when plain falls short.
func (p PasswordPolicy) Check(plain string) error {
	var upper, lower, digit, special bool
	for _, r := range plain {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsDigit(r):
			digit = true
		default:
			special = true
		}
	}
	if utf8.RuneCountInString(plain) < p.MinLength || len(plain) > MaxPasswordLen ||
		p.RequireUpper && !upper || p.RequireLower && !lower || p.RequireDigit && !digit || p.RequireSpecial && !special {
		return errcode.New(errcode.PasswordTooWeak).
			With("minLength", p.MinLength).With("requireUpper", p.RequireUpper).With("requireLower", p.RequireLower).
			With("requireDigit", p.RequireDigit).With("requireSpecial", p.RequireSpecial)
	}
	return nil
}

// ChangePasswordInput is the body of PUT /personal/password.
type ChangePasswordInput struct {
	OldPassword string `json:"oldPassword"`
	NewPassword string `json:"newPassword"`
}

// ChangePassword checks the old password (40001) and the policy (42019),
// stores the new hash, clears mustChangePassword (on the user and on its
// sessions) and revokes the user's other sessions.
//
// A wrong old password counts toward the login lockout of the account from
// the caller's client, like a wrong password at login: at maxFailCount the
// answer is 40004 and, while that client is locked, every change is refused
// with 40004 without looking at the old password.
func (s *Service) ChangePassword(ctx context.Context, userID int64, currentSID string, in ChangePasswordInput, cl Client) error {
	u, err := s.liveUser(ctx, userID)
	if err != nil {
		return err
	}
	lock, policy, err := s.openUnlocked(ctx, subjectOf(u, u.Account), cl.IP)
	if err != nil {
		return err
	}
	if len(in.OldPassword) > MaxPasswordLen {
		return s.recordFailure(ctx, lock, policy)
	}
	ctx = hashCaller(ctx, cl.IP, u.Account)
	ok, err := s.d.Hasher.VerifyContext(ctx, u.PasswordHash, in.OldPassword)
	if password.Refused(err) {
		return err // the hashing pool is full: no failure counted
	}
	if err != nil || !ok {
		return s.recordFailure(ctx, lock, policy)
	}
	if err := lock.succeed(ctx); err != nil {
		s.d.Log.Warn("resetting the failed-login counter failed", "error", err)
	}
	policyPw, err := s.Policy(ctx)
	if err != nil {
		return err
	}
	if err := policyPw.Check(in.NewPassword); err != nil {
		return err
	}
	if history, err := s.d.Settings.Int(ctx, KeyPasswordHistory); err != nil {
		return err
	} else if history > 0 && in.NewPassword == in.OldPassword {
		return errcode.New(errcode.PasswordReused)
	}
	hash, err := s.d.Hasher.HashContext(ctx, in.NewPassword)
	if err != nil {
		return err
	}
	err = s.d.Client.SysUser.UpdateOneID(userID).
		SetPasswordHash(hash).SetMustChangePassword(false).SetPasswordChangedAt(time.Now()).SetUpdateUserID(userID).
		Exec(ctx)
	if err != nil {
		return err
	}
	if _, err = s.d.Sessions.RevokeUser(ctx, userID, "password changed", currentSID); err != nil {
		return err
	}
	return s.d.Sessions.PasswordChanged(ctx, userID)
}

// ReauthWindows tells whether a session has an open re-authentication
// window (host/mfa/reauth.Windows). Changing the phone or e-mail needs one
// whatever sys.security.totp.enabled says: a stolen session alone must not
// become a permanent takeover.
type ReauthWindows interface {
	IsOpen(ctx context.Context, userID int64, sid string) (bool, error)
}

// requireReauth answers HTTP 403 / 40024 unless the caller's session has
// an open re-authentication window (without windows wired, never).
func (s *Service) requireReauth(ctx context.Context, userID int64, sid string) error {
	if s.d.Windows != nil {
		open, err := s.d.Windows.IsOpen(ctx, userID, sid)
		if err != nil {
			return err
		}
		if open {
			return nil
		}
	}
	s.d.Log.Debug("re-authentication required for a contact change", "user_id", userID)
	return errcode.New(errcode.ReauthRequired)
}

// notifyContactChange tells the user through the old channel that the
// phone or e-mail changed: an SMS to the old phone when the sender can
// send notices (sms.Notifier), a personal notice in the console, and a
// line in the log either way. A failed notice never undoes the change.
func (s *Service) notifyContactChange(ctx context.Context, u *ent.SysUser, oldPhone, newPhone, oldEmail, newEmail string) {
	if oldPhone != newPhone {
		s.d.Log.Info("phone changed", "user_id", u.ID, "old", sms.MaskPhone(oldPhone), "new", sms.MaskPhone(newPhone))
		if n, ok := s.d.SmsSender.(sms.Notifier); ok && oldPhone != "" {
			if err := n.Notify(ctx, oldPhone, sms.TemplatePhoneChanged); err != nil {
				s.d.Log.Warn("telling the old phone about a phone change failed", "user_id", u.ID, "error", err)
			}
		}
		s.securityNotice(ctx, u.ID, changePhone)
	}
	if oldEmail != newEmail {
		s.d.Log.Info("e-mail changed", "user_id", u.ID)
		s.securityNotice(ctx, u.ID, changeEmail)
	}
}
