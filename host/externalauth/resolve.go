package externalauth

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/predicate"
	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/ent/sysorg"
	"github.com/adminkernel/kernel/ent/sysrole"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserexternal"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/textclip"
	"github.com/adminkernel/kernel/host/password"
)

// resolve finds the local user of an identity, in the specification's
// order: an existing binding; else, with linkByAccount on, the live
// same-name account (never a super-admin, a disabled account or one
// already bound for this provider), which is then bound; else, with
// provisioning on, a new account; else 40016. It also names the rule that
// fired (ruleBinding, ruleLinkByAccount, ruleProvision). A bound but
// disabled user is returned together with 40005; a binding made under
// another issuer is returned with 40015 (never remapped).
func (s *Service) resolve(ctx context.Context, code string, id identity) (*ent.SysUser, string, error) {
	u, err := s.boundUser(ctx, code, id)
	if err != nil || u != nil {
		return u, ruleBinding, accountUsable(u, err)
	}
	sw, err := s.o.Switches.All(ctx, code)
	if err != nil {
		return nil, "", err
	}
	if sw.LinkByAccount && id.AccountHint != "" {
		u, err := s.linkByAccount(ctx, code, id)
		if err != nil || u != nil {
			return u, ruleLinkByAccount, accountUsable(u, err)
		}
	}
	if sw.Provisioning == Provision {
		u, err := s.provision(ctx, code, id, sw)
		return u, ruleProvision, accountUsable(u, err)
	}
	return nil, rulePending, errcode.New(errcode.OAuthAccountNotBound)
}

func accountUsable(u *ent.SysUser, err error) error {
	if err != nil {
		return err
	}
	if u != nil && !u.Enabled {
		return errcode.New(errcode.AccountDisabled)
	}
	return nil
}

func bindingUser(userID int64) predicate.SysUserExternal {
	return sysuserexternal.UserID(userID)
}

// liveBindings queries the live bindings of a provider.
func (s *Service) liveBindings(code string) *ent.SysUserExternalQuery {
	return s.o.Client.SysUserExternal.Query().Where(sysuserexternal.Provider(code), sysuserexternal.IsDelete(false))
}

func (s *Service) userBindings(ctx context.Context, userID int64) ([]*ent.SysUserExternal, error) {
	return s.o.Client.SysUserExternal.Query().
		Where(sysuserexternal.UserID(userID), sysuserexternal.IsDelete(false)).
		Order(ent.Asc(sysuserexternal.FieldCreateTime), ent.Asc(sysuserexternal.FieldID)).
		All(ctx)
}

