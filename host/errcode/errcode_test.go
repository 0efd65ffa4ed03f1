package errcode_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/errcode"
)

func TestKernelCatalog(t *testing.T) {
	c, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	entries := c.Entries()
	// The 108 entries of the wire contract's table (the alias
	// BindInviteInvalid has no entry of its own) plus the codes this kernel
	// adds: 40028-40029, 40030-40034 (passkeys), 40035-40036 (factor enrolment, phone taken), 40037-40038 (provider doctor, 42033-42034 before), 41006, 41007 (area code), 42031, 42032 (recycle bin), 42035-42036 (business resources), 43012-43013 (config registry), 44007-44008 (chunk bounds), 45005-45006 (notice scope and actions), 46014-46015 (spreadsheet caps), 47015-47016 (system job bounds), the
	// five 48xxx request codes and 50001 StorageFull, 50002
	// CacheUnavailable and 50003 DatabaseUnavailable.
	if got, want := len(entries), 108+2+5+2+1+1+1+1+2+2+2+2+2+2+2+5+3; got != want {
		t.Fatalf("kernel catalog has %d entries, want %d", got, want)
	}
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Code >= entries[i].Code {
			t.Fatalf("catalog not sorted or duplicate at %d: %d then %d", i, entries[i-1].Code, entries[i].Code)
		}
	}
	for _, e := range entries {
		if e.Source != "ErrorCode" {
			t.Errorf("code %d source = %q, want ErrorCode", e.Code, e.Source)
		}
		if e.Code != 0 && !strings.HasPrefix(e.MsgKey, "error.") {
			t.Errorf("code %d msgKey %q lacks the error. prefix", e.Code, e.MsgKey)
		}
		if seg := segmentOf(e.Code); seg == "" {
			t.Errorf("code %d (%s) is outside every kernel segment", e.Code, e.Name)
		}
	}
	known := map[errcode.Code]string{
		errcode.Success:               "common.success",
		errcode.PasswordWrong:         "error.auth.passwordWrong",
		errcode.TokenInvalid:          "error.auth.tokenInvalid",
		errcode.OAuthProviderDisabled: "error.auth.oauthProviderDisabled",
		errcode.OAuthStateInvalid:     "error.auth.oauthStateInvalid",
		errcode.OAuthExchangeFailed:   "error.auth.oauthExchangeFailed",
		errcode.OAuthAccountNotBound:  "error.auth.oauthAccountNotBound",
		errcode.OAuthAlreadyBound:     "error.auth.oauthAlreadyBound",
		errcode.SystemError:           "error.system.internal",
	}
	for code, want := range known {
		if got := c.MsgKey(code); got != want {
			t.Errorf("MsgKey(%d) = %q, want %q", code, got, want)
		}
	}
	if got := c.MsgKey(40025); got != "error.code.40025" {
		t.Errorf("unregistered code msgKey = %q, want error.code.40025", got)
	}
	// The provider doctor's codes moved from the user/org/role range into
	// the external-login range beside 40013-40017; their msgKeys stayed,
	// and the old numbers are free.
	for code, want := range map[errcode.Code]string{40037: "error.provider.notFound", 40038: "error.provider.doctorBusy"} {
		if got := c.MsgKey(code); got != want {
			t.Errorf("MsgKey(%d) = %q, want %q", code, got, want)
		}
	}
	if errcode.ProviderNotFound != 40037 || errcode.ProviderDoctorBusy != 40038 {
		t.Errorf("ProviderNotFound, ProviderDoctorBusy = %d, %d; want 40037, 40038", errcode.ProviderNotFound, errcode.ProviderDoctorBusy)
	}
	for _, old := range []errcode.Code{42033, 42034} {
		if got := c.MsgKey(old); got != fmt.Sprintf("error.code.%d", old) {
			t.Errorf("MsgKey(%d) = %q; the old number must not be registered", old, got)
		}
	}
}

func segmentOf(c errcode.Code) string {
	switch {
	case c == 0:
		return "success"
	case c >= 40000 && c <= 48999:
		return "kernel"
	case c >= 50000 && c <= 50999:
		return "internal"
	}
	return ""
}

