package bind_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
)

type input struct {
	Name string `json:"name"`
}

// who is a Caller reading the X-Caller header; none is 40006.
func who(c fiber.Ctx) (string, error) {
	if v := c.Get("X-Caller"); v != "" {
		return v, nil
	}
	return "", errcode.New(errcode.TokenInvalid)
}

func TestAdapters(t *testing.T) {
	catalog, err := errcode.NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New(fiber.Config{ErrorHandler: envelope.ErrorHandler(catalog, hclog.NewNullLogger(), nil)})
	var got []string
	record := func(parts ...string) { got = append(got, strings.Join(parts, "|")) }
	app.Get("/read", bind.Read(func(context.Context) (int, error) { return 7, nil }))
	app.Get("/read-as", bind.ReadAs(who, func(_ context.Context, c string) (string, error) { return "hi " + c, nil }))
	app.Get("/item/:id", bind.ReadID(func(_ context.Context, id int64) (int64, error) { return id * 2, nil }))
	app.Post("/item", bind.Create(who, func(_ context.Context, c string, in input) (int64, error) {
		record("create", c, in.Name)
		return 42, nil
	}))
	app.Put("/batch", bind.Apply(who, func(_ context.Context, c string, in []input) error {
		record("apply", c, in[0].Name)
		return nil
	}))
	app.Put("/item/:id", bind.Change(who, func(_ context.Context, c string, id int64, in input) error {
		record("change", c, in.Name)
		if id == 13 {
			return errcode.New(errcode.RequestInvalid).With("field", "unlucky")
		}
		return nil
	}))
	app.Put("/opt/:id", bind.ChangeOptional(who, func(_ context.Context, c string, id int64, in input) (string, error) {
		record("change-optional", c, in.Name)
		return "id " + strconv.FormatInt(id, 10), nil
	}))
	app.Delete("/item/:id", bind.Remove(who, func(_ context.Context, c string, id int64) error {
		record("remove", c)
		return nil
	}))
	app.Get("/owned/:id", bind.ReadIDAs(who, func(_ context.Context, c string, id int64) (string, error) {
		return c + " " + strconv.FormatInt(id, 10), nil
	}))
	app.Get("/page-as", bind.PageAs(who, 50, bind.Query("Name"), func(_ context.Context, c, name string, p request.Page) ([]string, int, error) {
		record("page-as", c, name, strconv.Itoa(p.Size))
		return []string{"b"}, 1, nil
	}))
	app.Get("/page", bind.Page(50, bind.Query("Name"), func(_ context.Context, name string, p request.Page) ([]string, int, error) {
		record("page", name, strconv.Itoa(p.Size))
		return []string{"a"}, 3, nil
	}))
	app.Get("/me", func(c fiber.Ctx) error {
		id, err := bind.UserID(c)
		if err != nil {
			return err
		}
		return envelope.OK(c, id)
	})

	cases := []struct {
		name, method, path, caller, body string
		code                             int
		data                             string
		calls                            string
	}{
		{"read", "GET", "/read", "", "", 0, "7", ""},
		{"read as caller", "GET", "/read-as", "ann", "", 0, `"hi ann"`, ""},
		{"read as without caller", "GET", "/read-as", "", "", 40006, "null", ""},
		{"read id", "GET", "/item/21", "", "", 0, "42", ""},
		{"read bad id", "GET", "/item/x", "", "", 48002, "null", ""},
		{"create", "POST", "/item", "ann", `{"name":"n"}`, 0, "42", "create|ann|n"},
		{"create without caller reads no body", "POST", "/item", "", `not json`, 40006, "null", ""},
		{"create bad body", "POST", "/item", "ann", `{`, 48002, "null", ""},
		{"apply", "PUT", "/batch", "ann", `[{"name":"b"}]`, 0, "true", "apply|ann|b"},
		{"change", "PUT", "/item/5", "ann", `{"name":"c"}`, 0, "true", "change|ann|c"},
		{"change caller before id", "PUT", "/item/x", "", `{`, 40006, "null", ""},
		{"change id before body", "PUT", "/item/x", "ann", `{`, 48002, "null", ""},
		{"change service error", "PUT", "/item/13", "ann", `{"name":"d"}`, 48002, "null", "change|ann|d"},
		{"change optional", "PUT", "/opt/5", "ann", `{"name":"o"}`, 0, `"id 5"`, "change-optional|ann|o"},
		{"change optional without body", "PUT", "/opt/6", "ann", "", 0, `"id 6"`, "change-optional|ann|"},
		{"change optional blank body is read", "PUT", "/opt/6", "ann", " ", 48002, "null", ""},
		{"change optional caller before id", "PUT", "/opt/x", "", `{`, 40006, "null", ""},
		{"change optional id before body", "PUT", "/opt/x", "ann", `{`, 48002, "null", ""},
		{"remove", "DELETE", "/item/5", "ann", "", 0, "true", "remove|ann"},
		{"page", "GET", "/page?size=2&name=x", "", "", 0, `{"current":1,"size":2,"total":3,"pages":2,"items":["a"]}`, "page|x|2"},
		{"page size checked before the filter", "GET", "/page?Size=51", "", "", int(errcode.PageSizeExceeded), "null", ""},
		{"read id as caller", "GET", "/owned/9", "ann", "", 0, `"ann 9"`, ""},
		{"read id as caller before id", "GET", "/owned/x", "", "", 40006, "null", ""},
		{"read id as bad id", "GET", "/owned/x", "ann", "", 48002, "null", ""},
		{"page as caller", "GET", "/page-as?size=4&name=y", "ann", "", 0, `{"current":1,"size":4,"total":1,"pages":1,"items":["b"]}`, "page-as|ann|y|4"},
		{"page as caller before paging", "GET", "/page-as?Size=51", "", "", 40006, "null", ""},
		{"page as size checked", "GET", "/page-as?Size=51", "ann", "", int(errcode.PageSizeExceeded), "null", ""},
		{"user id without principal", "GET", "/me", "", "", 40006, "null", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.caller != "" {
				req.Header.Set("X-Caller", tc.caller)
			}
			resp, err := app.Test(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var env struct {
				Code int             `json:"code"`
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(raw, &env); err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			if env.Code != tc.code || string(env.Data) != tc.data {
				t.Fatalf("code %d data %s, want %d %s (%s)", env.Code, env.Data, tc.code, tc.data, raw)
			}
			if calls := strings.Join(got, ","); calls != tc.calls {
				t.Fatalf("service calls %q, want %q", calls, tc.calls)
			}
		})
	}
}
