package config

import (
	"slices"
	"strings"
	"testing"
)

// Service:Security:Passkey is validated like CallbackBaseUrl and the CORS
// origins: a bare host name as RpId, serialized origins that are https (or
// http on loopback hosts) and on the relying party.
func TestValidatePasskey(t *testing.T) {
	pk := func(rp string, origins ...string) func(*Config) {
		return func(c *Config) {
			c.Service.Security.Passkey.RpID = rp
			c.Service.Security.Passkey.Origins = origins
		}
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		want   []string
	}{
		{name: "off: nothing set"},
		{name: "https origin on the RP", mutate: pk("example.com", "https://admin.example.com", "https://example.com:8443")},
		{name: "localhost over http", mutate: pk("localhost", "http://localhost:5100")},
		{name: "loopback address over http", mutate: pk("localhost", "http://127.0.0.1:5100"), want: []string{`"http://127.0.0.1:5100" is not on the relying party "localhost"`}},
		{name: "http origin of a public host", mutate: pk("example.com", "http://admin.example.com"), want: []string{"must be https"}},
		{name: "origin on another site", mutate: pk("example.com", "https://example.org"), want: []string{"is not on the relying party"}},
		{name: "suffix without a dot is another site", mutate: pk("example.com", "https://badexample.com"), want: []string{"is not on the relying party"}},
		{name: "origin with a path", mutate: pk("example.com", "https://admin.example.com/app"), want: []string{"Origins:0", "must not have a path"}},
		{name: "RpId with a scheme", mutate: pk("https://example.com", "https://example.com"), want: []string{"RpId", "must be a host name"}},
		{name: "RpId with a port", mutate: pk("example.com:443", "https://example.com"), want: []string{"RpId", "must be a host name"}},
		{name: "RpId an IP address", mutate: pk("10.0.0.1", "https://10.0.0.1"), want: []string{"is an IP address"}},
		{name: "RpId without origins", mutate: pk("example.com"), want: []string{"Origins is empty"}},
		{name: "origins without RpId in Production", mutate: pk("", "https://admin.example.com"), want: []string{"set without Service:Security:Passkey:RpId"}},
		{
			name:   "display name too long",
			mutate: func(c *Config) { c.Service.Security.Passkey.RpDisplayName = strings.Repeat("x", 65) },
			want:   []string{"RpDisplayName has 65 characters"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			if tt.mutate != nil {
				tt.mutate(c)
			}
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate succeeded, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestPasskeyRP(t *testing.T) {
	c := validConfig()
	c.Service.Security.Passkey.RpID = " Example.COM. "
	c.Service.Security.Passkey.Origins = []string{"https://Admin.Example.com:443/", "", "https://admin.example.com"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	rp, name, origins, on := c.PasskeyRP()
	if !on || rp != "example.com" || name != "AdminKernel" || !slices.Equal(origins, []string{"https://admin.example.com"}) {
		t.Fatalf("PasskeyRP = %q %q %v %v", rp, name, origins, on)
	}
	d := validConfig()
	d.Environment = Development
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if rp, _, origins, on := d.PasskeyRP(); !on || rp != DevPasskeyRpID || !slices.Equal(origins, []string{DevPasskeyOrigin}) {
		t.Fatalf("Development PasskeyRP = %q %v %v", rp, origins, on)
	}
	s := validConfig()
	s.Environment = Staging
	if _, _, _, on := s.PasskeyRP(); on {
		t.Fatal("Staging without RpId has passkeys on")
	}
}
