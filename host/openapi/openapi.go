// Package openapi builds the contract document (/openapi/v1.json) from the
// route table and the Go types routes declare — never by hand. It is
// mounted in the Development environment only.
package openapi

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/route"
)

// Path is where the document is served.
const Path = "/openapi/v1.json"

var pathParam = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)(?::([A-Za-z]+))?\}`)

// Build returns the OpenAPI 3 document of the routes. Operations carry
// operationId {Module}_{Title}, x-auth, x-module and, for permission-gated
// routes, x-permission-code. The ErrorCode schema is integer/int32 without
// an enum, with x-enum-values, x-enum-varnames and x-msg-keys aligned by
// index and equal to the catalog.
func Build(routes []route.Route, catalog *errcode.Catalog, version string, disabled []string) (*openapi3.T, error) {
	if version == "" {
		version = "dev"
	}
	doc := &openapi3.T{
		OpenAPI: "3.0.3",
		Info:    &openapi3.Info{Title: "Admin Kernel", Version: version, Description: "Generated from the route table."},
		Paths:   openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas:         openapi3.Schemas{},
			SecuritySchemes: openapi3.SecuritySchemes{},
		},
	}
	doc.Components.SecuritySchemes["bearer"] = &openapi3.SecuritySchemeRef{Value: openapi3.NewJWTSecurityScheme()}
	doc.Components.Schemas["ErrorCode"] = errorCodeSchema(catalog)
	doc.Components.Schemas["Envelope"] = openapi3.NewSchemaRef("", envelopeSchema(nil))

	off := map[string]bool{}
	for _, m := range disabled {
		off[strings.ToLower(strings.TrimSpace(m))] = true
	}
	gen := openapi3gen.NewGenerator(openapi3gen.UseAllExportedFields())
	ids := map[string]int{}
	for _, r := range routes {
		if off[strings.ToLower(r.Module)] {
			continue
		}
		op, err := operation(gen, doc.Components.Schemas, r, ids)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
		}
		path := pathParam.ReplaceAllString(r.Path, "{$1}")
		item := doc.Paths.Value(path)
		if item == nil {
			item = &openapi3.PathItem{}
			doc.Paths.Set(path, item)
		}
		item.SetOperation(r.Method, op)
	}
	return doc, nil
}

func errorCodeSchema(catalog *errcode.Catalog) *openapi3.SchemaRef {
	entries := catalog.Entries()
	values := make([]any, len(entries))
	names := make([]any, len(entries))
	keys := make([]any, len(entries))
	for i, e := range entries {
		values[i], names[i], keys[i] = int(e.Code), e.Name, e.MsgKey
	}
	s := openapi3.NewInt32Schema()
	s.Description = "Envelope code: 0 success, otherwise a catalog code (GET /api/v1/meta/error-codes)."
	s.Extensions = map[string]any{"x-enum-values": values, "x-enum-varnames": names, "x-msg-keys": keys}
	return openapi3.NewSchemaRef("", s)
}

func envelopeSchema(data *openapi3.SchemaRef) *openapi3.Schema {
	s := openapi3.NewObjectSchema()
	s.Properties = openapi3.Schemas{
		"code":    openapi3.NewSchemaRef("#/components/schemas/ErrorCode", nil),
		"msgKey":  openapi3.NewStringSchema().NewRef(),
		"args":    openapi3.NewObjectSchema().WithAnyAdditionalProperties().NewRef(),
		"message": openapi3.NewStringSchema().NewRef(),
	}
	if data == nil {
		data = openapi3.NewSchemaRef("", &openapi3.Schema{Nullable: true, Description: "payload"})
	}
	s.Properties["data"] = data
	s.Required = []string{"code", "msgKey", "data"}
	return s
}

func operation(gen *openapi3gen.Generator, schemas openapi3.Schemas, r route.Route, ids map[string]int) (*openapi3.Operation, error) {
	op := openapi3.NewOperation()
	op.OperationID = operationID(r, ids)
	op.Summary = r.Title
	op.Tags = []string{r.Module}
	op.Extensions = map[string]any{"x-auth": r.Access.String(), "x-module": r.Module}
	if r.Access == route.Permission {
		op.Extensions["x-permission-code"] = r.PermissionCode()
	}
	if r.Access != route.Anonymous {
		op.Security = &openapi3.SecurityRequirements{{"bearer": []string{}}}
	}
	for _, q := range r.Query {
		op.AddParameter(openapi3.NewQueryParameter(q.Name).WithSchema(querySchema(q.Type)))
	}
	for _, m := range pathParam.FindAllStringSubmatch(r.Path, -1) {
		schema := openapi3.NewStringSchema()
		if t := strings.ToLower(m[2]); t == "long" || t == "int" {
			schema = openapi3.NewInt64Schema()
		}
		op.AddParameter(openapi3.NewPathParameter(m[1]).WithSchema(schema))
	}
	if r.Input != nil {
		ref, err := gen.NewSchemaRefForValue(r.Input, schemas)
		if err != nil {
			return nil, err
		}
		op.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(true).WithJSONSchemaRef(ref)}
	}
	var data *openapi3.SchemaRef
	if r.Output != nil {
		ref, err := gen.NewSchemaRefForValue(r.Output, schemas)
		if err != nil {
			return nil, err
		}
		data = ref
	}
	op.Responses = openapi3.NewResponses()
	op.Responses.Set("200", &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("envelope; code 0 on success, a business code otherwise").
		WithJSONSchema(envelopeSchema(data))})
	errResp := func(desc string) *openapi3.ResponseRef {
		return &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription(desc).
			WithJSONSchemaRef(openapi3.NewSchemaRef("#/components/schemas/Envelope", nil))}
	}
	op.Responses.Set("400", errResp("malformed input (48002)"))
	if r.Access != route.Anonymous {
		op.Responses.Set("401", errResp("missing, invalid, expired or revoked token (40006)"))
	}
	if r.Access == route.Permission {
		op.Responses.Set("403", errResp("permission not held (41001)"))
	}
	if r.Input != nil {
		op.Responses.Set("415", errResp("the body is not declared as JSON: Content-Type must be application/json or application/*+json (48006)"))
	}
	op.Responses.Set("429", errResp("rate limited (40008)"))
	op.Responses.Set("500", errResp("unhandled error (50000)"))
	return op, nil
}

// querySchema is the schema of a route.QueryParam type.
func querySchema(typ string) *openapi3.Schema {
	switch typ {
	case "int32":
		return openapi3.NewInt32Schema()
	case "int64":
		return openapi3.NewInt64Schema()
	case "bool":
		return openapi3.NewBoolSchema()
	case "date-time":
		s := openapi3.NewStringSchema()
		s.Description = "YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, YYYY-MM-DDTHH:MM:SS or RFC 3339, server-local time"
		return s
	case "[]string":
		return openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())
	}
	return openapi3.NewStringSchema()
}

// operationID is {Controller}_{Action} in ASCII (the contract's form, which
// client generators turn into method names): the module, then the title in
// PascalCase, or the method and path when the title is missing or has no
// ASCII letter; duplicates get a numeric suffix.
func operationID(r route.Route, ids map[string]int) string {
	action := pascalASCII(r.Title)
	if action == "" {
		action = pascalASCII(r.Method + " " + pathParam.ReplaceAllString(r.Path, "by $1"))
	}
	id := pascalASCII(r.Module) + "_" + action
	ids[id]++
	if n := ids[id]; n > 1 {
		id = fmt.Sprintf("%s%d", id, n)
	}
	return id
}

// pascalASCII joins the ASCII letter and digit runs of s in PascalCase;
// anything else separates words.
func pascalASCII(s string) string {
	var b strings.Builder
	up := true
	for _, c := range s {
		switch {
		case c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c)):
			if up {
				c = unicode.ToUpper(c)
			}
			b.WriteRune(c)
			up = false
		default:
			up = true
		}
	}
	return b.String()
}

// SortedPaths lists the document's paths (tests, diagnostics).
func SortedPaths(doc *openapi3.T) []string {
	var out []string
	for p := range doc.Paths.Map() {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
