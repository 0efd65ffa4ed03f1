package notice

import (
	"bytes"
	"encoding/json"
	"errors"
)

// TextOrFlag is an action's confirm or comment. The kernel's console sends
// a text (the confirmation's wording, the button's tooltip); the original
// admin UI sends a boolean flag (confirm: ask before running; comment: ask
// the reader for a remark). Either is accepted and stored as sent, so each
// client reads back what it wrote; null and absent are nil.
type TextOrFlag struct {
	Text *string
	Flag *bool
}

// UnmarshalJSON takes a JSON string, a boolean or null.
func (t *TextOrFlag) UnmarshalJSON(b []byte) error {
	*t = TextOrFlag{}
	switch b = bytes.TrimSpace(b); {
	case bytes.Equal(b, []byte("null")):
		return nil
	case bytes.Equal(b, []byte("true")), bytes.Equal(b, []byte("false")):
		v := b[0] == 't'
		t.Flag = &v
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		t.Text = &s
		return nil
	}
	return errors.New("a text or a boolean")
}

// MarshalJSON writes what was accepted.
func (t TextOrFlag) MarshalJSON() ([]byte, error) {
	switch {
	case t.Flag != nil:
		return json.Marshal(*t.Flag)
	case t.Text != nil:
		return json.Marshal(*t.Text)
	}
	return []byte("null"), nil
}

// IsZero reports an absent value (omitempty).
func (t TextOrFlag) IsZero() bool { return t.Flag == nil && t.Text == nil }
