package doctor

// texts are the English texts of the message and hint keys; the console
// translates the same keys (console/src/i18n/doctor.ts).
//
//nolint:gosec // message texts that mention credentials, not credentials
var texts = map[string]string{
	"doctor.status.ready":             "The provider is ready.",
	"doctor.status.problem":           "The provider is {status}: {reason}",
	"doctor.hint.status":              "Fix what the reason says and restart the kernel; adminkernel providers lists the same status.",
	"doctor.settings.ok":              "{section} holds the settings the provider needs ({keys}).",
	"doctor.settings.empty":           "{section} is empty: the provider is not configured.",
	"doctor.settings.missing":         "{section} lacks {keys}.",
	"doctor.settings.badUrl":          "{section}: {key} is not an http(s) URL without query or user name.",
	"doctor.hint.settings":            "Set the keys in appsettings.json or in the environment (Service__ExternalAuth__...), then restart the kernel.",
	"doctor.settings.pluginOnly":      "{section} is set. The kernel does not know the settings of the plugin {code}: only the plugin checks them (its status), and the vendor checks need the plugin.",
	"doctor.dns.ok":                   "{host} resolves ({addrs}).",
	"doctor.dns.fail":                 "{host} does not resolve: {error}.",
	"doctor.hint.dns":                 "Check the server's DNS and the host in the settings (a host override such as ApiBase).",
	"doctor.reach.ok":                 "{host} answers (HTTP {httpStatus}).",
	"doctor.reach.fail":               "{host} does not answer: {error}.",
	"doctor.hint.reach":               "Check the firewall and the outbound proxy of the server (HTTPS_PROXY) for this host.",
	"doctor.credentials.ok":           "{vendor} accepted the credentials ({check}).",
	"doctor.credentials.refused":      "{vendor} refused the credentials ({check}: {detail}).",
	"doctor.hint.credentials":         "Copy the app's id and secret again from the vendor's console into the settings; a secret that was reset there must be replaced here.",
	"doctor.credentials.ipNotTrusted": "{vendor} refused the call from this server's IP address ({detail}).",
	"doctor.hint.ipNotTrusted":        "Add the server's outbound IP addresses to the app's trusted IPs (企业可信IP) in the WeCom admin console.",
	"doctor.credentials.unexpected":   "{vendor} gave an unexpected answer to the credentials check ({check}: {detail}).",
	"doctor.credentials.skipped":      "The credentials were not checked: {vendor}'s API host does not answer.",
	"doctor.redirect.register":        "Register the redirect URI {redirectUri} with the provider.",
	"doctor.redirect.weCom":           "Register {trustedDomain} as the app's trusted domain (网页授权及JS-SDK) and as its authorized callback domain (企业微信授权登录); the callback is {redirectUri}.",
	"doctor.redirect.dingTalk":        "Register the redirect URL {redirectUri} in the app's security settings (重定向URL).",
	"doctor.redirect.gitHub":          "Set the OAuth app's authorization callback URL to {redirectUri} (same host and port).",
	"doctor.redirect.weChat":          "Register {domain} as the website app's authorized callback domain (授权回调域); the callback is {redirectUri}.",
	"doctor.redirect.port":            "The callback {redirectUri} uses a port other than 80/443, which WeChat does not accept.",
	"doctor.hint.port":                "Serve the callback on the default port (set Service:ExternalAuth:CallbackBaseUrl to the public https address without a port).",
	"doctor.redirect.http":            "The callback {redirectUri} is plain http on a public host.",
	"doctor.hint.http":                "Use https in Service:ExternalAuth:CallbackBaseUrl.",
	"doctor.redirect.unknown":         "The redirect URI is not known: {reason}.",
	"doctor.hint.redirect":            "Set Service:ExternalAuth:CallbackBaseUrl to the public root of the kernel.",
	"doctor.oidc.discoveryOk":         "The discovery document {url} is usable.",
	"doctor.oidc.discoveryFail":       "The discovery document {url} is not usable: {error}.",
	"doctor.hint.discovery":           "Check the Authority: it must be the issuer URL, which serves /.well-known/openid-configuration.",
	"doctor.oidc.issuerOk":            "The discovery document names the Authority as its issuer.",
	"doctor.oidc.issuerMismatch":      "The discovery document names the issuer {issuer}, not the Authority {authority}.",
	"doctor.hint.issuer":              "Set Authority to exactly the issuer the provider reports (scheme, host, port and path, no trailing slash): ID tokens are checked against it.",
	"doctor.oidc.jwksOk":              "The key set {url} holds {count} key(s).",
	"doctor.oidc.jwksFail":            "The key set {url} is not usable: {error}.",
	"doctor.hint.jwks":                "Check that the provider serves its signing keys at its jwks_uri and that this server reaches it.",
}

// hints names the hint of each message that has one.
//
//nolint:gosec // message keys that mention credentials, not credentials
var hints = map[string]string{
	"doctor.status.problem":           "doctor.hint.status",
	"doctor.settings.empty":           "doctor.hint.settings",
	"doctor.settings.missing":         "doctor.hint.settings",
	"doctor.settings.badUrl":          "doctor.hint.settings",
	"doctor.dns.fail":                 "doctor.hint.dns",
	"doctor.reach.fail":               "doctor.hint.reach",
	"doctor.credentials.refused":      "doctor.hint.credentials",
	"doctor.credentials.ipNotTrusted": "doctor.hint.ipNotTrusted",
	"doctor.credentials.skipped":      "doctor.hint.reach",
	"doctor.redirect.port":            "doctor.hint.port",
	"doctor.redirect.http":            "doctor.hint.http",
	"doctor.redirect.unknown":         "doctor.hint.redirect",
	"doctor.oidc.discoveryFail":       "doctor.hint.discovery",
	"doctor.oidc.issuerMismatch":      "doctor.hint.issuer",
	"doctor.oidc.jwksFail":            "doctor.hint.jwks",
}

// Keys lists every message and hint key (for the console's translations).
func Keys() []string {
	out := make([]string, 0, len(texts))
	for k := range texts {
		out = append(out, k)
	}
	return out
}

// Text is the English text of a message or hint key ("" when unknown).
func Text(key string) string { return texts[key] }
