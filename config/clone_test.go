package config

import (
	"reflect"
	"testing"
)

func TestCloneIsDeep(t *testing.T) {
	pkce := true
	c := Defaults()
	c.Service.HTTP.TrustedProxies = []string{"10.0.0.1"}
	c.Service.ExternalAuth.Oidc = []OIDCProvider{{Code: "a", UsePkce: &pkce}}
	c.Service.ExternalAuth.EnterpriseChat = VendorSettings{"CorpId": "x"}
	c.Service.ExternalAuth.PluginSHA256 = map[string]string{"a": "b"}
	c.API.DisabledModules = []string{"Meta"}
	c.Service.Outbound.AllowedRanges = []string{"10.0.0.0/8"}
	r := 0.5
	c.Service.Telemetry.Tracing = Tracing{SampleRatio: &r, Headers: map[string]Secret{"k": "v"}}
	cl := c.Clone()
	if !reflect.DeepEqual(&c, cl) {
		t.Fatal("clone differs from the original")
	}
	cl.Service.HTTP.TrustedProxies[0] = "changed"
	*cl.Service.ExternalAuth.Oidc[0].UsePkce = false
	cl.Service.ExternalAuth.Oidc[0].Code = "changed"
	cl.Service.ExternalAuth.EnterpriseChat["CorpId"] = "changed"
	cl.Service.ExternalAuth.PluginSHA256["a"] = "changed"
	cl.API.DisabledModules[0] = "changed"
	cl.Service.Outbound.AllowedRanges[0] = "changed"
	cl.Logging.LogLevel["Default"] = "changed"
	*cl.Service.Telemetry.Tracing.SampleRatio = 1
	cl.Service.Telemetry.Tracing.Headers["k"] = "changed"
	if r != 0.5 || c.Service.Telemetry.Tracing.Headers["k"] != "v" {
		t.Fatal("changing the clone's tracing settings changed the original")
	}
	if c.Service.HTTP.TrustedProxies[0] != "10.0.0.1" || !pkce || c.Service.ExternalAuth.Oidc[0].Code != "a" ||
		c.Service.ExternalAuth.EnterpriseChat["CorpId"] != "x" || c.Service.ExternalAuth.PluginSHA256["a"] != "b" ||
		c.API.DisabledModules[0] != "Meta" || c.Service.Outbound.AllowedRanges[0] != "10.0.0.0/8" || c.Logging.LogLevel["Default"] != "Information" {
		t.Fatal("changing the clone changed the original")
	}
}
