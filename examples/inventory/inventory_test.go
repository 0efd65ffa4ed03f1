package inventory_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/examples/inventory"
	"github.com/adminkernel/kernel/host"
)

func TestInventoryModule(t *testing.T) {
	cfg, err := config.Load(config.LoadOptions{ContentRoot: t.TempDir(), Environment: config.Development})
	if err != nil {
		t.Fatal(err)
	}
	k, err := host.New(context.Background(), host.Options{Config: cfg, Modules: []host.Module{inventory.Module()}, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()

	call := func(path string) (int, string) {
		resp, err := k.App().Test(httptest.NewRequest(http.MethodGet, path, nil))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	t.Run("consumer codes appear in the catalog", func(t *testing.T) {
		_, body := call("/api/v1/meta/error-codes")
		var env struct {
			Data []struct {
				Code   int    `json:"code"`
				Name   string `json:"name"`
				MsgKey string `json:"msgKey"`
				Source string `json:"source"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, e := range env.Data {
			if e.Source == "InventoryError" && (e.Code == 60001 && e.MsgKey == "error.inventory.itemNotFound" || e.Code == 60002 && e.Name == "OutOfStock") {
				found++
			}
		}
		if found != 2 {
			t.Fatalf("catalog lists %d of the 2 inventory codes", found)
		}
	})

	tests := []struct {
		name, path string
		status     int
		contains   string
	}{
		{"anonymous route", "/api/v1/inventory/stock/1", 200, `"inStock":12`},
		{"consumer error code with its msgKey", "/api/v1/inventory/stock/2", 200, `"code":60002,"msgKey":"error.inventory.outOfStock"`},
		{"bad id is a request error", "/api/v1/inventory/stock/abc", 400, `"code":48002`},
		{"permission route refuses without a token", "/api/v1/inventory/items/1", 401, `"code":40006`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := call(tt.path)
			if status != tt.status || !strings.Contains(body, tt.contains) {
				t.Fatalf("GET %s = %d %s, want %d containing %s", tt.path, status, body, tt.status, tt.contains)
			}
		})
	}

	t.Run("menu entries are seeded with the route's permission code", func(t *testing.T) {
		m, err := k.Ent().SysMenu.Get(context.Background(), 1011)
		if err != nil {
			t.Fatal(err)
		}
		if m.Permission != "GET:/api/v1/inventory/items/{id}" {
			t.Fatalf("button permission = %q", m.Permission)
		}
		var gated bool
		for _, r := range k.Routes() {
			if r.PermissionCode() == m.Permission {
				gated = true
			}
		}
		if !gated {
			t.Fatal("the seeded permission code names no registered route")
		}
	})
}
