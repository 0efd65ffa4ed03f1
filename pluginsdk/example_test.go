package pluginsdk_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/adminkernel/kernel/pluginsdk"
)

// codeHost is a minimal provider: an OAuth app whose vendor returns a user
// id for a code. Real providers call the vendor over HTTP in Exchange.
type codeHost struct {
	clientID string
}

var _ pluginsdk.Provider = (*codeHost)(nil)

func (p *codeHost) Describe(context.Context) (pluginsdk.Descriptor, error) {
	return pluginsdk.Descriptor{Code: "code_host", DisplayName: "Code Host", Icon: "ant-design:github-outlined", Brand: "github", ProtocolVersion: pluginsdk.ProtocolVersion}, nil
}

func (p *codeHost) Configure(_ context.Context, s pluginsdk.Settings) error {
	for k, v := range s {
		if strings.EqualFold(k, "ClientId") {
			p.clientID = v
		}
	}
	if p.clientID == "" {
		return fmt.Errorf("code_host: ClientId is required")
	}
	return nil
}

func (p *codeHost) AuthorizeURL(_ context.Context, r pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	q := url.Values{"client_id": {p.clientID}, "redirect_uri": {r.RedirectURI}, "state": {r.State}, "scope": {"read:user"}}
	return pluginsdk.AuthorizeResponse{URL: "https://codehost.example/login/oauth/authorize?" + q.Encode()}, nil
}

func (p *codeHost) Exchange(_ context.Context, r pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	if r.Query["error"] != "" {
		return pluginsdk.Fail(pluginsdk.Denied, "vendor error %s", r.Query["error"]), nil
	}
	if r.Query["code"] == "" {
		return pluginsdk.Fail(pluginsdk.InvalidCallback, "no code"), nil
	}
	// Here: POST the code to the vendor, read the user; a network failure
	// is returned as the error, a refused code as pluginsdk.Fail.
	return pluginsdk.Succeed(pluginsdk.Identity{Subject: "583231", AccountHint: "octocat", DisplayName: "The Octocat"}), nil
}

func Example() {
	ctx := context.Background()
	var p pluginsdk.Provider = &codeHost{}
	if err := p.Configure(ctx, pluginsdk.Settings{"ClientId": "abc"}); err != nil {
		panic(err)
	}
	d, _ := p.Describe(ctx)
	fmt.Println(d.Code, d.ProtocolVersion)

	resp, _ := p.Exchange(ctx, pluginsdk.ExchangeRequest{Query: map[string]string{"error": "access_denied"}})
	fmt.Println(resp.Error)

	resp, _ = p.Exchange(ctx, pluginsdk.ExchangeRequest{Query: map[string]string{"code": "c0de", "state": "S"}})
	fmt.Println(resp.Identity.Subject, resp.Identity.AccountHint)
	// Output:
	// code_host 1
	// denied: vendor error access_denied
	// 583231 octocat
}
