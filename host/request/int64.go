package request

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

// Int64 is an integer in a request body: a JSON number or, as the wire
// contract allows (§1.2), a quoted number ("42"). null and "" read as 0.
type Int64 int64

// UnmarshalJSON accepts 42 and "42".
func (n *Int64) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	quoted := len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"'
	if quoted {
		b = bytes.TrimSpace(b[1 : len(b)-1])
		if len(b) == 0 {
			*n = 0
			return nil
		}
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		kind := "number"
		if quoted {
			kind = "string"
		}
		return &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeFor[Int64]()}
	}
	*n = Int64(v)
	return nil
}
