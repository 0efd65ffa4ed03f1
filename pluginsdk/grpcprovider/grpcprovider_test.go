package grpcprovider_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/grpcprovider"
	providerv1 "github.com/adminkernel/kernel/pluginsdk/internal/proto/kernel/provider/v1"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

// recorder answers what it is told and records what it received.
type recorder struct {
	mu       sync.Mutex
	settings pluginsdk.Settings
	authReq  pluginsdk.AuthorizeRequest
	exchReq  pluginsdk.ExchangeRequest

	desc     pluginsdk.Descriptor
	descErr  error
	confErr  error
	authResp pluginsdk.AuthorizeResponse
	authErr  error
	exchResp pluginsdk.ExchangeResponse
	exchErr  error
	block    bool // Exchange waits for its context
	panicky  bool
}

func (r *recorder) Describe(context.Context) (pluginsdk.Descriptor, error) { return r.desc, r.descErr }

func (r *recorder) Configure(_ context.Context, s pluginsdk.Settings) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settings = s
	return r.confErr
}

func (r *recorder) AuthorizeURL(_ context.Context, req pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.authReq = req
	return r.authResp, r.authErr
}

func (r *recorder) Exchange(ctx context.Context, req pluginsdk.ExchangeRequest) (pluginsdk.ExchangeResponse, error) {
	r.mu.Lock()
	r.exchReq = req
	r.mu.Unlock()
	if r.panicky {
		panic("boom")
	}
	if r.block {
		<-ctx.Done()
		return pluginsdk.ExchangeResponse{}, ctx.Err()
	}
	return r.exchResp, r.exchErr
}

// A plugin built before Descriptor.Brand existed sends a descriptor of
// fields 1 to 4 only: the kernel reads it as before, with no brand.
func TestDescriptorOfAnOldPlugin(t *testing.T) {
	t.Parallel()
	var old []byte // what the previous SDK's Describe put on the wire
	old = protowire.AppendTag(old, 1, protowire.BytesType)
	old = protowire.AppendString(old, "legacy")
	old = protowire.AppendTag(old, 2, protowire.BytesType)
	old = protowire.AppendString(old, "Legacy SSO")
	old = protowire.AppendTag(old, 3, protowire.BytesType)
	old = protowire.AppendString(old, "mdi:key")
	old = protowire.AppendTag(old, 4, protowire.VarintType)
	old = protowire.AppendVarint(old, 1)
	var d providerv1.Descriptor
	if err := proto.Unmarshal(old, &d); err != nil {
		t.Fatal(err)
	}
	if d.GetCode() != "legacy" || d.GetDisplayName() != "Legacy SSO" || d.GetIcon() != "mdi:key" || d.GetProtocolVersion() != 1 || d.GetBrand() != "" {
		t.Errorf("old descriptor decoded as %v", &d)
	}
	// And over the wire: a provider that leaves Brand (and Icon) empty.
	p := providertest.InProcess(t, &recorder{desc: pluginsdk.Descriptor{Code: "legacy", DisplayName: "Legacy SSO", ProtocolVersion: 1}})
	got, err := p.Describe(context.Background())
	if want := (pluginsdk.Descriptor{Code: "legacy", DisplayName: "Legacy SSO", ProtocolVersion: 1}); err != nil || got != want {
		t.Errorf("Describe() = %+v, %v; want %+v", got, err, want)
	}
}

func TestRoundTripCarriesEveryField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &recorder{
		desc:     pluginsdk.Descriptor{Code: "code_host", DisplayName: "Code Host", Icon: "ant-design:github-outlined", Brand: "github", ProtocolVersion: 1},
		authResp: pluginsdk.AuthorizeResponse{URL: "https://vendor.example/authorize?x=1", ProviderData: []byte{0, 1, 2, 0xff}},
		exchResp: pluginsdk.Succeed(pluginsdk.Identity{Subject: "583231", AccountHint: "octocat", DisplayName: "The Octocat", Email: "o@example.test", Phone: "+8613800000000"}),
	}
	p := providertest.InProcess(t, rec)

	d, err := p.Describe(ctx)
	if err != nil || d != rec.desc {
		t.Errorf("Describe() = %+v, %v; want %+v", d, err, rec.desc)
	}

	settings := pluginsdk.Settings{"ClientId": "abc", "ClientSecret": "s3cret", "Empty": ""}
	if err := p.Configure(ctx, settings); err != nil {
		t.Fatalf("Configure() = %v", err)
	}
	if diff := cmp.Diff(settings, rec.settings); diff != "" {
		t.Errorf("settings received (-sent +got):\n%s", diff)
	}

	areq := pluginsdk.AuthorizeRequest{State: "S1", RedirectURI: "https://k.example/cb", UserAgent: "UA", Nonce: "N", CodeChallenge: "C", CodeChallengeMethod: "S256", Purpose: pluginsdk.PurposeBind}
	aresp, err := p.AuthorizeURL(ctx, areq)
	if err != nil {
		t.Fatalf("AuthorizeURL() = %v", err)
	}
	if diff := cmp.Diff(rec.authResp, aresp); diff != "" {
		t.Errorf("AuthorizeURL() response (-want +got):\n%s", diff)
	}
	if rec.authReq != areq {
		t.Errorf("authorize request received = %+v, want %+v", rec.authReq, areq)
	}

	xreq := pluginsdk.ExchangeRequest{Query: map[string]string{"code": "c0de", "state": "S1"}, RedirectURI: "https://k.example/cb", ProviderData: []byte("pd"), Nonce: "N", CodeVerifier: "V"}
	xresp, err := p.Exchange(ctx, xreq)
	if err != nil {
		t.Fatalf("Exchange() = %v", err)
	}
	if diff := cmp.Diff(rec.exchResp, xresp); diff != "" {
		t.Errorf("Exchange() response (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(xreq, rec.exchReq); diff != "" {
		t.Errorf("exchange request received (-sent +got):\n%s", diff)
	}
}