func (s *Service) softDeleteBinding(ctx context.Context, id int64) error {
	err := s.o.Client.SysUserExternal.UpdateOneID(id).Where(sysuserexternal.IsDelete(false)).
		SetIsDelete(true).SetDeleteKey(id).Exec(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	return err
}

// liveUser returns a user that is not deleted, or nil.
func (s *Service) liveUser(ctx context.Context, id int64) (*ent.SysUser, error) {
	u, err := s.o.Client.SysUser.Query().Where(sysuser.ID(id), sysuser.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// boundUser returns the user bound to (provider, subject), or nil. A
// binding left behind by a deleted user is retired. A binding made under
// another issuer than the identity's returns its user with 40015.
func (s *Service) boundUser(ctx context.Context, code string, id identity) (*ent.SysUser, error) {
	b, err := s.liveBindings(code).Where(sysuserexternal.Subject(id.Subject)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u, err := s.liveUser(ctx, b.UserID)
	if err != nil {
		return nil, err
	}
	if u == nil {
		s.o.Log.Info("retiring the binding of a deleted user", "provider", code, "user_id", b.UserID)
		return nil, s.softDeleteBinding(ctx, b.ID)
	}
	return u, s.checkIssuer(ctx, b, id.Issuer)
}

// linkByAccount binds the identity to the live account named like its
// account hint (the same lookup as password login) when that account may
// be linked; it returns nil when nothing was linked.
func (s *Service) linkByAccount(ctx context.Context, code string, id identity) (*ent.SysUser, error) {
	u, err := s.o.Client.SysUser.Query().Where(sysuser.AccountNorm(schema.NormalizeAccount(id.AccountHint)), sysuser.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) || ent.IsNotSingular(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if u.IsSuperAdmin || !u.Enabled {
		return nil, nil
	}
	n, err := s.liveBindings(code).Where(sysuserexternal.UserID(u.ID)).Count(ctx)
	if err != nil || n > 0 {
		return nil, err
	}
	err = s.newBinding(s.o.Client, u.ID, code, id).Exec(ctx)
	if ent.IsConstraintError(err) {
		// A parallel login bound the identity, or the user got another
		// identity of this provider: only the binding counts now.
		return s.boundUser(ctx, code, id)
	}
	if err != nil {
		return nil, err
	}
	s.o.Log.Info("external identity linked by account name", "provider", code, "user_id", u.ID)
	return u, nil
}

// provision creates an account for the identity: a random placeholder
// password without forced change, the default roles and organisation, and
// the binding, in one transaction. A parallel first login of the same
// identity loses on the binding's unique key and signs in as the winner.
func (s *Service) provision(ctx context.Context, code string, id identity, sw ProviderSwitches) (*ent.SysUser, error) {
	roles, org, err := s.provisionTargets(ctx, code, sw)
	if err != nil {
		return nil, err
	}
	plain, err := password.Generate(placeholderPwLen)
	if err != nil {
		return nil, err
	}
	hash, err := s.o.Hasher.HashContext(ctx, plain)
	if err != nil {
		return nil, err
	}
	useHint := true
	for attempt := 0; attempt < 3; attempt++ {
		account, err := s.accountFor(ctx, code, id, useHint)
		if err != nil {
			return nil, err
		}
		u, err := s.createAccount(ctx, code, id, account, hash, roles, org)
		if err == nil {
			s.o.Log.Info("account provisioned for an external identity", "provider", code, "user_id", u.ID, "account", u.Account)
			return u, nil
		}
		if !ent.IsConstraintError(err) {
			return nil, err
		}
		if u, err := s.boundUser(ctx, code, id); err != nil || u != nil {
			return u, err
		}
		useHint = false // the account name was taken meanwhile
	}
	return nil, errors.New("externalauth: could not find a free account name")
}

// provisionTargets keeps the default roles and organisation that exist.
func (s *Service) provisionTargets(ctx context.Context, code string, sw ProviderSwitches) ([]int64, *int64, error) {
	var roles []int64
	if len(sw.DefaultRoleIDs) > 0 {
		found, err := s.o.Client.SysRole.Query().Where(sysrole.IDIn(sw.DefaultRoleIDs...), sysrole.IsDelete(false)).IDs(ctx)
		if err != nil {
			return nil, nil, err
		}
		if len(found) != len(sw.DefaultRoleIDs) {
			s.o.Log.Warn("some default roles of an external login provider do not exist", "provider", code, "configured", sw.DefaultRoleIDs, "found", found)
		}
		roles = found
	}
	var org *int64
	if sw.DefaultOrgID > 0 {
		ok, err := s.o.Client.SysOrg.Query().Where(sysorg.ID(sw.DefaultOrgID), sysorg.IsDelete(false)).Exist(ctx)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			org = &sw.DefaultOrgID
		} else {
			s.o.Log.Warn("the default organisation of an external login provider does not exist", "provider", code, "org_id", sw.DefaultOrgID)
		}
	}
	return roles, org, nil
}

// accountFor picks the new account's name: the account hint when it is
// usable and free, else {code}_{random}.
func (s *Service) accountFor(ctx context.Context, code string, id identity, useHint bool) (string, error) {
	hint := strings.TrimSpace(id.AccountHint)
	if useHint && hint != "" && utf8.RuneCountInString(hint) <= maxAccountLen && !strings.ContainsFunc(hint, isSpaceOrControl) {
		taken, err := s.o.Client.SysUser.Query().Where(sysuser.AccountNorm(schema.NormalizeAccount(hint)), sysuser.IsDelete(false)).Exist(ctx)
		if err != nil {
			return "", err
		}
		if !taken {
			return hint, nil
		}
	}
	suffix, err := password.Generate(10)
	if err != nil {
		return "", err
	}
	return textclip.Runes(strings.ToLower(code), maxAccountLen-11) + "_" + suffix, nil
}

func isSpaceOrControl(r rune) bool { return r <= ' ' || r == 0x7f }

func (s *Service) createAccount(ctx context.Context, code string, id identity, account, hash string, roles []int64, org *int64) (*ent.SysUser, error) {
	name := textclip.Runes(strings.TrimSpace(id.DisplayName), maxNameLen)
	if name == "" {
		name = account
	}
	var u *ent.SysUser
	err := database.WithTx(ctx, s.o.Client, func(tx *ent.Tx) error {
		var err error
		u, err = tx.SysUser.Create().
			SetAccount(account).
			SetName(name).
			SetPasswordHash(hash).
			SetMustChangePassword(false).
			SetNillableEmail(bounded(id.Email, maxEmailLen)).
			SetNillablePhone(bounded(id.Phone, maxPhoneLen)).
			SetNillableOrgID(org).
			Save(ctx)
		if err != nil {
			return err
		}
		for _, r := range roles {
			if err := tx.SysUserRole.Create().SetUserID(u.ID).SetRoleID(r).Exec(ctx); err != nil {
				return err
			}
		}
		return s.newBinding(tx.Client(), u.ID, code, id).Exec(ctx)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// bind binds an identity to a user: nothing to do when it is already bound
// to that user; 40017 when it is bound to another user or the user already
// has another identity of the provider; 40015 when it is bound to that
// user under another issuer.
func (s *Service) bind(ctx context.Context, userID int64, code string, id identity) error {
	u, err := s.liveUser(ctx, userID)
	if err != nil {
		return err
	}
	if u == nil {
		return errcode.New(errcode.UserNotFound)
	}
	for range 2 {
		done, err := s.bindingSettled(ctx, userID, code, id)
		if err != nil || done {
			return err
		}
		err = s.newBinding(s.o.Client, userID, code, id).Exec(ctx)
		if err == nil {
			s.o.Log.Info("external identity bound", "provider", code, "user_id", userID)
			return nil
		}
		if !ent.IsConstraintError(err) {
			return err
		}
		// A parallel request bound something meanwhile: look again.
	}
	return errcode.New(errcode.OAuthAlreadyBound)
}

// bindingSettled reports whether binding (userID, code, subject) needs no
// insert: true when it exists already, 40017 when it cannot be made, 40015
// when it exists under another issuer.
func (s *Service) bindingSettled(ctx context.Context, userID int64, code string, id identity) (bool, error) {
	subject := id.Subject
	rows, err := s.liveBindings(code).
		Where(sysuserexternal.Or(sysuserexternal.Subject(subject), sysuserexternal.UserID(userID))).
		All(ctx)
	if err != nil {
		return false, err
	}
	for _, r := range rows {
		if r.Subject == subject && r.UserID == userID {
			return true, s.checkIssuer(ctx, r, id.Issuer)
		}
	}
	for _, r := range rows {
		if r.Subject == subject {
			// Bound to someone else: unless that user is gone.
			other, err := s.liveUser(ctx, r.UserID)
			if err != nil {
				return false, err
			}
			if other != nil {
				return false, errcode.New(errcode.OAuthAlreadyBound)
			}
			if err := s.softDeleteBinding(ctx, r.ID); err != nil {
				return false, err
			}
			continue
		}
		return false, errcode.New(errcode.OAuthAlreadyBound)
	}
	return false, nil
}

// recordLogin writes the login log and, on success, the last-login columns
// of an external login (best effort: failures are logged, never returned).
func (s *Service) recordLogin(ctx context.Context, u *ent.SysUser, code string, cl auth.Client, result error) {
	ctx = context.WithoutCancel(ctx)
	s.o.Tokens.WriteLoginLog(ctx, u.Account, code, &u.ID, result, cl)
	if result == nil {
		s.o.Tokens.TouchLogin(ctx, u, cl)
	}
}

// newBinding prepares the binding row of an identity, with its issuer.
func (s *Service) newBinding(c *ent.Client, userID int64, code string, id identity) *ent.SysUserExternalCreate {
	return c.SysUserExternal.Create().
		SetUserID(userID).SetProvider(code).SetSubject(id.Subject).
		SetNillableDisplayName(nonEmpty(id.DisplayName)).
		SetNillableIssuer(nonEmpty(id.Issuer))
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// bounded returns s when it is non-empty and fits n runes, else nil.
func bounded(s string, n int) *string {
	s = strings.TrimSpace(s)
	if s == "" || utf8.RuneCountInString(s) > n {
		return nil
	}
	return &s
}
