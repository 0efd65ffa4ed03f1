// Package reauth is re-authentication (wire contract §1.1 "+R", §2.3
// endpoint 15) and the MFA administration of §4: POST /auth/reauth opens a
// window of Service:Security:Reauth:WindowSeconds (default 5 minutes) for
// the caller's session; while TOTP is switched on
// (sys.security.totp.enabled) every route marked +R (route.Route.Reauth)
// and every permission route whose code an administrator put on the
// high-sensitivity list answers HTTP 403 / 40024 ReauthRequired to a
// session without an open window — the super-admin's too: re-auth is about
// the session, not about permissions. POST /sys/mfa/clear removes a user's
// second factors.
//
// The routes are declared by the multi-factor area's module (host/mfa,
// module name "Reauth"); this package is its re-authentication part and
// imports nothing of host/mfa: the TOTP check and the store of the factors
// kept outside sys_user arrive as interfaces (TotpChecker, FactorStore).
// A leaf so that the kernel's guard (Guard on every route) and the login's
// contact changes (host/auth, through its own ReauthWindows) depend on the
// windows alone, not on the factor area.
package reauth

import (
	"context"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// KeyTotpEnabled is the runtime switch that turns +R enforcement on.
const KeyTotpEnabled = "sys.security.totp.enabled"

// Re-authentication methods (the body's method).
const (
	MethodPassword = "password"
	MethodTotp     = "totp"
)

// Passwords checks a signed-in user's password under the login lockout
// (*auth.Service).
type Passwords interface {
	VerifyPassword(ctx context.Context, userID int64, plain, clientIP string) error
}

// TotpChecker checks a user's current TOTP code (replay refused, failures
// counted): the TOTP area (host/mfa) implements it. Without one, method
// "totp" is answered 40019 TotpWrong.
type TotpChecker interface {
	Verify(ctx context.Context, userID int64, code string) error
}

// FactorStore removes second-factor data kept outside sys_user (recovery
// codes, later passkeys) inside the clearing transaction. Without one only
// the sys_user columns are cleared.
type FactorStore interface {
	ClearFactors(ctx context.Context, tx *ent.Tx, userID int64) error
}

// Deps are the collaborators of the service.
type Deps struct {
	Client    *ent.Client
	Settings  *sysconfig.Service
	Sessions  *session.Service
	Windows   *Windows
	Sensitive *Sensitive
	Passwords Passwords
	// Totp and Factors may be nil (see their types).
	Totp    TotpChecker
	Factors FactorStore
	// Cleared, when set, is told of every user whose factors Clear removed
	// (the kernel sends the user a security notice).
	Cleared func(ctx context.Context, userID int64)
	Log     hclog.Logger
}

// Service implements re-authentication and the MFA administration.
type Service struct {
	d       Deps
	enabled func(context.Context) bool
}

// New returns the service.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = hclog.NewNullLogger()
	}
	return &Service{d: d, enabled: d.Settings.Switch(KeyTotpEnabled)}
}

// SetTotp installs the TOTP checker (the kernel wires the TOTP area).
func (s *Service) SetTotp(t TotpChecker) { s.d.Totp = t }

// SetFactors installs the store of the factors kept outside sys_user.
func (s *Service) SetFactors(f FactorStore) { s.d.Factors = f }

// Sensitive returns the high-sensitivity list.
func (s *Service) Sensitive() *Sensitive { return s.d.Sensitive }

// Input is the body of POST /auth/reauth.
type Input struct {
	Method   string  `json:"method"`
	Password *string `json:"password"`
	TotpCode *string `json:"totpCode"`
}

// Caller is the signed-in user re-authenticating.
type Caller struct {
	UserID    int64
	SessionID string
	ClientIP  string
}

// Reauth checks the caller's password or TOTP code and opens the window of
// the caller's session. A wrong password counts toward the login lockout
// (40001, 40004); a wrong TOTP code is the checker's answer (40019).
func (s *Service) Reauth(ctx context.Context, who Caller, in Input) error {
	switch strings.ToLower(strings.TrimSpace(in.Method)) {
	case MethodPassword:
		if in.Password == nil {
			return request.Invalid("password")
		}
		if err := s.d.Passwords.VerifyPassword(ctx, who.UserID, *in.Password, who.ClientIP); err != nil {
			return err
		}
	case MethodTotp:
		code := ""
		if in.TotpCode != nil {
			code = strings.TrimSpace(*in.TotpCode)
		}
		if code == "" {
			return request.Invalid("totpCode")
		}
		if s.d.Totp == nil {
			return errcode.New(errcode.TotpWrong)
		}
		if err := s.d.Totp.Verify(ctx, who.UserID, code); err != nil {
			return err
		}
	default:
		return request.Invalid("method")
	}
	return s.d.Windows.Open(ctx, who.UserID, who.SessionID)
}

// ClearInput is the body of POST /sys/mfa/clear.
type ClearInput struct {
	UserID request.Int64 `json:"userId"`
}

// Clear removes a user's second factors (TOTP seed and switch, and what
// the FactorStore keeps) and ends the user's sessions — except the
// caller's own session when callers clear their own factors. The caller's
// authority over the user is checked by the handler.
func (s *Service) Clear(ctx context.Context, callerID int64, callerSID string, userID int64) error {
	if userID <= 0 {
		return request.Invalid("userId")
	}
	err := database.WithTx(ctx, s.d.Client, func(tx *ent.Tx) error {
		n, err := tx.SysUser.Update().Where(sysuser.ID(userID), sysuser.IsDelete(false)).
			SetTotpEnabled(false).ClearTotpSecret().SetUpdateUserID(callerID).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errcode.New(errcode.UserNotFound)
		}
		if s.d.Factors != nil {
			return s.d.Factors.ClearFactors(ctx, tx, userID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	except := ""
	if callerID == userID {
		except = callerSID
	}
	if _, err := s.d.Sessions.RevokeUser(ctx, userID, "mfa cleared", except); err != nil {
		return err
	}
	s.d.Log.Info("second factors cleared", "user_id", userID, "by", callerID)
	if s.d.Cleared != nil && callerID != userID {
		s.d.Cleared(ctx, userID)
	}
	return nil
}