func TestDomainFailuresTravelAsData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kinds := []pluginsdk.ErrorKind{pluginsdk.ExchangeFailed, pluginsdk.InvalidCallback, pluginsdk.Misconfigured, pluginsdk.Denied}
	for _, kind := range kinds {
		rec := &recorder{exchResp: pluginsdk.Fail(kind, "why %d", 42)}
		resp, err := providertest.InProcess(t, rec).Exchange(ctx, pluginsdk.ExchangeRequest{})
		if err != nil || resp.Error == nil || *resp.Error != (pluginsdk.ProviderError{Kind: kind, Message: "why 42"}) {
			t.Errorf("Exchange() = %+v, %v; want ProviderError %s", resp, err, kind)
		}
	}

	// A kind this protocol version does not know is read as ExchangeFailed.
	rec := &recorder{exchResp: pluginsdk.Fail("brand_new_kind", "x")}
	resp, err := providertest.InProcess(t, rec).Exchange(ctx, pluginsdk.ExchangeRequest{})
	if err != nil || resp.Error == nil || resp.Error.Kind != pluginsdk.ExchangeFailed {
		t.Errorf("Exchange() with an unknown kind = %+v, %v; want ExchangeFailed", resp, err)
	}
}

func TestMethodErrorsAreRemoteErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	boom := errors.New("vendor unreachable")
	rec := &recorder{descErr: boom, confErr: errors.New("ClientId is required"), authErr: boom, exchErr: boom}
	p := providertest.InProcess(t, rec)

	check := func(method string, err error, want string) {
		t.Helper()
		var re *grpcprovider.RemoteError
		if !errors.As(err, &re) || re.Method != method || re.Message != want {
			t.Errorf("%s error = %#v; want RemoteError{%s, %q}", method, err, method, want)
		}
		if grpcprovider.IsTransport(err) {
			t.Errorf("%s error %v counts as transport trouble", method, err)
		}
	}
	_, err := p.Describe(ctx)
	check("Describe", err, "vendor unreachable")
	check("Configure", p.Configure(ctx, nil), "ClientId is required")
	_, err = p.AuthorizeURL(ctx, pluginsdk.AuthorizeRequest{})
	check("AuthorizeURL", err, "vendor unreachable")
	_, err = p.Exchange(ctx, pluginsdk.ExchangeRequest{})
	check("Exchange", err, "vendor unreachable")

	// Neither identity nor error is a protocol violation, not a success.
	rec2 := &recorder{}
	_, err = providertest.InProcess(t, rec2).Exchange(ctx, pluginsdk.ExchangeRequest{})
	var re *grpcprovider.RemoteError
	if !errors.As(err, &re) {
		t.Errorf("Exchange() answering nothing: error = %v; want a RemoteError", err)
	}
}

func TestPanicIsContained(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &recorder{panicky: true, desc: pluginsdk.Descriptor{Code: "x", ProtocolVersion: 1}}
	p := providertest.InProcess(t, rec)
	_, err := p.Exchange(ctx, pluginsdk.ExchangeRequest{Query: map[string]string{"code": "c"}})
	var re *grpcprovider.RemoteError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "panicked") {
		t.Errorf("Exchange() of a panicking provider: error = %v; want a RemoteError saying it panicked", err)
	}
	if d, err := p.Describe(ctx); err != nil || d.Code != "x" {
		t.Errorf("Describe() after the panic = %+v, %v; want the server still serving", d, err)
	}
}

func TestDeadlineReachesThePlugin(t *testing.T) {
	t.Parallel()
	rec := &recorder{block: true}
	p := providertest.InProcess(t, rec)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Exchange(ctx, pluginsdk.ExchangeRequest{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Exchange() past its deadline: error = %v; want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Exchange() took %v past a 200 ms deadline", d)
	}
}

func TestInvalidUTF8IsRepaired(t *testing.T) {
	t.Parallel()
	rec := &recorder{exchResp: pluginsdk.Succeed(pluginsdk.Identity{Subject: "s\xff"})}
	p := providertest.InProcess(t, rec)
	resp, err := p.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: map[string]string{"code": "a\xffb"}})
	if err != nil {
		t.Fatalf("Exchange() = %v", err)
	}
	if got := rec.exchReq.Query["code"]; got != "a\uFFFDb" {
		t.Errorf("code received = %q, want %q", got, "a\uFFFDb")
	}
	if resp.Identity.Subject != "s\uFFFD" {
		t.Errorf("subject = %q, want %q", resp.Identity.Subject, "s\uFFFD")
	}
}

func TestTransportErrorCode(t *testing.T) {
	t.Parallel()
	err := &grpcprovider.TransportError{Method: "Exchange", Code: codes.Unavailable, Err: errors.New("EOF")}
	if !grpcprovider.IsTransport(err) || !strings.Contains(err.Error(), "Exchange") {
		t.Errorf("TransportError %v not recognised", err)
	}
}
