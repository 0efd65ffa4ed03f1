package oidc_test

import (
	"testing"

	"github.com/adminkernel/kernel/host/idp/oidc"
	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

// The built-in OIDC provider passes the same conformance kit as every
// plugin provider: in process, and served over the plugin wire.
func TestConformance(t *testing.T) {
	t.Parallel()
	is := oidctest.New(t)
	newProvider := func(t *testing.T) pluginsdk.Provider {
		p, err := oidc.New(oidc.Config{Code: "sso", DisplayName: "Corporate SSO", Authority: is.URL, ClientID: is.ClientID, ClientSecret: is.ClientSecret, UsePKCE: true})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	opts := providertest.Options{
		Code: "sso",
		Settings: pluginsdk.Settings{
			"Authority":    is.URL,
			"ClientId":     is.ClientID,
			"ClientSecret": is.ClientSecret,
			"UsePkce":      "true",
		},
		Required: []string{"Authority", "ClientId"},
		BadCode:  "a-code-the-issuer-never-issued",
		Login: func(t *testing.T, authorizeURL string) map[string]string {
			q := map[string]string{}
			for k, v := range is.Login(t, authorizeURL, "alice").Query() {
				q[k] = v[0]
			}
			return q
		},
	}
	t.Run("in-process", func(t *testing.T) {
		t.Parallel()
		providertest.Run(t, newProvider, opts)
	})
	t.Run("grpc", func(t *testing.T) {
		t.Parallel()
		providertest.Run(t, func(t *testing.T) pluginsdk.Provider {
			return providertest.InProcess(t, newProvider(t))
		}, opts)
	})
}
