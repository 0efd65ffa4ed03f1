package socialchat

import (
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/internal/vendorfake"
	"github.com/adminkernel/kernel/internal/vendortest"
	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

// TestConformance runs the SDK's conformance kit against the provider
// pointed at the fake vendor, directly and through the gRPC plugin wire.
func TestConformance(t *testing.T) {
	f := vendorfake.NewWeChat(t)
	opts := providertest.Options{
		Code:        Code,
		Settings:    settingsFor(f),
		Required:    []string{"AppId", "AppSecret"},
		RedirectURI: redirectURI,
		Login:       vendortest.Login(redirectURI),
		BadCode:     "forgedcode",
	}
	providertest.Run(t, func(t *testing.T) pluginsdk.Provider { return New(hclog.NewNullLogger()) }, opts)
	t.Run("grpc", func(t *testing.T) {
		providertest.Run(t, func(t *testing.T) pluginsdk.Provider {
			return providertest.InProcess(t, New(hclog.NewNullLogger()))
		}, opts)
	})
	t.Run("binary", func(t *testing.T) {
		// The built plugin, started as the kernel starts it.
		providertest.LaunchWith(t, vendortest.Binary(t, Code), opts)
	})
}
