package configcenter

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

var reflectInt = reflect.TypeFor[int64]()

// flexInt is a JSON integer that also accepts a quoted number (wire
// contract §1.2: numbers may arrive as strings); null is 0.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*f = 0
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = bytes.TrimSpace([]byte(s))
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return &json.UnmarshalTypeError{Value: "number " + string(b), Type: reflectInt}
	}
	*f = flexInt(n)
	return nil
}
