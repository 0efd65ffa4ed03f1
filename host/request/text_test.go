package request

import (
	"errors"
	"testing"

	"github.com/adminkernel/kernel/host/errcode"
)

func TestRequiredAndOptionalText(t *testing.T) {
	ptr := func(s string) *string { return &s }
	cases := []struct {
		name    string
		in      *string
		max     int
		want    *string // nil: absent (optional) or invalid (required)
		invalid bool
	}{
		{"trimmed", ptr("  ab "), 2, ptr("ab"), false},
		{"counts runes", ptr("日本"), 2, ptr("日本"), false},
		{"too long", ptr("abc"), 2, nil, true},
		{"blank", ptr("   "), 2, nil, false},
		{"absent", nil, 2, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := OptionalText("f", tc.in, tc.max)
			if invalid := isInvalid(err); invalid != tc.invalid {
				t.Fatalf("OptionalText err = %v", err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("OptionalText = %v, want %v", got, tc.want)
			}
			if tc.in == nil {
				return
			}
			s, err := RequiredText("f", *tc.in, tc.max)
			wantInvalid := tc.want == nil
			if isInvalid(err) != wantInvalid || (!wantInvalid && s != *tc.want) {
				t.Fatalf("RequiredText = %q, %v", s, err)
			}
		})
	}
	if BoolOr(nil, true) != true || BoolOr(new(bool), true) != false {
		t.Fatal("BoolOr")
	}
}

func isInvalid(err error) bool {
	var e *errcode.Error
	return errors.As(err, &e) && e.Code == errcode.RequestInvalid && e.Args["field"] == "f"
}
