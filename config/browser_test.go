package config

import (
	"slices"
	"strings"
	"testing"
)

func TestNormalizeOrigin(t *testing.T) {
	tests := []struct {
		in, want string
		err      string // substring of the error; "" means valid
	}{
		{in: "https://admin.example.com", want: "https://admin.example.com"},
		{in: "  https://admin.example.com  ", want: "https://admin.example.com"},
		{in: "HTTPS://Admin.Example.COM", want: "https://admin.example.com"},
		{in: "https://admin.example.com/", want: "https://admin.example.com"},
		{in: "https://admin.example.com:443", want: "https://admin.example.com"},
		{in: "http://admin.example.com:80", want: "http://admin.example.com"},
		{in: "http://admin.example.com:443", want: "http://admin.example.com:443"},
		{in: "https://admin.example.com:8443", want: "https://admin.example.com:8443"},
		{in: "http://localhost:5173", want: "http://localhost:5173"},
		{in: "http://127.0.0.1:5173", want: "http://127.0.0.1:5173"},
		{in: "http://[::1]:5173", want: "http://[::1]:5173"},
		{in: "http://[2001:DB8::1]", want: "http://[2001:db8::1]"},
		{in: "https://xn--bcher-kva.example", want: "https://xn--bcher-kva.example"},
		{in: "https://admin.example.com:08443", want: "https://admin.example.com:8443"},

		{in: "*", err: "wildcards are refused"},
		{in: "https://*.example.com", err: "wildcards are refused"},
		{in: "", err: "must start with http:// or https://"},
		{in: "admin.example.com", err: "must start with http:// or https://"},
		{in: "//admin.example.com", err: "must start with http:// or https://"},
		{in: "ftp://admin.example.com", err: "must start with http:// or https://"},
		{in: "null", err: "must start with http:// or https://"},
		{in: "https:admin.example.com", err: "has no host"},
		{in: "https://", err: "has no host"},
		{in: "https://user:pw@admin.example.com", err: "user information"},
		{in: "https://admin.example.com/app", err: "must not have a path"},
		{in: "https://admin.example.com//", err: "must not have a path"},
		{in: "https://admin.example.com?x=1", err: "must not have a query"},
		{in: "https://admin.example.com/?", err: "must not have a query"},
		{in: "https://admin.example.com#x", err: "must not have a fragment"},
		{in: "https://admin.example.com/#", err: "must not have a fragment"},
		{in: "https://admin.example.com:", err: "empty port"},
		{in: "https://admin.example.com:0", err: "invalid port"},
		{in: "https://admin.example.com:70000", err: "invalid port"},
		{in: "https://bücher.example", err: "xn-- form"},
		{in: "https://admin example.com", err: "spaces"},
		{in: "https://admin.example.com\\@evil.example", err: "backslashes"},
		{in: "https://admin.example.com\n", want: "https://admin.example.com"}, // TrimSpace
		{in: "https://a\tb.example", err: "control characters"},
		{in: "https://[fe80::1%25en0]", err: "host must be"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := NormalizeOrigin(tt.in)
			if tt.err == "" {
				if err != nil || got != tt.want {
					t.Fatalf("NormalizeOrigin(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("NormalizeOrigin(%q) = %q, %v; want an error containing %q", tt.in, got, err, tt.err)
			}
		})
	}
}

func TestValidateBrowserSettings(t *testing.T) {
	tests := []struct {
		name    string
		env     string // Environment; Production when empty
		origins []string
		result  string // FrontendResultPath; the default when empty
		want    []string
		// wantOrigins is the normalised list (checked when want is empty).
		wantOrigins []string
	}{
		{name: "no origins", wantOrigins: nil},
		{
			name:        "origins normalised, blanks and duplicates dropped",
			origins:     []string{"https://A.example/", "", "  ", "https://a.example:443", "http://localhost:5173"},
			wantOrigins: []string{"https://a.example", "http://localhost:5173"},
		},
		{
			name:    "wildcard refused, naming the key and credentials",
			origins: []string{"https://a.example", "*"},
			want:    []string{`Api:Cors:AllowedOrigins:1 "*" is refused`, "credentials", "list each origin"},
		},
		{
			name:    "every bad entry reported",
			origins: []string{"https://a.example/app", "a.example", "https://u@a.example"},
			want: []string{
				`Api:Cors:AllowedOrigins:0 "https://a.example/app" is not an origin: must not have a path`,
				`Api:Cors:AllowedOrigins:1 "a.example" is not an origin: must start with http:// or https://`,
				`Api:Cors:AllowedOrigins:2 "https://u@a.example" is not an origin: must not carry user information`,
			},
		},
		{name: "result: a path", result: "/oauth/result", wantOrigins: nil},
		{name: "result: a hash-router path", result: "/#/oauth/callback", wantOrigins: nil},
		{name: "result: an absolute https URL", result: "https://app.example.com/oauth/callback"},
		{name: "result: an absolute URL with a fragment and query", result: "https://app.example/#/oauth/callback?from=sso"},
		{name: "result: http allowed outside Production", env: Development, result: "http://localhost:5173/oauth/callback"},
		{
			name:   "result: http refused in Production",
			result: "http://app.example.com/oauth/callback",
			want:   []string{"Service:ExternalAuth:FrontendResultPath", "must be an https URL in Production"},
		},
		{
			name:   "result: protocol-relative refused",
			result: "//evil.example/cb",
			want:   []string{"FrontendResultPath", "starts with //"},
		},
		{
			name:   "result: backslash refused",
			result: "/\\evil.example/cb",
			want:   []string{"FrontendResultPath", "backslashes"},
		},
		{
			name:   "result: relative path refused",
			result: "oauth/callback",
			want:   []string{"FrontendResultPath", "must be a path starting with /"},
		},
		{
			name:   "result: other scheme refused",
			result: "javascript:alert(1)",
			want:   []string{"FrontendResultPath", "must be a path starting with /"},
		},
		{
			name:   "result: no host refused",
			result: "https:///cb",
			want:   []string{"FrontendResultPath", "absolute http or https URL"},
		},
		{
			name:   "result: user information refused",
			result: "https://user@app.example.com/cb",
			want:   []string{"FrontendResultPath", "user information"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			if tt.env != "" {
				c.Environment = tt.env
			}
			c.API.Cors.AllowedOrigins = tt.origins
			if tt.result != "" {
				c.Service.ExternalAuth.FrontendResultPath = tt.result
			}
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if len(c.API.Cors.AllowedOrigins) != 0 || len(tt.wantOrigins) != 0 {
					if !slices.Equal(c.API.Cors.AllowedOrigins, tt.wantOrigins) {
						t.Errorf("AllowedOrigins = %q, want %q", c.API.Cors.AllowedOrigins, tt.wantOrigins)
					}
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

func TestFrontendOriginWarning(t *testing.T) {
	tests := []struct {
		name, result, callback string
		origins                []string
		warn                   bool
	}{
		{name: "a path", result: "/oauth/callback"},
		{name: "the backend's origin", result: "https://admin.example.com/#/cb", callback: "https://Admin.example.com:443/gw"},
		{name: "a listed origin", result: "https://app.example.com/cb", callback: "https://api.example.com", origins: []string{"https://app.example.com"}},
		{name: "neither", result: "https://app.example.com/cb", callback: "https://api.example.com", origins: []string{"https://other.example.com"}, warn: true},
		{name: "no callback base, not listed", result: "http://localhost:5173/cb", warn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			c.Environment = Development
			c.Service.ExternalAuth.FrontendResultPath = tt.result
			c.Service.ExternalAuth.CallbackBaseURL = tt.callback
			c.API.Cors.AllowedOrigins = tt.origins
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			var found []string
			for _, w := range c.Warnings() {
				if strings.Contains(w, "FrontendResultPath") {
					found = append(found, w)
				}
			}
			if tt.warn != (len(found) == 1) || len(found) > 1 {
				t.Fatalf("warnings about FrontendResultPath = %q, want one: %v", found, tt.warn)
			}
		})
	}
}
