package externalauth

import (
	"net"
	"testing"
)

func TestHostAllowed(t *testing.T) {
	local := &net.TCPAddr{IP: net.ParseIP("192.168.1.5"), Port: 5100}
	tests := []struct {
		name, scheme, host, listen string
		local                      net.Addr
		want                       bool
	}{
		{"the listen address", "http", "localhost:5100", "localhost:5100", nil, true},
		{"listen host in other case", "http", "LocalHost:5100", "localhost:5100", nil, true},
		{"loopback IP for localhost", "http", "127.0.0.1:5100", "localhost:5100", nil, true},
		{"IPv6 loopback for localhost", "http", "[::1]:5100", "localhost:5100", nil, true},
		{"loopback name on a wildcard listener", "http", "localhost:5100", ":5100", nil, true},
		{"default port of http", "http", "example.com", "example.com:80", nil, true},
		{"default port of https", "https", "example.com", "example.com:443", nil, true},
		{"the connection's local address", "http", "192.168.1.5:5100", ":5100", local, true},
		{"another name", "http", "evil.example", "localhost:5100", nil, false},
		{"another name on the listen port", "http", "evil.example:5100", "localhost:5100", local, false},
		{"another name on a wildcard listener", "http", "evil.example:5100", "0.0.0.0:5100", local, false},
		{"the listen host on another port", "http", "localhost:5101", "localhost:5100", nil, false},
		{"a name listening on loopback is not a loopback name", "http", "devbox:5100", "127.0.0.1:5100", nil, false},
		{"another local IP", "http", "192.168.1.6:5100", ":5100", local, false},
		{"an unspecified local address", "http", "0.0.0.0:5100", "localhost:5100", &net.TCPAddr{IP: net.IPv4zero, Port: 5100}, false},
		{"empty Host", "http", "", "localhost:5100", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hostAllowed(tt.scheme, tt.host, tt.listen, tt.local); got != tt.want {
				t.Fatalf("hostAllowed(%q, %q, %q, %v) = %v, want %v", tt.scheme, tt.host, tt.listen, tt.local, got, tt.want)
			}
		})
	}
}
