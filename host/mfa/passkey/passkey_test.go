package passkey_test

import (
	"context"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/mfa/passkey"
)

// Without a relying party (no RpId outside Development) the service is
// off and every ceremony answers 40031; Development without RpId uses
// localhost and http://localhost:5100.
func TestRelyingPartyFromSettings(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		env     string
		rpID    string
		origins []string
		wantOn  bool
		wantRP  string
	}{
		{"Staging without RpId", config.Staging, "", nil, false, ""},
		{"Production without RpId", config.Production, "", nil, false, ""},
		{"Development default", config.Development, "", nil, true, "localhost"},
		{"configured", config.Production, "example.com", []string{"https://admin.example.com"}, true, "example.com"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.Environment = tt.env
			cfg.Service.Security.Passkey.RpID = tt.rpID
			cfg.Service.Security.Passkey.Origins = tt.origins
			s, err := passkey.New(nil, nil, &cfg)
			if err != nil {
				t.Fatal(err)
			}
			if s.Enabled() != tt.wantOn || s.RPID() != tt.wantRP {
				t.Fatalf("enabled %v RP %q, want %v %q", s.Enabled(), s.RPID(), tt.wantOn, tt.wantRP)
			}
			if tt.wantOn {
				return
			}
			_, err = s.BeginPasswordless(ctx)
			if be, ok := errcode.As(err); !ok || be.Code != errcode.PasskeyDisabled {
				t.Fatalf("begin with passkeys off = %v, want 40031", err)
			}
			_, err = s.BeginRegistration(ctx, passkey.Owner{ID: 1, Account: "a", Name: "a"})
			if be, ok := errcode.As(err); !ok || be.Code != errcode.PasskeyDisabled {
				t.Fatalf("registration with passkeys off = %v, want 40031", err)
			}
		})
	}
}

func TestUserHandleAndCeremonyID(t *testing.T) {
	if h := passkey.UserHandle(1); len(h) != 8 || h[7] != 1 {
		t.Fatalf("UserHandle(1) = %x", h)
	}
	for _, tt := range []struct {
		id   string
		want bool
	}{
		{"", false},
		{"abc", false},
		{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", true},
		{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", false},
		{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA+", false},
	} {
		if got := passkey.ValidCeremonyID(tt.id); got != tt.want {
			t.Errorf("ValidCeremonyID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}
