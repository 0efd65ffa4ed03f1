package notice

import (
	"context"
	"strings"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/route"
)

// A notice's buttons run with the reader's session, so an action that calls
// the API would let a publisher act as every reader (a confused deputy: an
// administrator's notice making the super-admin call a route the
// administrator may not). Such an action is accepted at publication only
// when its method and path name routes of the route table and the publisher
// may call every one of them. A GET of a path outside /api is a plain link
// the console opens in its own router: it calls nothing.

// CallsAPI reports whether the console calls the API for a (valid) action:
// every POST (the console posts to the URL as it is), and a GET whose path
// is /api or under it (compared case-insensitively, as the router does).
func CallsAPI(a Action) bool {
	if a.Method != "GET" {
		return true
	}
	p := strings.ToLower(actionPath(a.URL))
	return p == "/api" || strings.HasPrefix(p, "/api/")
}

// actionPath is the path of a site URL: up to the query or fragment.
func actionPath(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i]
	}
	return u
}

// apiSegments splits the path of an API action into its segments, or
// reports false when the path could reach another route than the one it
// spells: percent-escapes, empty segments ("//") and dot segments are
// refused (a browser or the server would rewrite them). One trailing slash
// is dropped (the router ignores it).
func apiSegments(u string) ([]string, bool) {
	p := actionPath(u)
	if strings.Contains(p, "%") || !strings.HasPrefix(p, "/") {
		return nil, false
	}
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	segs := strings.Split(p[1:], "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return nil, false
		}
	}
	return segs, true
}

// Resolve returns the routes of table that a request of method to the
// site URL u may reach: the method is equal and every segment of the
// template matches (a literal case-insensitively, a parameter {name} or
// {name:type} any segment — wider than the router, which also checks a
// parameter's type, so nothing the router reaches is missed). None when
// the path is not one Resolve can vouch for (apiSegments).
func Resolve(table []route.Route, method, u string) []route.Route {
	segs, ok := apiSegments(u)
	if !ok {
		return nil
	}
	var out []route.Route
	for _, r := range table {
		if !strings.EqualFold(r.Method, method) {
			continue
		}
		tpl := strings.Split(strings.TrimPrefix(r.Path, "/"), "/")
		if len(tpl) != len(segs) {
			continue
		}
		match := true
		for i, t := range tpl {
			if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
				continue
			}
			if !strings.EqualFold(t, segs[i]) {
				match = false
				break
			}
		}
		if match {
			out = append(out, r)
		}
	}
	return out
}

// CheckActions applies the action rule to validated actions: an action
// that calls the API (CallsAPI) must resolve to at least one route of
// table (else 45004) and holds must accept the permission code of every
// Permission route it resolves to (else 45006, args method and path).
// Anonymous, token and session routes are open to every signed-in reader
// anyway. A GET of a path outside /api is a plain link and always passes.
func CheckActions(ctx context.Context, actions []Action, table []route.Route, holds func(ctx context.Context, code string) (bool, error)) error {
	for _, a := range actions {
		if !CallsAPI(a) {
			continue
		}
		hit := Resolve(table, a.Method, a.URL)
		if len(hit) == 0 {
			return errcode.New(errcode.NoticeActionInvalid)
		}
		for _, r := range hit {
			if r.Access != route.Permission {
				continue
			}
			ok, err := holds(ctx, r.PermissionCode())
			if err != nil {
				return err
			}
			if !ok {
				return errcode.New(errcode.NoticeActionNotPermitted).With("method", a.Method).With("path", actionPath(a.URL))
			}
		}
	}
	return nil
}
