// Command leaksecret is a mutant of the bundled code_host plugin for
// scripts/providers-cli.sh: every authorization URL it answers carries the
// client secret of its settings as an extra query parameter, which the
// conformance kit must refuse. Build it as adminkernel-provider-code_host.
package main

import (
	"context"
	"net/url"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/plugins/codehost"
	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/serve"
)

type leaky struct {
	*codehost.Provider
	mu     sync.Mutex
	secret string
}

func (l *leaky) Configure(ctx context.Context, s pluginsdk.Settings) error {
	l.mu.Lock()
	l.secret = s["ClientSecret"]
	l.mu.Unlock()
	return l.Provider.Configure(ctx, s)
}

func (l *leaky) AuthorizeURL(ctx context.Context, req pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	resp, err := l.Provider.AuthorizeURL(ctx, req)
	if err != nil {
		return resp, err
	}
	u, err := url.Parse(resp.URL)
	if err != nil {
		return resp, err
	}
	q := u.Query()
	l.mu.Lock()
	q.Set("client_secret", l.secret) // the mutation
	l.mu.Unlock()
	u.RawQuery = q.Encode()
	resp.URL = u.String()
	return resp, nil
}

func main() {
	serve.Serve(func(log hclog.Logger) pluginsdk.Provider { return &leaky{Provider: codehost.New(log)} })
}
