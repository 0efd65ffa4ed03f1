package request

import (
	"strings"
	"unicode/utf8"
)

// RequiredText trims s and checks it is non-empty and at most max runes; a
// blank or longer value is the 48002 error naming field.
func RequiredText(field, s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || utf8.RuneCountInString(s) > max {
		return "", Invalid(field)
	}
	return s, nil
}

// OptionalText trims *s: absent or blank gives nil, longer than max runes
// is the 48002 error naming field.
func OptionalText(field string, s *string, max int) (*string, error) {
	if s == nil {
		return nil, nil
	}
	v := strings.TrimSpace(*s)
	if v == "" {
		return nil, nil
	}
	if utf8.RuneCountInString(v) > max {
		return nil, Invalid(field)
	}
	return &v, nil
}

// BoolOr returns *b, or def when the field was omitted.
func BoolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}
