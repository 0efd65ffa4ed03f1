package providertest_test

import (
	"testing"

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
