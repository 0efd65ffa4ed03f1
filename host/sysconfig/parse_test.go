package sysconfig

import "testing"

func TestParseBool(t *testing.T) {
	tests := []struct {
		in   string
		def  bool
		want bool
	}{
		{"true", false, true},
		{" TRUE\t", false, true},
		{"True", false, true},
		{"1", false, true},
		{"false", true, false},
		{" False ", true, false},
		{"0", true, false},
		{"", true, true},
		{"", false, false},
		{"yes", false, false},
		{"yes", true, true},
		{"10", false, false},
		{"truee", true, true},
		{"t", false, false},
	}
	for _, tc := range tests {
		if got := ParseBool(tc.in, tc.def); got != tc.want {
			t.Errorf("ParseBool(%q, %v) = %v, want %v", tc.in, tc.def, got, tc.want)
		}
		if got := parseBool([]byte(tc.in), tc.def); got != tc.want {
			t.Errorf("parseBool(%q, %v) = %v, want %v", tc.in, tc.def, got, tc.want)
		}
	}
}
