package doctor

import (
	"sync"

	"github.com/adminkernel/kernel/host/errcode"
)

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

// texts are the English texts of the kernel's language pack (read once):
// the messages and hints are msgKeys whose texts, in every language, live
// in host/errcode/locales/*.json, which the console shows by key.
var texts = sync.OnceValue(func() map[string]string {
	pack, err := errcode.LanguagePack("en-US")
	if err != nil {
		// The packs are embedded: a broken one fails every test.
		panic(err)
	}
	return pack
})

// text is the English text of a message or hint key ("" when unknown).
func text(key string) string { return texts()[key] }
