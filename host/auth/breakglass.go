package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// ReadPolicy reads the password policy from sys.security.password.* (what
// Service.Policy answers, for callers without a login service: the
// operator's command line).
func ReadPolicy(ctx context.Context, settings *sysconfig.Service) (PasswordPolicy, error) {
	var p PasswordPolicy
	var err error
	if p.MinLength, err = settings.Int(ctx, KeyPasswordMinLen); err != nil {
		return p, err
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{KeyPasswordUpper, &p.RequireUpper}, {KeyPasswordLower, &p.RequireLower}, {KeyPasswordDigit, &p.RequireDigit}, {KeyPasswordSpecial, &p.RequireSpecial}} {
		if *b.dst, err = settings.Bool(ctx, b.key); err != nil {
			return p, err
		}
	}
	return p, nil
}

// generatedSpecials are the characters Generate puts into a password when
// the policy requires a special character (password.Alphabet has none):
// printable ASCII that needs no quoting in a shell's single quotes.
const generatedSpecials = "!#%+-=?@^_~"

// Generate returns a random password that satisfies the policy: n
// characters (at least MinLength) of password.Generate, with one of them
// replaced by a special character when the policy requires one. A policy no
// password can meet (MinLength above the 1024-character limit) is an error.
func (p PasswordPolicy) Generate(n int) (string, error) {
	n = max(n, p.MinLength, 1)
	for range 64 {
		pw, err := password.Generate(n)
		if err != nil {
			return "", err
		}
		if p.RequireSpecial {
			pos, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
			if err != nil {
				return "", fmt.Errorf("generating a password: %w", err)
			}
			c, err := rand.Int(rand.Reader, big.NewInt(int64(len(generatedSpecials))))
			if err != nil {
				return "", fmt.Errorf("generating a password: %w", err)
			}
			b := []byte(pw)
			b[pos.Int64()] = generatedSpecials[c.Int64()]
			pw = string(b)
		}
		if p.Check(pw) == nil {
			return pw, nil
		}
	}
	return "", fmt.Errorf("no generated password of %d characters meets the password policy (minLength %d)", n, p.MinLength)
}

// ResetDeps are what ResetPassword works with.
type ResetDeps struct {
	Client   *ent.Client
	Settings *sysconfig.Service
	Hasher   password.Hasher
	Sessions *session.Service
	// Store holds the login-lockout counters; nil when they are out of
	// reach (the in-process cache of a running service), and then they are
	// left as they are.
	Store cache.Store
}

// ResetInput names the account and the new password.
type ResetInput struct {
	// Account is matched case-insensitively among live users.
	Account string
	// Password is the new password; empty generates one of GenerateLen
	// characters (at least the policy's MinLength) that meets the policy.
	Password    string
	GenerateLen int
	// Reason is written on the revoked sessions.
	Reason string
}

// ResetResult tells what ResetPassword did.
type ResetResult struct {
	UserID  int64
	Account string
	// Password is the effective new password (the generated one, or the
	// given one).
	Password  string
	Generated bool
	// Sessions is the number of sessions revoked.
	Sessions int
	// LockoutCleared is false when ResetDeps.Store was nil.
	LockoutCleared bool
}

// ResetPassword is the break-glass password reset (`adminkernel user
// reset-password`), by the rules of the API: a given password must meet the
// policy (42019) and, when sys.security.password.historyCount is set, differ
// from the current one (42025), as in a personal password change; a
// generated one meets the policy. It stores the new hash with
// password_changed_at, sets mustChangePassword (a password that passed
// through an operator's hands is the user's to replace at the next login,
// as after an administrator's reset), clears the login lock, and ends every
// session of the user (database and cache). An unknown account gives
// errcode.UserNotFound.
//
// The update is one statement: two resets at once leave one of the two
// passwords, whole.
func ResetPassword(ctx context.Context, d ResetDeps, in ResetInput) (ResetResult, error) {
	account := strings.TrimSpace(in.Account)
	u, err := d.Client.SysUser.Query().
		Where(sysuser.AccountNorm(schema.NormalizeAccount(account)), sysuser.IsDelete(false)).
		Only(ctx)
	if ent.IsNotFound(err) || account == "" {
		return ResetResult{}, errcode.New(errcode.UserNotFound).With("account", account)
	}
	if err != nil {
		return ResetResult{}, err
	}
	policy, err := ReadPolicy(ctx, d.Settings)
	if err != nil {
		return ResetResult{}, err
	}
	res := ResetResult{UserID: u.ID, Account: u.Account, Password: in.Password}
	if in.Password == "" {
		if res.Password, err = policy.Generate(in.GenerateLen); err != nil {
			return ResetResult{}, err
		}
		res.Generated = true
	} else {
		if err := policy.Check(in.Password); err != nil {
			return ResetResult{}, err
		}
		history, err := d.Settings.Int(ctx, KeyPasswordHistory)
		if err != nil {
			return ResetResult{}, err
		}
		if history > 0 {
			same, err := d.Hasher.VerifyContext(ctx, u.PasswordHash, in.Password)
			if err != nil && !errors.Is(err, password.ErrMalformed) {
				return ResetResult{}, err
			}
			if same {
				return ResetResult{}, errcode.New(errcode.PasswordReused)
			}
		}
	}
	hash, err := d.Hasher.HashContext(ctx, res.Password)
	if err != nil {
		return ResetResult{}, err
	}
	n, err := d.Client.SysUser.Update().Where(sysuser.ID(u.ID), sysuser.IsDelete(false)).
		SetPasswordHash(hash).SetMustChangePassword(true).SetPasswordChangedAt(time.Now()).
		SetLoginFailCount(0).ClearLockUntil().
		Save(ctx)
	if err != nil {
		return ResetResult{}, err
	}
	if n == 0 {
		return ResetResult{}, errcode.New(errcode.UserNotFound).With("account", account)
	}
	if res.Sessions, err = d.Sessions.RevokeUser(ctx, u.ID, in.Reason, ""); err != nil {
		return res, err
	}
	if d.Store != nil {
		if _, err := ClearLockout(ctx, d.Client, d.Store, u.Account); err != nil {
			return res, err
		}
		res.LockoutCleared = true
	}
	return res, nil
}
