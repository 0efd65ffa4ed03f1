// Package textclip cuts text to a length limit. It is the one place the
// kernel shortens a string, and every function says what it counts:
//
//   - Runes counts characters (Unicode code points, what the spec's and the
//     schema's "chars" limits mean). A cut never splits a character.
//   - Bytes counts bytes (what a bound on the size of a log line or an
//     error text means). A cut may split a multi-byte character.
//
// A string within its limit is returned unchanged by every function except
// ValidRunes, which always returns valid UTF-8.
package textclip

import (
	"strings"
	"unicode/utf8"
)

// Runes returns s when it has at most n runes (invalid UTF-8 bytes count
// one rune each, as utf8.RuneCountInString counts them), else its first n
// runes; each invalid byte among the kept ones becomes U+FFFD, as in
// string([]rune(s)[:n]). n <= 0 gives "".
func Runes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	var b strings.Builder
	b.Grow(n)
	for _, r := range s {
		if n == 0 {
			break
		}
		b.WriteRune(r)
		n--
	}
	return b.String()
}

// ValidRunes returns s as valid UTF-8 (each run of invalid bytes replaced by
// one U+FFFD, as strings.ToValidUTF8 does) cut to at most n runes. It is
// for values written to a text column, which a database may refuse when
// they are not valid UTF-8. n <= 0 gives "".
func ValidRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return s[:RuneOffset(s, n)]
}

// RuneOffset returns the byte offset in s just after its first n runes, or
// len(s) when s has at most n runes; s[:RuneOffset(s, n)] is s cut to n
// runes with its bytes unchanged. n <= 0 gives 0.
func RuneOffset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	if len(s) <= n {
		return len(s)
	}
	i := 0
	for pos := range s {
		if i == n {
			return pos
		}
		i++
	}
	return len(s)
}

// Bytes returns s when it has at most n bytes, else its first n bytes (a
// multi-byte character at the cut is split). n <= 0 gives "".
func Bytes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// BytesMarked is Bytes followed by mark ("…", say) when s was cut, so a
// reader sees that the text goes on.
func BytesMarked(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	return Bytes(s, n) + mark
}
