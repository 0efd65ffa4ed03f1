package providertest_test

import (
	"context"
	"testing"
	"time"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

func TestFake(t *testing.T) {
	t.Parallel()
	providertest.Run(t, func(*testing.T) pluginsdk.Provider {
		return providertest.NewFake("fake")
	}, providertest.FakeOptions("fake"))
}

func TestFakeInProcess(t *testing.T) {
	t.Parallel()
	providertest.Run(t, func(t *testing.T) pluginsdk.Provider {
		return providertest.InProcess(t, providertest.NewFake("fake_grpc"))
	}, providertest.FakeOptions("fake_grpc"))
}

// The code "hang" blocks for the Fake's own HangFor, a field: two tests
// (or two fakes) never share the knob.
func TestFakeHangForIsPerFake(t *testing.T) {
	t.Parallel()
	quick := providertest.NewFake("quick")
	quick.HangFor = time.Millisecond
	if err := quick.Configure(context.Background(), providertest.FakeSettings()); err != nil {
		t.Fatalf("Configure() = %v", err)
	}
	resp, err := quick.Exchange(context.Background(), pluginsdk.ExchangeRequest{Query: map[string]string{"code": "hang"}})
	if err != nil || resp.Error == nil || resp.Error.Kind != pluginsdk.ExchangeFailed {
		t.Errorf("Exchange(code hang) after HangFor = %+v, %v; want the refused-code ProviderError", resp, err)
	}
	if other := providertest.NewFake("other"); other.HangFor != 0 {
		t.Errorf("a new Fake has HangFor %v; want zero (one minute)", other.HangFor)
	}
}
