package auth

import (
	"context"
	"strings"

	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/password"
)

// hashCaller names the caller of the password hashes computed under ctx
// (password.WithCaller): the client address key (IPv4, or the IPv6 /64, as
// the rate limiter and the lockout count) and the account as login matches
// it.
func hashCaller(ctx context.Context, clientIP, account string) context.Context {
	return password.WithCaller(ctx, clientKey(clientIP), schema.NormalizeAccount(strings.TrimSpace(account)))
}

// VerifyPassword checks the current password of a signed-in user (the
// re-authentication of host/mfa/reauth). It applies the login lockout like
// ChangePassword: a wrong password counts toward the lock of the account
// from clientIP (40001, or 40004 once it locks), and while that client is
// locked the answer is 40004 without looking at the password. A disabled
// or deleted user is refused like a wrong password at login would be.
func (s *Service) VerifyPassword(ctx context.Context, userID int64, plain, clientIP string) error {
	u, err := s.liveUser(ctx, userID)
	if err != nil {
		return err
	}
	if !u.Enabled {
		return errcode.New(errcode.AccountDisabled)
	}
	lock, policy, err := s.openUnlocked(ctx, subjectOf(u, u.Account), clientIP)
	if err != nil {
		return err
	}
	if plain == "" || len(plain) > MaxPasswordLen {
		return s.recordFailure(ctx, lock, policy)
	}
	ok, err := s.d.Hasher.VerifyContext(hashCaller(ctx, clientIP, u.Account), u.PasswordHash, plain)
	if password.Refused(err) {
		return err // the hashing pool is full: no failure counted
	}
	if err != nil || !ok {
		return s.recordFailure(ctx, lock, policy)
	}
	if err := lock.succeed(ctx); err != nil {
		s.d.Log.Warn("resetting the failed-login counter failed", "error", err)
	}
	return nil
}
