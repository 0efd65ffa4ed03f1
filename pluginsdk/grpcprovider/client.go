package grpcprovider

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/adminkernel/kernel/pluginsdk"
	providerv1 "github.com/adminkernel/kernel/pluginsdk/internal/proto/kernel/provider/v1"
	"github.com/adminkernel/kernel/pluginsdk/internal/wire"
)

// client is the host half of the wire: a pluginsdk.Provider that calls a
// plugin process. It is safe for concurrent use. It never retries a call.
type client struct {
	rpc providerv1.ProviderServiceClient
}

var _ pluginsdk.Provider = (*client)(nil)

// newClient returns a client calling the ProviderService on conn.
func newClient(conn grpc.ClientConnInterface) *client {
	return &client{rpc: providerv1.NewProviderServiceClient(conn)}
}

// RemoteError is an error returned by the provider's own method inside the
// plugin (the vendor could not be reached, the settings are unusable, ...),
// carried back as data. The plugin itself is fine.
type RemoteError struct {
	Method  string
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("provider plugin %s: %s", e.Method, e.Message)
}

// TransportError is trouble between the host and the plugin process: the
// process is gone (Code Unavailable), the plugin does not know the call
// (Unimplemented), ... A call that outlives its deadline is not a
// TransportError: its error wraps context.DeadlineExceeded.
type TransportError struct {
	Method string
	Code   codes.Code
	Err    error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("provider plugin %s: %v", e.Method, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// IsTransport reports whether err is trouble reaching the plugin (as
// opposed to an answer of the provider, or the caller's own context
// ending).
func IsTransport(err error) bool {
	var te *TransportError
	return errors.As(err, &te)
}

// callError classifies an error of a gRPC call. When the caller's context
// has ended or the call's deadline passed, the context's error is returned
// (wrapped) so errors.Is(err, context.DeadlineExceeded) holds.
func callError(ctx context.Context, method string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("provider plugin %s: %w", method, cerr)
	}
	code := status.Code(err)
	// The deadline travels with the call, and the plugin's side may see it
	// pass a moment before the caller's context does.
	if code == codes.DeadlineExceeded {
		return fmt.Errorf("provider plugin %s: %w (%w)", method, context.DeadlineExceeded, err)
	}
	return &TransportError{Method: method, Code: code, Err: err}
}

func remote(method string, f *providerv1.Failure) error {
	return &RemoteError{Method: method, Message: f.GetMessage()}
}

// Describe asks the plugin what it is.
func (c *client) Describe(ctx context.Context) (pluginsdk.Descriptor, error) {
	resp, err := c.rpc.Describe(ctx, &providerv1.DescribeRequest{})
	if err != nil {
		return pluginsdk.Descriptor{}, callError(ctx, "Describe", err)
	}
	if f := resp.GetFailure(); f != nil {
		return pluginsdk.Descriptor{}, remote("Describe", f)
	}
	d := resp.GetInfo()
	if d == nil {
		return pluginsdk.Descriptor{}, &RemoteError{Method: "Describe", Message: "the plugin answered no descriptor"}
	}
	return pluginsdk.Descriptor{
		Code:            d.GetCode(),
		DisplayName:     d.GetDisplayName(),
		Icon:            d.GetIcon(),
		Brand:           d.GetBrand(),
		ProtocolVersion: int(d.GetProtocolVersion()),
	}, nil
}

// Configure sends the settings section to the plugin. A refusal by the
// provider is a *RemoteError.
func (c *client) Configure(ctx context.Context, settings pluginsdk.Settings) error {
	resp, err := c.rpc.Configure(ctx, &providerv1.ConfigureRequest{Settings: wire.UTF8Map(settings)})
	if err != nil {
		return callError(ctx, "Configure", err)
	}
	if f := resp.GetFailure(); f != nil {
		return remote("Configure", f)
	}
	return nil
}

// AuthorizeURL asks the plugin for the vendor's authorization URL.
func (c *client) AuthorizeURL(ctx context.Context, req pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	resp, err := c.rpc.AuthorizeURL(ctx, &providerv1.AuthorizeURLRequest{
		State:               wire.ValidUTF8(req.State),
		RedirectUri:         wire.ValidUTF8(req.RedirectURI),
		UserAgent:           wire.ValidUTF8(req.UserAgent),
		Nonce:               wire.ValidUTF8(req.Nonce),
		CodeChallenge:       wire.ValidUTF8(req.CodeChallenge),
		CodeChallengeMethod: wire.ValidUTF8(req.CodeChallengeMethod),
		Purpose:             wire.ValidUTF8(req.Purpose),
	})
	if err != nil {
		return pluginsdk.AuthorizeResponse{}, callError(ctx, "AuthorizeURL", err)
	}
	if f := resp.GetFailure(); f != nil {
		return pluginsdk.AuthorizeResponse{}, remote("AuthorizeURL", f)
	}
	return pluginsdk.AuthorizeResponse{URL: resp.GetUrl(), ProviderData: resp.GetProviderData()}, nil
}

// Exchange sends a callback to the plugin. It is never retried.
func (c *client) Exchange(ctx context.Context, req pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	resp, err := c.rpc.Exchange(ctx, &providerv1.ExchangeRequest{
		Query:        wire.UTF8Map(req.Query),
		RedirectUri:  wire.ValidUTF8(req.RedirectURI),
		ProviderData: req.ProviderData,
		Nonce:        wire.ValidUTF8(req.Nonce),
		CodeVerifier: wire.ValidUTF8(req.CodeVerifier),
	})
	if err != nil {
		return pluginsdk.ExchangeResponse{}, callError(ctx, "Exchange", err)
	}
	switch r := resp.GetResult().(type) {
	case *providerv1.ExchangeResponse_Identity:
		id := r.Identity
		return pluginsdk.Succeed(pluginsdk.Identity{
			Subject:     id.GetSubject(),
			AccountHint: id.GetAccountHint(),
			DisplayName: id.GetDisplayName(),
			Email:       id.GetEmail(),
			Phone:       id.GetPhone(),
		}), nil
	case *providerv1.ExchangeResponse_Error:
		return pluginsdk.ExchangeResponse{Error: &pluginsdk.ProviderError{
			Kind:    pluginsdk.ErrorKind(wire.KindFromProto(r.Error.GetKind())),
			Message: r.Error.GetMessage(),
		}}, nil
	case *providerv1.ExchangeResponse_Failure:
		return pluginsdk.ExchangeResponse{}, remote("Exchange", r.Failure)
	}
	return pluginsdk.ExchangeResponse{}, &RemoteError{Method: "Exchange", Message: "the plugin answered neither an identity nor an error"}
}
