package pluginsdk

import "fmt"

// ErrorKind classifies a domain failure of Exchange.
type ErrorKind string

// Kinds of ProviderError.
const (
	// ExchangeFailed: the vendor refused the code or returned an unusable
	// answer (for OIDC: the ID token failed validation).
	ExchangeFailed ErrorKind = "exchange_failed"
	// InvalidCallback: the callback query is malformed (no code, an
	// unexpected issuer, ...).
	InvalidCallback ErrorKind = "invalid_callback"
	// Misconfigured: the provider's settings are missing or wrong.
	Misconfigured ErrorKind = "misconfigured"
	// Denied: the user or the vendor declined the authorization.
	Denied ErrorKind = "denied"
)

// ProviderError is a domain failure returned as data. Message is for the
// kernel's log: it must not contain secrets, tokens or codes.
type ProviderError struct {
	Kind    ErrorKind
	Message string
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

// Fail returns an ExchangeResponse carrying a domain failure.
func Fail(kind ErrorKind, format string, args ...any) ExchangeResponse {
	return ExchangeResponse{Error: &ProviderError{Kind: kind, Message: fmt.Sprintf(format, args...)}}
}

// Succeed returns an ExchangeResponse carrying an identity.
func Succeed(id Identity) ExchangeResponse {
	return ExchangeResponse{Identity: &id}
}
