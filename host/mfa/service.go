package mfa

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/ent/sysuserpasskey"
	"github.com/adminkernel/kernel/ent/sysuserrecoverycode"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/errcode"
)

// KeyPrefix is the one-time-store prefix of every TOTP record (login and
// bind challenges; the used step is sys_user.totp_last_step).
const KeyPrefix = "mfa:totp:"

// Service holds the TOTP state of users: the encrypted seed on sys_user,
// the recovery codes, and the last accepted step (sys_user.totp_last_step).
type Service struct {
	client *ent.Client
	store  cache.Store
	keys   func() ([]Key, error)
	now    func() time.Time

	once    sync.Once
	ring    *KeyRing
	ringErr error
}

// New builds the service. The key ring (KeysFromConfig) is built at the
// first use, so a kernel that never meets TOTP never creates a
// development key; a ring that cannot be built (ErrNoKey in Production)
// is not fatal: every operation that needs a seed answers the error.
func New(client *ent.Client, store cache.Store, cfg *config.Config) *Service {
	return NewWithKeys(client, store, func() ([]Key, error) { return KeysFromConfig(cfg) })
}

// NewWithKeys builds the service over the keys keys returns.
func NewWithKeys(client *ent.Client, store cache.Store, keys func() ([]Key, error)) *Service {
	return &Service{client: client, store: store, keys: keys, now: time.Now}
}

func (s *Service) keyRing() (*KeyRing, error) {
	s.once.Do(func() {
		keys, err := s.keys()
		if err == nil {
			s.ring, err = NewKeyRing(keys)
		}
		s.ringErr = err
	})
	return s.ring, s.ringErr
}

func aadOf(userID int64) []byte {
	return []byte("sys_user.totp_secret:" + strconv.FormatInt(userID, 10))
}

// Seal encrypts a user's seed.
func (s *Service) Seal(userID int64, seed string) (string, error) {
	ring, err := s.keyRing()
	if err != nil {
		return "", err
	}
	return ring.Seal([]byte(seed), aadOf(userID))
}

