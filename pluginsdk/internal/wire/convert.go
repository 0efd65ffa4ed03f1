package wire

import (
	"strings"
	"unicode/utf8"

	providerv1 "github.com/adminkernel/kernel/pluginsdk/internal/proto/kernel/provider/v1"
)

// ValidUTF8 makes s valid UTF-8, which protobuf strings must be: a callback
// query comes from the browser and a vendor may answer anything. Invalid
// bytes become U+FFFD.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// UTF8Map applies ValidUTF8 to the keys and values of m; nil stays nil.
func UTF8Map(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[ValidUTF8(k)] = ValidUTF8(v)
	}
	return out
}

// The values of pluginsdk.ErrorKind (a test of pluginsdk checks that the
// two lists agree).
const (
	KindExchangeFailed  = "exchange_failed"
	KindInvalidCallback = "invalid_callback"
	KindMisconfigured   = "misconfigured"
	KindDenied          = "denied"
)

var kinds = map[string]providerv1.ErrorKind{
	KindExchangeFailed:  providerv1.ErrorKind_ERROR_KIND_EXCHANGE_FAILED,
	KindInvalidCallback: providerv1.ErrorKind_ERROR_KIND_INVALID_CALLBACK,
	KindMisconfigured:   providerv1.ErrorKind_ERROR_KIND_MISCONFIGURED,
	KindDenied:          providerv1.ErrorKind_ERROR_KIND_DENIED,
}

// KindToProto maps an ErrorKind to the wire; a kind this version does not
// know travels as UNSPECIFIED, which the host reads as exchange_failed.
func KindToProto(kind string) providerv1.ErrorKind {
	if k, ok := kinds[kind]; ok {
		return k
	}
	return providerv1.ErrorKind_ERROR_KIND_UNSPECIFIED
}

// KindFromProto maps a wire ErrorKind back; an unknown or unspecified kind
// is read as exchange_failed.
func KindFromProto(kind providerv1.ErrorKind) string {
	for name, k := range kinds {
		if k == kind {
			return name
		}
	}
	return KindExchangeFailed
}
