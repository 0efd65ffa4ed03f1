package grpcprovider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/adminkernel/kernel/pluginsdk"
	providerv1 "github.com/adminkernel/kernel/pluginsdk/proto/kernel/provider/v1"
)

// Client is the host half of the wire: a pluginsdk.Provider that calls a
// plugin process. It is safe for concurrent use. It never retries a call.
type Client struct {
	rpc providerv1.ProviderServiceClient
}

var _ pluginsdk.Provider = (*Client)(nil)

// NewClient returns a Client calling the ProviderService on conn.
func NewClient(conn grpc.ClientConnInterface) *Client {
	return &Client{rpc: providerv1.NewProviderServiceClient(conn)}
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
func (c *Client) Describe(ctx context.Context) (pluginsdk.Descriptor, error) {
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
		ProtocolVersion: int(d.GetProtocolVersion()),
	}, nil
}

// Configure sends the settings section to the plugin. A refusal by the
// provider is a *RemoteError.
func (c *Client) Configure(ctx context.Context, settings pluginsdk.Settings) error {
	resp, err := c.rpc.Configure(ctx, &providerv1.ConfigureRequest{Settings: utf8Map(settings)})
	if err != nil {
		return callError(ctx, "Configure", err)
	}
	if f := resp.GetFailure(); f != nil {
		return remote("Configure", f)
	}
	return nil
}

// AuthorizeURL asks the plugin for the vendor's authorization URL.
func (c *Client) AuthorizeURL(ctx context.Context, req pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	resp, err := c.rpc.AuthorizeURL(ctx, &providerv1.AuthorizeURLRequest{
		State:               validUTF8(req.State),
		RedirectUri:         validUTF8(req.RedirectURI),
		UserAgent:           validUTF8(req.UserAgent),
		Nonce:               validUTF8(req.Nonce),
		CodeChallenge:       validUTF8(req.CodeChallenge),
		CodeChallengeMethod: validUTF8(req.CodeChallengeMethod),
		Purpose:             validUTF8(req.Purpose),
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
func (c *Client) Exchange(ctx context.Context, req pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	resp, err := c.rpc.Exchange(ctx, &providerv1.ExchangeRequest{
		Query:        utf8Map(req.Query),
		RedirectUri:  validUTF8(req.RedirectURI),
		ProviderData: req.ProviderData,
		Nonce:        validUTF8(req.Nonce),
		CodeVerifier: validUTF8(req.CodeVerifier),
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
			Kind:    kindFromProto(r.Error.GetKind()),
			Message: r.Error.GetMessage(),
		}}, nil
	case *providerv1.ExchangeResponse_Failure:
		return pluginsdk.ExchangeResponse{}, remote("Exchange", r.Failure)
	}
	return pluginsdk.ExchangeResponse{}, &RemoteError{Method: "Exchange", Message: "the plugin answered neither an identity nor an error"}
}

// validUTF8 makes s valid UTF-8, which protobuf strings must be: a callback
// query comes from the browser and may carry anything. Invalid bytes become
// U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func utf8Map(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[validUTF8(k)] = validUTF8(v)
	}
	return out
}

// kindFromProto maps a wire ErrorKind; an unknown or unspecified kind is
// read as ExchangeFailed.
func kindFromProto(k providerv1.ErrorKind) pluginsdk.ErrorKind {
	switch k {
	case providerv1.ErrorKind_ERROR_KIND_INVALID_CALLBACK:
		return pluginsdk.InvalidCallback
	case providerv1.ErrorKind_ERROR_KIND_MISCONFIGURED:
		return pluginsdk.Misconfigured
	case providerv1.ErrorKind_ERROR_KIND_DENIED:
		return pluginsdk.Denied
	}
	return pluginsdk.ExchangeFailed
}
