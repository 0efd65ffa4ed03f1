package request_test

import (
	"testing"

	"github.com/adminkernel/kernel/host/request"
)

func TestIsJSONContentType(t *testing.T) {
	for _, tt := range []struct {
		ct   string
		want bool
	}{
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"APPLICATION/JSON;charset=UTF-8", true},
		{"  application/json  ", true},
		{"application/problem+json", true},
		{"application/vnd.api+json; charset=utf-8", true},
		{"", false},
		{"text/plain", false},
		{"text/json", false},
		{"application/x-www-form-urlencoded", false},
		{"multipart/form-data; boundary=x", false},
		{"application/jsonp", false},
		{"application/+json", false},
		{"application/a/b+json", false},
		{"application/json-seq", false},
		{"application/", false},
	} {
		t.Run(tt.ct, func(t *testing.T) {
			if got := request.IsJSONContentType([]byte(tt.ct)); got != tt.want {
				t.Fatalf("IsJSONContentType(%q) = %v, want %v", tt.ct, got, tt.want)
			}
		})
	}
}
