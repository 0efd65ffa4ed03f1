package config

// Secret holds a sensitive setting. It prints as *** through fmt, JSON and
// logs; Reveal returns the value for the code that needs it.
type Secret string

const masked = "***"

// Reveal returns the secret value.
func (s Secret) Reveal() string { return string(s) }

// IsSet reports whether a value is present.
func (s Secret) IsSet() bool { return s != "" }

// String masks the value.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return masked
}

// GoString masks the value for %#v.
func (s Secret) GoString() string { return `config.Secret("` + s.String() + `")` }

// MarshalJSON masks the value.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// MarshalText masks the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
