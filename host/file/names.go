package file

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNameRunes bounds a stored original name (sys_file.original_name).
const maxNameRunes = 200

// CleanName turns a client-sent file name into the name kept in sys_file
// and shown in Content-Disposition: the last path element (either
// separator), without control or format characters, trimmed of spaces and
// dots at the ends, at most maxNameRunes runes (the extension kept). It is
// never used to build a storage path. "" when nothing is left.
func CleanName(name string) string {
	name = strings.ToValidUTF8(name, "")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '"' {
			return -1
		}
		return r
	}, name)
	name = strings.Trim(name, " .")
	if utf8.RuneCountInString(name) > maxNameRunes {
		ext := Ext(name)
		if utf8.RuneCountInString(ext) > 32 {
			ext = ""
		}
		r := []rune(strings.TrimSuffix(name, ext))
		name = string(r[:maxNameRunes-utf8.RuneCountInString(ext)]) + ext
	}
	return name
}

// Ext is the lower-case extension of a cleaned name, with its dot ("" when
// it has none).
func Ext(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if ext == "." || utf8.RuneCountInString(ext) > 32 {
		return ""
	}
	return ext
}

// Disposition is the Content-Disposition value of a file answer (RFC 6266):
// an ASCII fallback filename (other characters as '_') and filename* with
// the UTF-8 name percent-encoded (RFC 8187).
func Disposition(kind, name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == '%' || r == ';':
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	return kind + `; filename="` + b.String() + `"; filename*=UTF-8''` + pathEscape(name)
}

// pathEscape percent-encodes every byte outside RFC 8187's attr-char.
func pathEscape(s string) string {
	const attr = "!#$&+-.^_`|~"
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(attr, c) >= 0) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// allowedExts parses sys.upload.allowedExtensions: comma-separated,
// case-insensitive, with or without the leading dot.
func allowedExts(v string) map[string]bool {
	out := map[string]bool{}
	for _, e := range strings.Split(v, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		out[e] = true
	}
	return out
}
