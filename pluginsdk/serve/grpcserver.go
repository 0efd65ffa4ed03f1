package serve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/status"

	"github.com/adminkernel/kernel/pluginsdk"
	providerv1 "github.com/adminkernel/kernel/pluginsdk/internal/proto/kernel/provider/v1"
	"github.com/adminkernel/kernel/pluginsdk/internal/wire"
)

// newGRPCServer adapts a pluginsdk.Provider to the generated
// kernel.provider.v1 service: the plugin half of the wire, used by Serve
// (and through Serve by providertest.InProcess). The kernel half is
// pluginsdk/grpcprovider; what both halves share is pluginsdk/internal/wire.
//
// Every answer of the provider travels as data: a domain failure of
// Exchange as ProviderError, an error returned by a method (and a panic,
// which is logged with its stack) as Failure. gRPC status codes are left to
// the transport. log may be nil.
func newGRPCServer(p pluginsdk.Provider, log hclog.Logger) providerv1.ProviderServiceServer {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &grpcServer{p: p, log: log}
}

type grpcServer struct {
	providerv1.UnimplementedProviderServiceServer
	p   pluginsdk.Provider
	log hclog.Logger
}

// guard turns a panic of the provider into an error, so one bad callback
// does not take the plugin down with every login in flight.
func (s *grpcServer) guard(method string, err *error) {
	if r := recover(); r != nil {
		s.log.Error("provider panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*err = fmt.Errorf("the provider panicked in %s", method)
	}
}

// contextStatus turns a provider error caused by the call's own context
// ending into the matching gRPC status, so the host sees its deadline (or
// cancellation) rather than a provider answer; nil otherwise.
func contextStatus(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return nil
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return nil
	}
	return status.FromContextError(ctx.Err()).Err()
}

func failure(err error) *providerv1.Failure {
	return &providerv1.Failure{Message: wire.ValidUTF8(err.Error())}
}

func (s *grpcServer) Describe(ctx context.Context, _ *providerv1.DescribeRequest) (*providerv1.DescribeResponse, error) {
	d, err := func() (d pluginsdk.Descriptor, err error) {
		defer s.guard("Describe", &err)
		return s.p.Describe(ctx)
	}()
	if err != nil {
		if st := contextStatus(ctx, err); st != nil {
			return nil, st
		}
		return &providerv1.DescribeResponse{Result: &providerv1.DescribeResponse_Failure{Failure: failure(err)}}, nil
	}
	return &providerv1.DescribeResponse{Result: &providerv1.DescribeResponse_Info{Info: &providerv1.Descriptor{
		Code:            wire.ValidUTF8(d.Code),
		DisplayName:     wire.ValidUTF8(d.DisplayName),
		Icon:            wire.ValidUTF8(d.Icon),
		Brand:           wire.ValidUTF8(d.Brand),
		ProtocolVersion: int32(min(max(d.ProtocolVersion, 0), math.MaxInt32)), //nolint:gosec // clamped
	}}}, nil
}

func (s *grpcServer) Configure(ctx context.Context, req *providerv1.ConfigureRequest) (*providerv1.ConfigureResponse, error) {
	settings := pluginsdk.Settings(req.GetSettings())
	if settings == nil {
		settings = pluginsdk.Settings{}
	}
	err := func() (err error) {
		defer s.guard("Configure", &err)
		return s.p.Configure(ctx, settings)
	}()
	if err != nil {
		if st := contextStatus(ctx, err); st != nil {
			return nil, st
		}
		return &providerv1.ConfigureResponse{Failure: failure(err)}, nil
	}
	return &providerv1.ConfigureResponse{}, nil
}

func (s *grpcServer) AuthorizeURL(ctx context.Context, req *providerv1.AuthorizeURLRequest) (*providerv1.AuthorizeURLResponse, error) {
	in := pluginsdk.AuthorizeRequest{
		State:               req.GetState(),
		RedirectURI:         req.GetRedirectUri(),
		UserAgent:           req.GetUserAgent(),
		Nonce:               req.GetNonce(),
		CodeChallenge:       req.GetCodeChallenge(),
		CodeChallengeMethod: req.GetCodeChallengeMethod(),
		Purpose:             req.GetPurpose(),
	}
	out, err := func() (out pluginsdk.AuthorizeResponse, err error) {
		defer s.guard("AuthorizeURL", &err)
		return s.p.AuthorizeURL(ctx, in)
	}()
	if err != nil {
		if st := contextStatus(ctx, err); st != nil {
			return nil, st
		}
		return &providerv1.AuthorizeURLResponse{Failure: failure(err)}, nil
	}
	return &providerv1.AuthorizeURLResponse{Url: wire.ValidUTF8(out.URL), ProviderData: out.ProviderData}, nil
}

func (s *grpcServer) Exchange(ctx context.Context, req *providerv1.ExchangeRequest) (*providerv1.ExchangeResponse, error) {
	query := req.GetQuery()
	if query == nil {
		query = map[string]string{}
	}
	in := pluginsdk.ExchangeRequest{
		Query:        query,
		RedirectURI:  req.GetRedirectUri(),
		ProviderData: req.GetProviderData(),
		Nonce:        req.GetNonce(),
		CodeVerifier: req.GetCodeVerifier(),
	}
	out, err := func() (out pluginsdk.ExchangeResponse, err error) {
		defer s.guard("Exchange", &err)
		return s.p.Exchange(ctx, in)
	}()
	switch {
	case err != nil:
		if st := contextStatus(ctx, err); st != nil {
			return nil, st
		}
		return &providerv1.ExchangeResponse{Result: &providerv1.ExchangeResponse_Failure{Failure: failure(err)}}, nil
	case out.Error != nil:
		pe := &providerv1.ProviderError{Kind: wire.KindToProto(string(out.Error.Kind)), Message: wire.ValidUTF8(out.Error.Message)}
		// A domain failure is data, not an error of the call.
		return &providerv1.ExchangeResponse{Result: &providerv1.ExchangeResponse_Error{Error: pe}}, nil //nolint:nilerr // out.Error is a ProviderError
	case out.Identity != nil:
		id := out.Identity
		return &providerv1.ExchangeResponse{Result: &providerv1.ExchangeResponse_Identity{Identity: &providerv1.Identity{
			Subject:     wire.ValidUTF8(id.Subject),
			AccountHint: wire.ValidUTF8(id.AccountHint),
			DisplayName: wire.ValidUTF8(id.DisplayName),
			Email:       wire.ValidUTF8(id.Email),
			Phone:       wire.ValidUTF8(id.Phone),
		}}}, nil
	default:
		return &providerv1.ExchangeResponse{Result: &providerv1.ExchangeResponse_Failure{Failure: &providerv1.Failure{
			Message: "the provider returned neither an identity nor an error",
		}}}, nil
	}
}
