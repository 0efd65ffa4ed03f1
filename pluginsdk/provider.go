package pluginsdk

import "context"

// ProtocolVersion is the major version of the provider contract implemented
// by this package. Descriptor.ProtocolVersion reports the version a provider
// was built against.
const ProtocolVersion = 1

// Purposes of an authorization (AuthorizeRequest.Purpose).
const (
	// PurposeLogin starts a login.
	PurposeLogin = "login"
	// PurposeBind binds an identity to the signed-in user (personal center).
	PurposeBind = "bind"
)

// CodeChallengeS256 is the only PKCE method the kernel sends.
const CodeChallengeS256 = "S256"

// Provider is an external identity provider. Implementations must be safe
// for concurrent use; every method is given a context carrying the
// kernel's deadline.
type Provider interface {
	// Describe reports what the provider is. It must be cheap and must not
	// call the vendor.
	Describe(ctx context.Context) (Descriptor, error)
	// Configure applies the provider's settings section (key/value pairs
	// from the kernel's application settings, secrets included). An error
	// means the settings cannot be used.
	Configure(ctx context.Context, settings Settings) error
	// AuthorizeURL builds the URL of the vendor's authorization page.
	AuthorizeURL(ctx context.Context, req AuthorizeRequest) (AuthorizeResponse, error)
	// Exchange turns a callback into an identity. Domain failures are
	// returned in ExchangeResponse.Error; the error return means transport
	// trouble. The kernel never retries it.
	Exchange(ctx context.Context, req ExchangeRequest) (ExchangeResponse, error)
}

// Settings is a provider's settings section: plain key/value pairs
// (CorpId, AgentId, CorpSecret, ClientId, ...). Keys are as written in the
// kernel's settings; providers should match them case-insensitively.
type Settings map[string]string

// Descriptor is what Describe reports.
type Descriptor struct {
	// Code is the provider code the kernel registers the provider under
	// (letters, digits and underscores, at most 32 characters).
	Code string
	// DisplayName is shown on the login page.
	DisplayName string
	// Icon is an optional Iconify icon name "prefix:name" (for example
	// "ant-design:github-outlined"; lowercase letters, digits and hyphens,
	// at most MaxIconLen characters, see ValidIcon). The login page draws
	// it on the provider's button. The kernel drops an invalid icon with a
	// warning and shows the provider without one; never a URL or a secret.
	Icon string
	// Brand is an optional short, stable brand key (for example "github",
	// "wecom"; lowercase letters, digits, '_' and '-', at most MaxBrandLen
	// characters, see ValidBrand). User interfaces that keep their own
	// brand artwork pick it by this key; it does not change between
	// releases of the plugin. The kernel drops an invalid brand with a
	// warning.
	Brand string
	// ProtocolVersion is the contract version the provider implements
	// (ProtocolVersion of the SDK it was built with).
	ProtocolVersion int
}

// AuthorizeRequest carries what the kernel prepared for one authorization.
type AuthorizeRequest struct {
	// State is the one-time state, letters and digits only. The provider
	// must send it to the vendor unchanged.
	State string
	// RedirectURI is the kernel's callback URL for this provider.
	RedirectURI string
	// UserAgent is the User-Agent of the browser that started the login
	// (vendors choose between QR and in-app authorization by it).
	UserAgent string
	// Nonce is a one-time value for OpenID Connect providers (sent as the
	// nonce parameter and expected back in the ID token).
	Nonce string
	// CodeChallenge and CodeChallengeMethod are the PKCE challenge
	// (method CodeChallengeS256). Vendors without PKCE ignore them.
	CodeChallenge       string
	CodeChallengeMethod string
	// Purpose is PurposeLogin or PurposeBind.
	Purpose string
}

// AuthorizeResponse is the result of AuthorizeURL.
type AuthorizeResponse struct {
	// URL is where the browser is sent.
	URL string
	// ProviderData is opaque to the kernel: it is stored with the state and
	// handed back in ExchangeRequest.ProviderData (keep it small; a few
	// kilobytes at most).
	ProviderData []byte
}

// ExchangeRequest carries a callback to the provider.
type ExchangeRequest struct {
	// Query is the callback's query string (code, state, error,
	// error_description, ...), first value of each parameter.
	Query map[string]string
	// RedirectURI is the redirect URI used at authorization.
	RedirectURI string
	// ProviderData is AuthorizeResponse.ProviderData of this login.
	ProviderData []byte
	// Nonce and CodeVerifier are the values whose nonce and challenge were
	// sent at authorization.
	Nonce        string
	CodeVerifier string
}

// ExchangeResponse is the result of Exchange: exactly one of Identity and
// Error is set.
type ExchangeResponse struct {
	Identity *Identity
	Error    *ProviderError
}

// Identity is the person the vendor vouched for.
type Identity struct {
	// Subject is the stable, never reassigned identifier at the vendor
	// (OIDC sub, unionid, enterprise user id, ...); at most 256 characters.
	// It is the binding key and is never shown to users.
	Subject string
	// AccountHint is the vendor's login name or enterprise user id, used to
	// link by account name when the administrator switches that on.
	AccountHint string
	// DisplayName, Email and Phone are optional profile data (Email only
	// when the vendor verified it).
	DisplayName string
	Email       string
	Phone       string
}
