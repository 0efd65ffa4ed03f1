// Package pluginsdk is the contract between Admin Kernel and an external
// identity provider: the Provider interface and the plain Go values that
// cross it. The kernel's built-in OIDC provider, the plugin client of a
// vendor binary and test fakes all implement the same interface, and the
// kernel keys them by provider code in one registry.
//
// The package imports nothing from the kernel (no host, ent, config or
// Fiber) and nothing outside the standard library: it is the contract
// alone, so a provider package (and its tests) that reads it pulls in no
// go-plugin, gRPC or OpenTelemetry.
//
// # What an author uses
//
// A plugin implements Provider with the plain types of this package and
// reports domain failures with Fail. Its binary's main function hands the
// constructor to serve.Serve (package pluginsdk/serve, the SDK's runtime:
// go-plugin, the gRPC server, tracing):
//
//	func main() { serve.Serve(codehost.New) }
//
// Its tests run the conformance kit, pluginsdk/providertest; its vendor
// calls can use pluginsdk/vendorhttp. go-plugin, gRPC and the protobuf
// messages stay inside the SDK: the handshake, the go-plugin binding and the
// conversions are unexported in pluginsdk/serve or in
// pluginsdk/internal/wire. The kernel's half of the wire is
// pluginsdk/grpcprovider, which authors do not need. The protocol itself is
// kernel/provider/v1/provider.proto (package kernel.provider.v1) for
// plugins written in other languages; its generated Go code is internal to
// the SDK (pluginsdk/internal/proto).
//
// # Who owns what
//
// The kernel owns the browser side of a login: the one-time authorize
// state, the browser-binding cookies, the nonce, the PKCE verifier, the
// redirect URI, tickets, sessions and tokens. A provider owns only the
// conversation with its vendor. Providers are stateless between calls:
// whatever a provider needs to carry from AuthorizeURL to Exchange goes into
// AuthorizeResponse.ProviderData, which the kernel stores with the state and
// hands back in ExchangeRequest.ProviderData. A provider can therefore be
// restarted, or run on another replica, between authorize and callback.
//
// # The calls
//
//  1. Describe reports the provider's code, display name, icon, brand and
//     the protocol version it implements. The kernel calls it when it
//     registers the provider and whenever it lists providers, so it must be
//     cheap and must not call the vendor. Icon (an Iconify name, ValidIcon)
//     and Brand (a brand key, ValidBrand) are optional; the kernel drops an
//     invalid one with a warning and keeps the provider.
//  2. Configure hands the provider its settings section (plain key/value
//     pairs from the kernel's application settings; secrets included, never
//     from the database). It may be called again with new values.
//  3. AuthorizeURL builds the vendor URL the browser is sent to. The kernel
//     supplies the state (letters and digits only), the redirect URI, the
//     User-Agent of the browser, a nonce and a PKCE S256 challenge. A
//     provider whose vendor supports neither ignores them; the kernel's
//     state plus browser binding still protects the callback.
//  4. Exchange turns the callback query (code, state, error, ...) into an
//     Identity. The kernel has already consumed the state and checked the
//     browser binding before it calls Exchange, and it never retries
//     Exchange: vendor authorization codes are single-use.
//
// # Errors
//
// Exchange reports domain failures as data: ExchangeResponse.Error with a
// Kind (the vendor refused the code, the callback is malformed, the provider
// is misconfigured, the user denied access). The error return of every
// method means transport trouble only (the vendor or the plugin process
// could not be reached, a deadline passed). The kernel never inspects error
// strings. Either way the browser ends on the frontend result page with
// error 40015 (OAuthExchangeFailed).
//
// # Identity
//
// Identity.Subject is the stable identifier of the person at the vendor and
// the binding key (provider code, subject): never an email address or a
// changeable login name. AccountHint is the vendor's login name or
// enterprise user id, used only when an administrator switches on
// linkByAccount for the provider.
//
// # Versioning
//
// ProtocolVersion is the major version of this contract (1). Additions that
// old providers and old kernels can ignore (a new optional field, a new
// optional interface) keep the version; anything else creates a new major
// version, and the kernel then speaks both while providers migrate.
package pluginsdk
