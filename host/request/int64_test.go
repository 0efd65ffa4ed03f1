package request_test

import (
	"encoding/json"
	"testing"

	"github.com/adminkernel/kernel/host/request"
)

func TestInt64(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{`42`, 42, false}, {`"42"`, 42, false}, {`" 7 "`, 7, false}, {`""`, 0, false}, {`null`, 0, false},
		{`-3`, -3, false}, {`"x"`, 0, true}, {`1.5`, 0, true}, {`true`, 0, true}, {`"9223372036854775808"`, 0, true},
	}
	for _, tt := range tests {
		var v struct {
			N request.Int64 `json:"n"`
		}
		err := json.Unmarshal([]byte(`{"n":`+tt.in+`}`), &v)
		if (err != nil) != tt.err || (!tt.err && int64(v.N) != tt.want) {
			t.Errorf("%s → %d, %v; want %d, error %v", tt.in, v.N, err, tt.want, tt.err)
		}
	}
}
