package host_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/adminkernel/kernel/config"
)

var operationIDForm = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9]+$`)

func TestContractDocument(t *testing.T) {
	t.Run("404 outside Development", func(t *testing.T) {
		k, _ := start(t, load(t, t.TempDir(), config.Production, testKey, "Service__Database__EnableCodeFirstInProduction=true"))
		if status, _ := get(t, k, "/openapi/v1.json"); status != 404 {
			t.Fatalf("Production /openapi/v1.json = %d, want 404", status)
		}
	})

	k, _ := start(t, load(t, t.TempDir(), config.Development))
	status, body := get(t, k, "/openapi/v1.json")
	if status != 200 {
		t.Fatalf("Development /openapi/v1.json = %d", status)
	}
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatalf("loading the document: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}

	// Every mounted route is documented, with its access level and code.
	seenIDs := map[string]bool{}
	for _, r := range k.Routes() {
		path := r.Path
		item := doc.Paths.Find(path)
		if item == nil {
			t.Errorf("route %s %s missing from the document", r.Method, r.Path)
			continue
		}
		op := item.GetOperation(r.Method)
		if op == nil {
			t.Errorf("operation %s %s missing", r.Method, r.Path)
			continue
		}
		if op.Extensions["x-auth"] != r.Access.String() || op.Extensions["x-module"] != r.Module {
			t.Errorf("%s %s: x-auth %v x-module %v", r.Method, r.Path, op.Extensions["x-auth"], op.Extensions["x-module"])
		}
		if code, _ := op.Extensions["x-permission-code"].(string); r.Access.String() == "permission" && code != r.PermissionCode() {
			t.Errorf("%s %s: x-permission-code %q, want %q", r.Method, r.Path, code, r.PermissionCode())
		}
		// {Controller}_{Action} in ASCII, once each (client generators
		// turn them into method names).
		if !operationIDForm.MatchString(op.OperationID) || seenIDs[op.OperationID] {
			t.Errorf("%s %s: operationId %q is not an ASCII {Controller}_{Action} or is a duplicate", r.Method, r.Path, op.OperationID)
		}
		seenIDs[op.OperationID] = true
		// A JSON body may be refused as 415 / 48006; nothing else is.
		if has415 := op.Responses.Value("415") != nil; has415 != (r.Input != nil) {
			t.Errorf("%s %s: documents 415 = %v, but has a JSON body = %v", r.Method, r.Path, has415, r.Input != nil)
		}
	}

	// The ErrorCode schema equals the catalog endpoint, index by index.
	ec := doc.Components.Schemas["ErrorCode"].Value
	if ec.Type.Permits("integer") == false || ec.Format != "int32" || len(ec.Enum) != 0 {
		t.Fatalf("ErrorCode schema = type %v format %q enum %v", ec.Type, ec.Format, ec.Enum)
	}
	_, catBody := get(t, k, "/api/v1/meta/error-codes")
	var env struct {
		Data []struct {
			Code   int    `json:"code"`
			Name   string `json:"name"`
			MsgKey string `json:"msgKey"`
		} `json:"data"`
	}
	if err := json.Unmarshal(catBody, &env); err != nil {
		t.Fatal(err)
	}
	values, _ := ec.Extensions["x-enum-values"].([]any)
	names, _ := ec.Extensions["x-enum-varnames"].([]any)
	keys, _ := ec.Extensions["x-msg-keys"].([]any)
	if len(values) != len(env.Data) || len(names) != len(env.Data) || len(keys) != len(env.Data) {
		t.Fatalf("arrays %d/%d/%d, catalog %d", len(values), len(names), len(keys), len(env.Data))
	}
	for i, e := range env.Data {
		if v, _ := values[i].(float64); int(v) != e.Code || names[i] != e.Name || keys[i] != e.MsgKey {
			t.Fatalf("index %d: %v %v %v, catalog %+v", i, values[i], names[i], keys[i], e)
		}
	}
}
