package providertest_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

// *testing.T and testing.TB are reporters of the kit.
var (
	_ providertest.TB = (*testing.T)(nil)
	_ providertest.TB = testing.TB(nil)
)

// checkFake runs Check (the kit without go test's runner) against fakes
// wrapped by wrap.
func checkFake(t *testing.T, wrap func(*providertest.Fake) pluginsdk.Provider, opts providertest.Options) (providertest.Report, []string) {
	t.Helper()
	var seen []string
	rep, err := providertest.Check(func(providertest.TB) pluginsdk.Provider { return wrap(providertest.NewFake("fake")) }, opts,
		func(r providertest.Result) { seen = append(seen, r.Name) })
	if err != nil {
		t.Fatal(err)
	}
	return rep, seen
}

func result(rep providertest.Report, name string) (providertest.Result, bool) {
	i := slices.IndexFunc(rep.Results, func(r providertest.Result) bool { return r.Name == name })
	if i < 0 {
		return providertest.Result{}, false
	}
	return rep.Results[i], true
}

func TestCheckRunsEveryCheck(t *testing.T) {
	t.Parallel()
	opts := providertest.FakeOptions("fake")
	opts.Login = nil // Check runs without a *testing.T
	rep, seen := checkFake(t, func(f *providertest.Fake) pluginsdk.Provider { return f }, opts)
	want := []string{"Describe", "Configure/Accepted", "Configure/MissingClientId", "Configure/MissingClientSecret", "Configure",
		"AuthorizeURL", "ExchangeVendorError", "ExchangeGarbage", "ExchangeBadCode", "Concurrency",
		"Cancellation/canceled", "Cancellation/expired", "Cancellation"}
	for _, w := range want {
		if !slices.Contains(seen, w) {
			t.Errorf("check %q was not reported; reported %v", w, seen)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("reported %d results %v, want %d", len(seen), seen, len(want))
	}
	if got := rep.Run(); got != len(want)-2 { // two parents
		t.Errorf("Run() = %d, want %d", got, len(want)-2)
	}
	if !rep.OK() || rep.Passed() != rep.Run() {
		t.Errorf("the fake failed: %+v", rep.Results)
	}
}

// leaky adds its client secret to the login URL.
type leaky struct{ *providertest.Fake }

func (l leaky) AuthorizeURL(ctx context.Context, r pluginsdk.AuthorizeRequest) (pluginsdk.AuthorizeResponse, error) {
	resp, err := l.Fake.AuthorizeURL(ctx, r)
	resp.URL += "&client_secret=" + providertest.FakeSettings()["ClientSecret"]
	return resp, err
}

func TestCheckCatchesALeakedSecret(t *testing.T) {
	t.Parallel()
	rep, _ := checkFake(t, func(f *providertest.Fake) pluginsdk.Provider { return leaky{f} }, providertest.Options{Settings: providertest.FakeSettings()})
	if rep.OK() {
		t.Fatal("Check passed a provider that leaks its secret into the login URL")
	}
	r, ok := result(rep, "AuthorizeURL")
	if !ok || r.Passed || !strings.Contains(strings.Join(r.Output, "\n"), "contains the value of the secret setting ClientSecret") {
		t.Errorf("AuthorizeURL = %+v; want a failure naming the secret setting", r)
	}
	if d, _ := result(rep, "Describe"); !d.Passed {
		t.Errorf("Describe failed: %+v", d)
	}
}

// decorated declares an icon and a brand of its own.
type decorated struct {
	*providertest.Fake
	icon, brand string
}

func (d decorated) Describe(ctx context.Context) (pluginsdk.Descriptor, error) {
	desc, err := d.Fake.Describe(ctx)
	desc.Icon, desc.Brand = d.icon, d.brand
	return desc, err
}

// The Describe check accepts a valid or absent icon and brand and fails an
// invalid one, naming it.
func TestCheckDescribeIconAndBrand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		icon, brand string
		fail        string
	}{
		{"", "", ""},
		{"ant-design:github-outlined", "github", ""},
		{"https://cdn.example/x.svg", "github", "Describe().Icon"},
		{"mdi:key", "Bad Brand", "Describe().Brand"},
	} {
		rep, _ := checkFake(t, func(f *providertest.Fake) pluginsdk.Provider { return decorated{f, c.icon, c.brand} },
			providertest.Options{Settings: providertest.FakeSettings()})
		d, ok := result(rep, "Describe")
		if !ok {
			t.Fatalf("no Describe result")
		}
		out := strings.Join(d.Output, "\n")
		if c.fail == "" && !d.Passed {
			t.Errorf("icon %q brand %q: Describe failed: %s", c.icon, c.brand, out)
		}
		if c.fail != "" && (d.Passed || !strings.Contains(out, c.fail)) {
			t.Errorf("icon %q brand %q: Describe = %+v; want a failure naming %s", c.icon, c.brand, d, c.fail)
		}
	}
}

// panicky panics in Describe.
type panicky struct{ *providertest.Fake }

func (panicky) Describe(context.Context) (pluginsdk.Descriptor, error) { panic("panicky: boom") }

// A panic fails the check it happened in; the other checks still run.
func TestCheckPanicFailsTheCheck(t *testing.T) {
	t.Parallel()
	rep, _ := checkFake(t, func(f *providertest.Fake) pluginsdk.Provider { return panicky{f} }, providertest.Options{Settings: providertest.FakeSettings()})
	d, ok := result(rep, "Describe")
	if !ok || d.Passed || !strings.Contains(strings.Join(d.Output, "\n"), "panicky: boom") {
		t.Errorf("Describe = %+v; want a failure with the panic", d)
	}
	if _, ok := result(rep, "Cancellation"); !ok || rep.OK() || rep.Run() < 7 {
		t.Errorf("after the panic: %d checks run, ok %v; want every check run and a failure", rep.Run(), rep.OK())
	}
}

// Fatal ends the check, and its cleanups run.
func TestCheckFatalRunsCleanups(t *testing.T) {
	t.Parallel()
	cleaned := 0
	rep, err := providertest.Check(func(t providertest.TB) pluginsdk.Provider {
		t.Cleanup(func() { cleaned++ })
		t.Fatal("newProvider gave up")
		return nil
	}, providertest.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Passed() != 0 || rep.Run() == 0 {
		t.Errorf("Run() = %d, Passed() = %d, OK() = %v; want every check run and failed", rep.Run(), rep.Passed(), rep.OK())
	}
	if cleaned != rep.Run() {
		t.Errorf("%d cleanups ran for %d checks", cleaned, rep.Run())
	}
}

func TestReportOfNothingIsNoPass(t *testing.T) {
	t.Parallel()
	if (providertest.Report{}).OK() {
		t.Error("a report of zero checks is OK")
	}
}

func TestCheckRefusesLogin(t *testing.T) {
	t.Parallel()
	if _, err := providertest.Check(nil, providertest.FakeOptions("fake"), nil); err == nil {
		t.Error("Check accepted Options.Login, which needs a *testing.T")
	}
}