func TestConsumerEnums(t *testing.T) {
	orders := errcode.Enum{Name: "OrderError", Members: []errcode.Member{
		{Code: 60001, Name: "OrderNotFound", MsgKey: "error.order.notFound"},
		{Code: 60002, Name: "OrderLocked", MsgKey: "error.order.locked"},
	}}
	tests := []struct {
		name    string
		enums   []errcode.Enum
		wantErr []string // substrings; empty = success
	}{
		{name: "one consumer enum", enums: []errcode.Enum{orders}},
		{
			name: "two enums claim one number",
			enums: []errcode.Enum{orders, {Name: "BillingError", Members: []errcode.Member{
				{Code: 60002, Name: "InvoiceMissing", MsgKey: "error.billing.invoiceMissing"},
			}}},
			wantErr: []string{"60002", "OrderError.OrderLocked", "BillingError.InvoiceMissing"},
		},
		{
			name: "consumer claims a kernel number",
			enums: []errcode.Enum{{Name: "Mine", Members: []errcode.Member{
				{Code: 40001, Name: "Clash", MsgKey: "error.mine.clash"},
			}}},
			wantErr: []string{"40001", "ErrorCode.PasswordWrong", "Mine.Clash"},
		},
		{
			name:    "member without msgKey",
			enums:   []errcode.Enum{{Name: "Bare", Members: []errcode.Member{{Code: 61000, Name: "X"}}}},
			wantErr: []string{"61000", "Bare"},
		},
		{
			name:    "enum without name",
			enums:   []errcode.Enum{{Members: []errcode.Member{{Code: 61001, Name: "X", MsgKey: "k"}}}},
			wantErr: []string{"without a name"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := errcode.NewCatalog(tt.enums...)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("NewCatalog: %v", err)
				}
				e, ok := c.Lookup(60001)
				if !ok || e.Source != "OrderError" || e.MsgKey != "error.order.notFound" || e.Name != "OrderNotFound" {
					t.Fatalf("Lookup(60001) = %+v, %v", e, ok)
				}
				return
			}
			if err == nil {
				t.Fatal("NewCatalog succeeded, want an error")
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestEveryMsgKeyInBothLanguagePacks(t *testing.T) {
	c, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	packs := map[string]map[string]string{}
	for _, lang := range errcode.Languages {
		p, err := errcode.LanguagePack(lang)
		if err != nil {
			t.Fatal(err)
		}
		packs[lang] = p
	}
	for lang, keys := range c.MissingTexts(packs) {
		t.Errorf("language pack %s misses %d msgKeys: %v", lang, len(keys), keys)
	}
	// The packs must hold the same keys, so neither language lags behind.
	for k := range packs["en-US"] {
		if _, ok := packs["zh-CN"][k]; !ok {
			t.Errorf("zh-CN lacks %q which en-US has", k)
		}
	}
	for k := range packs["zh-CN"] {
		if _, ok := packs["en-US"][k]; !ok {
			t.Errorf("en-US lacks %q which zh-CN has", k)
		}
	}
}

func TestMissingTextsReportsGaps(t *testing.T) {
	c, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	got := c.MissingTexts(map[string]map[string]string{"xx": {"common.success": "ok"}})
	if len(got["xx"]) != len(c.Entries())-1 {
		t.Fatalf("MissingTexts found %d gaps, want %d", len(got["xx"]), len(c.Entries())-1)
	}
}

func TestErrorStatusAndMatching(t *testing.T) {
	tests := []struct {
		code errcode.Code
		want int
	}{
		{errcode.PasswordWrong, http.StatusOK},
		{errcode.OAuthStateInvalid, http.StatusOK},
		{errcode.TokenInvalid, http.StatusUnauthorized},
		{errcode.NoPermission, http.StatusForbidden},
		{errcode.TooManyRequests, http.StatusTooManyRequests},
		{errcode.RequestInvalid, http.StatusBadRequest},
		{errcode.RouteNotFound, http.StatusNotFound},
		{errcode.MethodNotAllowed, http.StatusMethodNotAllowed},
		{errcode.UnsupportedMediaType, http.StatusUnsupportedMediaType},
		{errcode.SystemError, http.StatusInternalServerError},
		{errcode.StorageFull, http.StatusServiceUnavailable},
		{errcode.CacheUnavailable, http.StatusServiceUnavailable},
		{errcode.DatabaseUnavailable, http.StatusServiceUnavailable},
		{60001, http.StatusOK},
	}
	for _, tt := range tests {
		if got := errcode.New(tt.code).HTTPStatus(); got != tt.want {
			t.Errorf("status of %d = %d, want %d", tt.code, got, tt.want)
		}
	}
	cause := errors.New("boom")
	err := error(errcode.New(errcode.AccountLocked).With("lockMinutes", 10).Wrap(cause))
	if !errors.Is(err, cause) || !errors.Is(err, errcode.New(errcode.AccountLocked)) || errors.Is(err, errcode.New(errcode.PasswordWrong)) {
		t.Fatal("errors.Is does not match by code and cause")
	}
	be, ok := errcode.As(err)
	if !ok || be.Args["lockMinutes"] != 10 {
		t.Fatalf("As = %+v, %v", be, ok)
	}
}

func ExampleNewCatalog() {
	const OrderNotFound errcode.Code = 60001
	catalog, err := errcode.NewCatalog(errcode.Enum{Name: "OrderError", Members: []errcode.Member{
		{Code: OrderNotFound, Name: "OrderNotFound", MsgKey: "error.order.notFound"},
	}})
	if err != nil {
		panic(err)
	}
	e, _ := catalog.Lookup(OrderNotFound)
	fmt.Println(e.Source, e.MsgKey)
	// Output: OrderError error.order.notFound
}
