package route_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/route"
)

func TestPermissionCode(t *testing.T) {
	tests := []struct{ method, path, want string }{
		{"delete", "/api/v1/sys/session/{sessionId}", "DELETE:/api/v1/sys/session/{sessionid}"},
		{"DELETE", "/api/v1/sys/mfa/high-sensitivity/{id:long}", "DELETE:/api/v1/sys/mfa/high-sensitivity/{id:long}"},
		{"Get", "/api/v1/sys/recycle/{type}/page", "GET:/api/v1/sys/recycle/{type}/page"},
		{"GET", "/api/v1/ping", "GET:/api/v1/ping"},
	}
	for _, tt := range tests {
		if got := route.PermissionCode(tt.method, tt.path); got != tt.want {
			t.Errorf("PermissionCode(%q, %q) = %q, want %q", tt.method, tt.path, got, tt.want)
		}
	}
}

func TestFiberPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/api/v1/sys/user/{id}", "/api/v1/sys/user/:id"},
		{"/api/v1/x/{id:long}/y/{Type}", "/api/v1/x/:id<int>/y/:Type"},
		{"/plain", "/plain"},
	}
	for _, tt := range tests {
		if got := route.FiberPath(tt.in); got != tt.want {
			t.Errorf("FiberPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func ok(c fiber.Ctx) error { return c.SendString("ok") }

func TestMount(t *testing.T) {
	guarded := func(route.Route) fiber.Handler {
		return func(c fiber.Ctx) error {
			if c.Get("X-Pass") == "" {
				return c.SendStatus(http.StatusUnauthorized)
			}
			return c.Next()
		}
	}
	build := func() *route.Table {
		tb := route.NewTable()
		g := tb.Group("Orders", "/api/v1/orders")
		g.Get("/open", route.Anonymous, ok)
		g.Get("/{id}", route.Permission, ok)
		tb.Group("Meta", "/api/v1/meta").Get("/x", route.Anonymous, ok)
		return tb
	}

	t.Run("missing guard refuses to mount", func(t *testing.T) {
		err := build().Mount(fiber.New(), route.Guards{}, nil)
		if err == nil || !strings.Contains(err.Error(), "/api/v1/orders/{id}") {
			t.Fatalf("Mount error = %v, want one naming the unguarded route", err)
		}
	})

	app := fiber.New()
	if err := build().Mount(app, route.Guards{route.Permission: guarded}, []string{" meta "}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		pass       bool
		want       int
	}{
		{"anonymous route open", "/api/v1/orders/open", false, 200},
		{"guarded route refused", "/api/v1/orders/7", false, 401},
		{"guarded route passes", "/api/v1/orders/7", true, 200},
		{"disabled module is absent", "/api/v1/meta/x", false, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			if tt.pass {
				req.Header.Set("X-Pass", "1")
			}
			resp, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("GET %s = %d, want %d", tt.path, resp.StatusCode, tt.want)
			}
		})
	}
}

func TestDuplicateRoutePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering a route twice did not panic")
		}
	}()
	tb := route.NewTable()
	g := tb.Group("A", "/api")
	g.Get("/x/{id}", route.Anonymous, ok)
	g.Get("/x/{key}", route.Anonymous, ok)
}

func TestRoutesSorted(t *testing.T) {
	tb := route.NewTable()
	g := tb.Group("A", "/api")
	g.Post("/b", route.Permission, ok)
	g.Get("/b", route.Permission, ok)
	g.Get("/a", route.Anonymous, ok)
	var got []string
	for _, r := range tb.Routes() {
		got = append(got, r.Method+" "+r.Path+" "+r.Module)
	}
	want := "GET /api/a A,GET /api/b A,POST /api/b A"
	if strings.Join(got, ",") != want {
		t.Fatalf("Routes() = %v, want %s", got, want)
	}
}

func TestAroundRunsAfterGuardBeforeHandler(t *testing.T) {
	var order []string
	tb := route.NewTable()
	tb.Group("A", "/api").Post("/x", route.Session, func(c fiber.Ctx) error {
		order = append(order, "handler")
		return c.SendString("ok")
	})
	tb.Group("A", "/api").Get("/y", route.Anonymous, ok)
	tb.Around(func(r route.Route) fiber.Handler {
		if r.Method == "GET" {
			return nil
		}
		return func(c fiber.Ctx) error {
			order = append(order, "around "+r.Path)
			return c.Next()
		}
	})
	app := fiber.New()
	guard := func(route.Route) fiber.Handler {
		return func(c fiber.Ctx) error { order = append(order, "guard"); return c.Next() }
	}
	if err := tb.Mount(app, route.Guards{route.Session: guard}, nil); err != nil {
		t.Fatal(err)
	}
	for _, req := range []*http.Request{httptest.NewRequest("POST", "/api/x", nil), httptest.NewRequest("GET", "/api/y", nil)} {
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := strings.Join(order, ","); got != "guard,around /api/x,handler" {
		t.Fatalf("order = %s", got)
	}
}

func TestQueriesAndPaged(t *testing.T) {
	tests := []struct {
		name   string
		build  func(*route.Route) *route.Route
		want   []route.QueryParam
		panics bool
	}{
		{"string by default", func(r *route.Route) *route.Route { return r.Queries("Name") }, []route.QueryParam{{"Name", "string"}}, false},
		{"typed", func(r *route.Route) *route.Route {
			return r.Queries("OrgId:int64", "Enabled:bool", "From:date-time", "Codes:[]string")
		},
			[]route.QueryParam{{"OrgId", "int64"}, {"Enabled", "bool"}, {"From", "date-time"}, {"Codes", "[]string"}}, false},
		{"paged adds paging first", func(r *route.Route) *route.Route { return r.Paged("Name") }, append(append([]route.QueryParam(nil), route.PagingQuery...), route.QueryParam{"Name", "string"}), false},
		{"unknown type", func(r *route.Route) *route.Route { return r.Queries("Id:uuid") }, nil, true},
		{"empty name", func(r *route.Route) *route.Route { return r.Queries(":int64") }, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if r := recover(); (r != nil) != tt.panics {
					t.Fatalf("panic = %v, want panic %v", r, tt.panics)
				}
			}()
			got := tt.build(&route.Route{Method: "GET", Path: "/x/page"}).Query
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Query = %v, want %v", got, tt.want)
			}
		})
	}
}
