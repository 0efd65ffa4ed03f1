package org

import (
	"strings"
	"unicode/utf8"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/request"
)

// entityTimeLayout is the contract's entity DateTime: ISO-8601 without an
// offset, in server-local time.

var formatTime = request.EntityTime

var formatTimePtr = request.EntityTimePtr

// flexInt accepts a JSON number or a quoted number (wire contract §1.2).
type flexInt = request.Int64

// principal returns the caller authenticated by the route's guard.
var principal = authn.Require

// requiredText trims s and checks it is non-empty and at most max runes.
func requiredText(field, s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || utf8.RuneCountInString(s) > max {
		return "", request.Invalid(field)
	}
	return s, nil
}

// optionalText trims s; blank becomes nil; longer than max runes is 48002.
func optionalText(field string, s *string, max int) (*string, error) {
	if s == nil {
		return nil, nil
	}
	v := strings.TrimSpace(*s)
	if v == "" {
		return nil, nil
	}
	if utf8.RuneCountInString(v) > max {
		return nil, request.Invalid(field)
	}
	return &v, nil
}

// boolOr returns *b, or def when the field was omitted.
func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}
