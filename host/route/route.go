// Package route is the kernel's route table: every endpoint is registered
// with its access level, so permission codes are derived from the routes
// themselves and can never drift from them.
package route

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v3"
)

// Access is what a caller must present to reach a route.
type Access uint8

// Access levels (wire contract legend A, T, S, P).
const (
	// Anonymous routes need nothing.
	Anonymous Access = iota
	// Token routes need a valid access token; the session is not re-checked
	// (logout only).
	Token
	// Session routes need a valid token whose session is still active.
	Session
	// Permission routes need an active session and the route's permission
	// code; the super-admin passes without it.
	Permission
)

func (a Access) String() string {
	switch a {
	case Anonymous:
		return "anonymous"
	case Token:
		return "authenticated"
	case Session:
		return "session"
	case Permission:
		return "permission"
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// Route is one registered endpoint.
type Route struct {
	Method string
	// Path is the full template in the contract's notation, e.g.
	// /api/v1/sys/user/{id} or /api/v1/sys/mfa/high-sensitivity/{id:long}.
	Path   string
	Access Access
	// Module is the name Api:DisabledModules refers to.
	Module string
	// Title names the operation in the operation log and the contract
	// document (optional).
	Title string
	// OpLog marks a route whose calls are written to the operation log
	// although it is not a write: an export (GET) or an anonymous call that
	// changes an account's factors. Every write (any method but GET, HEAD
	// and OPTIONS) of a signed-in caller is logged without it
	// (host/oplog.Logged); marking one is refused by a test.
	OpLog bool
	// Reauth marks a route the wire contract tags +R: while TOTP is on
	// (sys.security.totp.enabled) it needs a recent re-authentication of
	// the caller's session (host/mfa/reauth), else HTTP 403 / 40024. The codes
	// of these routes are the default high-sensitivity set.
	Reauth bool
	// StreamBody marks a route that reads its request body as a stream
	// (file uploads): Service:Http:BodyLimitBytes does not apply to it, the
	// handler enforces its own limit while reading.
	StreamBody bool
	// Input and Output are the Go types of the JSON body and of the
	// envelope's data, for the contract document (optional).
	Input, Output any
	// Query lists the query parameters the handler reads, for the contract
	// document (Queries, Paged). A test of host records the names handlers
	// actually read (request.TraceQueries) and fails on an undeclared one.
	Query   []QueryParam
	Handler fiber.Handler
}

// QueryParam is one documented query parameter.
type QueryParam struct {
	Name string
	// Type is string (default), int32, int64, bool, date-time or
	// []string (a repeated parameter).
	Type string
}

// queryTypes are the types a QueryParam may declare.
var queryTypes = map[string]bool{"string": true, "int32": true, "int64": true, "bool": true, "date-time": true, "[]string": true}

// PagingQuery are the contract's PageInputBase parameters (request.Paging).
var PagingQuery = []QueryParam{{"Current", "int32"}, {"Size", "int32"}, {"SortField", "string"}, {"SortOrder", "string"}}

// Queries documents query parameters, each "Name" (a string) or
// "Name:type" (see QueryParam.Type). An unknown type panics: a programming
// error the first test that builds the kernel finds.
func (r *Route) Queries(params ...string) *Route {
	for _, p := range params {
		name, typ, ok := strings.Cut(p, ":")
		if !ok {
			typ = "string"
		}
		if name == "" || !queryTypes[typ] {
			panic(fmt.Sprintf("route %s %s: bad query parameter %q", r.Method, r.Path, p))
		}
		r.Query = append(r.Query, QueryParam{Name: name, Type: typ})
	}
	return r
}

// Paged documents the paging parameters (PagingQuery) and the filters
// (as Queries).
func (r *Route) Paged(filters ...string) *Route {
	r.Query = append(r.Query, PagingQuery...)
	return r.Queries(filters...)
}

// Doc sets the title and the documented body and data types.
func (r *Route) Doc(title string, input, output any) *Route {
	r.Title, r.Input, r.Output = title, input, output
	return r
}

// NeedsReauth marks the route +R (see Route.Reauth).
func (r *Route) NeedsReauth() *Route {
	r.Reauth = true
	return r
}

// StreamsBody marks the route StreamBody.
func (r *Route) StreamsBody() *Route {
	r.StreamBody = true
	return r
}

// PermissionCode is UPPER(method) + ":/" + lower(template without the
// leading slash), e.g. DELETE:/api/v1/sys/session/{sessionid}.
func (r Route) PermissionCode() string {
	return PermissionCode(r.Method, r.Path)
}

// PermissionCode derives the code of a method and route template.
func PermissionCode(method, path string) string {
	return strings.ToUpper(method) + ":/" + strings.ToLower(strings.TrimPrefix(path, "/"))
}

// Table collects routes before they are mounted.
type Table struct {
	routes []*Route
	seen   map[string]string // method + fiber path → template
	around []func(Route) fiber.Handler
}

// Around adds a per-route middleware factory, run after the access guard
// and before the handler (the operation log uses it). A factory returning
// nil skips that route.
func (t *Table) Around(f func(Route) fiber.Handler) { t.around = append(t.around, f) }

// NewTable returns an empty table.
func NewTable() *Table { return &Table{seen: make(map[string]string)} }

// Group registers routes of one module under a path prefix.
type Group struct {
	table  *Table
	module string
	prefix string
}

// Group starts registering routes of module under prefix.
func (t *Table) Group(module, prefix string) *Group {
	return &Group{table: t, module: module, prefix: strings.TrimSuffix(prefix, "/")}
}

// Group returns a sub-group with a longer prefix in the same module.
func (g *Group) Group(prefix string) *Group {
	return &Group{table: g.table, module: g.module, prefix: g.prefix + strings.TrimSuffix(prefix, "/")}
}

// Add registers a route and returns it so callers can set Title or OpLog.
// Registering one method and path twice panics: it is a programming error
// found by the first test that builds the kernel.
func (g *Group) Add(method, path string, access Access, h fiber.Handler) *Route {
	r := &Route{Method: strings.ToUpper(method), Path: g.prefix + path, Access: access, Module: g.module, Handler: h}
	key := r.Method + " " + param.ReplaceAllString(strings.ToLower(r.Path), "{}")
	if prev, ok := g.table.seen[key]; ok {
		panic(fmt.Sprintf("route %s %s registered twice (first as %s)", r.Method, r.Path, prev))
	}
	g.table.seen[key] = r.Path
	g.table.routes = append(g.table.routes, r)
	return r
}

// Get registers a GET route.
func (g *Group) Get(path string, access Access, h fiber.Handler) *Route {
	return g.Add(fiber.MethodGet, path, access, h)
}

// Post registers a POST route.
func (g *Group) Post(path string, access Access, h fiber.Handler) *Route {
	return g.Add(fiber.MethodPost, path, access, h)
}

// Put registers a PUT route.
func (g *Group) Put(path string, access Access, h fiber.Handler) *Route {
	return g.Add(fiber.MethodPut, path, access, h)
}

// Delete registers a DELETE route.
func (g *Group) Delete(path string, access Access, h fiber.Handler) *Route {
	return g.Add(fiber.MethodDelete, path, access, h)
}

// Routes returns the registered routes sorted by path, then method.
func (t *Table) Routes() []Route {
	out := make([]Route, len(t.routes))
	for i, r := range t.routes {
		out[i] = *r
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// Guards supplies the middleware that enforces each access level. A level
// used by a route but missing here makes Mount fail: a route is never
// mounted with weaker protection than it declares.
type Guards map[Access]func(Route) fiber.Handler

// Mount adds every route of an enabled module to the router, each behind the
// guard of its access level. Disabled modules (compared case-insensitively)
// are skipped, so their paths answer 404.
func (t *Table) Mount(r fiber.Router, guards Guards, disabled []string) error {
	off := make(map[string]bool, len(disabled))
	for _, m := range disabled {
		off[strings.ToLower(strings.TrimSpace(m))] = true
	}
	for _, rt := range t.Routes() {
		if off[strings.ToLower(rt.Module)] {
			continue
		}
		var chain []any
		if rt.Access != Anonymous {
			g, ok := guards[rt.Access]
			if !ok || g == nil {
				return fmt.Errorf("route %s %s needs %s access but no guard for it is installed", rt.Method, rt.Path, rt.Access)
			}
			chain = append(chain, g(rt))
		}
		for _, f := range t.around {
			if h := f(rt); h != nil {
				chain = append(chain, h)
			}
		}
		chain = append(chain, rt.Handler)
		r.Add([]string{rt.Method}, FiberPath(rt.Path), chain[0], chain[1:]...)
	}
	return nil
}

var param = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)(?::([A-Za-z]+))?\}`)

// FiberPath converts a contract template (/user/{id}, /x/{id:long}) to
// Fiber's syntax (/user/:id, /x/:id<int>).
func FiberPath(template string) string {
	return param.ReplaceAllStringFunc(template, func(m string) string {
		sub := param.FindStringSubmatch(m)
		switch strings.ToLower(sub[2]) {
		case "long", "int":
			return ":" + sub[1] + "<int>"
		default:
			return ":" + sub[1]
		}
	})
}

// Table returns the table the group registers into.
func (g *Group) Table() *Table { return g.table }

// Prefix returns the group's path prefix.
func (g *Group) Prefix() string { return g.prefix }
