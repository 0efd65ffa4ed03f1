package externalauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuserexternal"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/pluginsdk"
)

// IssuerReporter is an optional interface of a provider that knows the
// issuer of the identities it returns (the built-in OIDC provider reports
// its Authority; plugin providers report none). pluginsdk.Identity has no
// issuer, so the flow asks the provider itself, right before and right
// after the exchange: the two answers must agree.
//
// The issuer is stored with every binding made through the provider. A
// login through a binding whose stored issuer is not empty and differs
// from the provider's current issuer is refused with 40015 (the same
// subject at another issuer is another person, OIDC Core §5.7); it is never
// remapped. A binding stored without an issuer (made before the column
// existed, or through a provider reporting none) gets the current issuer
// at its next login.
type IssuerReporter interface {
	Issuer() string
}

// maxIssuerLen is the size of sys_user_external.issuer.
const maxIssuerLen = 512

// identity is a provider's answer with the issuer the provider reported
// ("" when it reports none).
type identity struct {
	pluginsdk.Identity
	Issuer string
}

// issuerOf returns the issuer a provider reports, or "".
func issuerOf(p pluginsdk.Provider) string {
	if r, ok := p.(IssuerReporter); ok {
		return strings.TrimSpace(r.Issuer())
	}
	return ""
}

// errIssuerChanged refuses a login or bind through a binding made under
// another issuer.
var errIssuerChanged = errors.New("the provider's issuer is not the one the binding was made under")

// checkIssuer compares a binding's stored issuer with the current one:
// 40015 when both are known and differ; a binding without a stored issuer
// gets the current one (best effort).
func (s *Service) checkIssuer(ctx context.Context, b *ent.SysUserExternal, issuer string) error {
	stored := ""
	if b.Issuer != nil {
		stored = *b.Issuer
	}
	switch {
	case stored == issuer:
		return nil
	case stored != "":
		s.o.Log.Warn("external login refused: the provider's issuer changed since the identity was bound; the binding is not remapped",
			"provider", b.Provider, "user_id", b.UserID, "bound_issuer", stored, "issuer", issuer)
		return errcode.New(errcode.OAuthExchangeFailed).Wrap(errIssuerChanged)
	}
	err := s.o.Client.SysUserExternal.Update().
		Where(sysuserexternal.ID(b.ID), sysuserexternal.Or(sysuserexternal.IssuerIsNil(), sysuserexternal.IssuerEQ(""))).
		SetIssuer(issuer).Exec(ctx)
	if err != nil {
		s.o.Log.Warn("recording the issuer of an external binding failed", "provider", b.Provider, "user_id", b.UserID, "error", err)
	} else {
		s.o.Log.Info("issuer recorded on an external binding made without one", "provider", b.Provider, "user_id", b.UserID, "issuer", issuer)
	}
	return nil
}

// validIssuer tells whether an issuer fits the binding column.
func validIssuer(iss string) bool {
	return utf8.RuneCountInString(iss) <= maxIssuerLen && !strings.ContainsFunc(iss, isSpaceOrControl)
}

// Rules of the identity resolution, as logged.
const (
	ruleBinding       = "binding"
	ruleLinkByAccount = "linkByAccount"
	ruleProvision     = "provision"
	rulePending       = "pending"
)

// logResolution writes one Info line per resolved external login: the rule
// that fired, the provider and the user (never the subject in clear: a
// pending identity is named by subjectRef).
func (s *Service) logResolution(code, rule string, userID int64, id identity, result error) {
	args := []any{"provider", code, "rule", rule}
	if userID != 0 {
		args = append(args, "user_id", userID)
	} else {
		args = append(args, "subject_ref", subjectRef(code, id.Subject))
	}
	if result != nil {
		if be, ok := errcode.As(result); ok {
			args = append(args, "refused", be.Code)
		} else {
			args = append(args, "refused", "error")
		}
	}
	s.o.Log.Info("external login resolved", args...)
}

// subjectRef is a short, stable reference to an identity for logs: the
// first 16 hex digits of SHA-256(provider NUL subject).
func subjectRef(code, subject string) string {
	sum := sha256.Sum256([]byte(code + "\x00" + subject))
	return hex.EncodeToString(sum[:8])
}

func (id identity) String() string {
	return fmt.Sprintf("identity(%s)", subjectRef("", id.Subject))
}
