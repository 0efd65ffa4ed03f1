package pluginsdk

// Bounds of the optional descriptor fields Icon and Brand.
const (
	// MaxIconLen is the longest Icon the kernel accepts.
	MaxIconLen = 64
	// MaxBrandLen is the longest Brand the kernel accepts.
	MaxBrandLen = 32
)

// ValidIcon reports whether icon is a usable Descriptor.Icon: an Iconify
// name "prefix:name" of at most MaxIconLen characters, where the prefix and
// the name are each lowercase letters and digits in groups joined by single
// hyphens ("ant-design:wechat-work-outlined", "mdi:key"). URLs, data URIs,
// uppercase letters, spaces and anything else are refused. The empty
// string is not valid (it means "no icon").
func ValidIcon(icon string) bool {
	if icon == "" || len(icon) > MaxIconLen {
		return false
	}
	prefix, name, ok := cut(icon, ':')
	return ok && hyphenated(prefix, false) && hyphenated(name, false)
}

// ValidBrand reports whether brand is a usable Descriptor.Brand: at most
// MaxBrandLen characters, lowercase letters and digits in groups joined by
// single '_' or '-' ("github", "wecom", "social_chat"). The empty string is
// not valid (it means "no brand").
func ValidBrand(brand string) bool {
	return brand != "" && len(brand) <= MaxBrandLen && hyphenated(brand, true)
}

func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// hyphenated: non-empty groups of [a-z0-9] joined by single '-' (and '_'
// when underscore is set).
func hyphenated(s string, underscore bool) bool {
	if s == "" {
		return false
	}
	prevSep := true // no separator first
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			prevSep = false
		case c == '-' || (underscore && c == '_'):
			if prevSep {
				return false
			}
			prevSep = true
		default:
			return false
		}
	}
	return !prevSep
}