// Open decrypts a sealed seed of a user.
func (s *Service) Open(userID int64, sealed string) (string, error) {
	ring, err := s.keyRing()
	if err != nil {
		return "", err
	}
	b, err := ring.Open(sealed, aadOf(userID))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Bound reports whether a user has TOTP bound.
func Bound(u *ent.SysUser) bool {
	return u.TotpEnabled && u.TotpSecret != nil && *u.TotpSecret != ""
}

// Check verifies code against seed for the user: 40019 when it matches no
// step within Skew of now, or when the step it matches is not newer than
// the last step the user had accepted (sys_user.totp_last_step): a replay,
// or an older code after a newer one. The step is recorded with a
// compare-and-set (UPDATE ... WHERE totp_last_step < step), so of parallel
// requests with one code exactly one succeeds, on every replica.
func (s *Service) Check(ctx context.Context, userID int64, seed, code string) error {
	step, ok := matchStep(seed, code, s.now())
	if !ok {
		return errcode.New(errcode.TotpWrong)
	}
	n, err := s.client.SysUser.Update().
		Where(sysuser.ID(userID), sysuser.TotpLastStepLT(step)).
		SetTotpLastStep(step).Save(ctx)
	if err != nil {
		return fmt.Errorf("recording the used TOTP step: %w", err)
	}
	if n != 1 {
		return errcode.New(errcode.TotpWrong)
	}
	return nil
}

// Verify checks a code of a user with TOTP bound (40020 when not bound).
func (s *Service) Verify(ctx context.Context, u *ent.SysUser, code string) error {
	if !Bound(u) {
		return errcode.New(errcode.TotpNotBound)
	}
	seed, err := s.Open(u.ID, *u.TotpSecret)
	if err != nil {
		return err
	}
	return s.Check(ctx, u.ID, seed, code)
}

// VerifyUser is Verify for a user named by id (re-authentication): 40020
// when the user is gone or has no TOTP bound.
func (s *Service) VerifyUser(ctx context.Context, userID int64, code string) error {
	u, err := s.client.SysUser.Get(ctx, userID)
	if ent.IsNotFound(err) {
		return errcode.New(errcode.TotpNotBound)
	}
	if err != nil {
		return err
	}
	return s.Verify(ctx, u, code)
}

// ClearFactors removes a user's TOTP seed, recovery codes and passkeys
// inside tx (an administrator's clear, which owns the transaction).
func (s *Service) ClearFactors(ctx context.Context, tx *ent.Tx, userID int64) error {
	return clearAll(ctx, tx, userID)
}

// clearAll removes every second factor of a user: the TOTP seed, the
// recovery codes and the passkeys (sys_user_passkey).
func clearAll(ctx context.Context, tx *ent.Tx, userID int64) error {
	if err := unbind(ctx, tx, userID, ""); err != nil {
		return err
	}
	_, err := tx.SysUserPasskey.Delete().Where(sysuserpasskey.UserID(userID)).Exec(ctx)
	return err
}

// Enable binds a sealed seed to a user without TOTP and replaces the
// user's recovery codes with RecoveryCodes new ones, which it returns in
// clear (shown once). 40021 when the user has TOTP bound meanwhile or is
// gone.
func (s *Service) Enable(ctx context.Context, userID int64, sealed string) ([]string, error) {
	codes := make([]string, RecoveryCodes)
	for i := range codes {
		c, err := newRecoveryCode()
		if err != nil {
			return nil, err
		}
		codes[i] = c
	}
	err := s.tx(ctx, func(tx *ent.Tx) error {
		n, err := tx.SysUser.Update().
			Where(sysuser.ID(userID), sysuser.IsDelete(false), sysuser.TotpEnabled(false)).
			SetTotpSecret(sealed).SetTotpEnabled(true).Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return errcode.New(errcode.MfaBindInvalid)
		}
		if _, err := tx.SysUserRecoveryCode.Delete().Where(sysuserrecoverycode.UserID(userID)).Exec(ctx); err != nil {
			return err
		}
		now := s.now()
		bulk := make([]*ent.SysUserRecoveryCodeCreate, len(codes))
		for i, c := range codes {
			bulk[i] = tx.SysUserRecoveryCode.Create().SetUserID(userID).SetCodeHash(hashRecoveryCode(c)).SetCreateTime(now)
		}
		return tx.SysUserRecoveryCode.CreateBulk(bulk...).Exec(ctx)
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// UseRecoveryCode spends one unused recovery code of the user and unbinds
// TOTP (the other codes are removed with it). 40022 when the code is not
// one of the user's unused codes; of parallel requests with one code
// exactly one succeeds.
func (s *Service) UseRecoveryCode(ctx context.Context, userID int64, code string) error {
	if strings.TrimSpace(code) == "" || len(code) > maxRecoveryInput {
		return errcode.New(errcode.RecoveryCodeInvalid)
	}
	hash := hashRecoveryCode(code)
	return s.tx(ctx, func(tx *ent.Tx) error {
		n, err := tx.SysUserRecoveryCode.Update().
			Where(sysuserrecoverycode.UserID(userID), sysuserrecoverycode.CodeHash(hash), sysuserrecoverycode.UsedAtIsNil()).
			SetUsedAt(s.now()).Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return errcode.New(errcode.RecoveryCodeInvalid)
		}
		return unbind(ctx, tx, userID, hash)
	})
}

// Unbind removes a user's TOTP seed, recovery codes and passkeys (the
// operator's clear-mfa).
func (s *Service) Unbind(ctx context.Context, userID int64) error {
	return s.tx(ctx, func(tx *ent.Tx) error { return clearAll(ctx, tx, userID) })
}

// unbind clears the seed and removes the recovery codes but keep (the
// spent one, kept as a record).
func unbind(ctx context.Context, tx *ent.Tx, userID int64, keep string) error {
	if err := tx.SysUser.Update().Where(sysuser.ID(userID)).
		ClearTotpSecret().SetTotpEnabled(false).Exec(ctx); err != nil {
		return err
	}
	_, err := tx.SysUserRecoveryCode.Delete().
		Where(sysuserrecoverycode.UserID(userID), sysuserrecoverycode.CodeHashNEQ(keep)).Exec(ctx)
	return err
}

func (s *Service) tx(ctx context.Context, fn func(*ent.Tx) error) error {
	return database.WithTx(ctx, s.client, fn)
}
