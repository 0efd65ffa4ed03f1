package host_test

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// TestQueryParametersDocumented calls every GET route once as the
// super-admin with a query tracer installed and checks that each query
// parameter a handler reads is declared on its route (route.Queries,
// route.Paged), so the contract document describes it, and that every
// …/page route declares the paging parameters.
func TestQueryParametersDocumented(t *testing.T) {
	var mu sync.Mutex
	read := map[string]map[string]bool{} // fiber route path → lower-case names
	request.TraceQueries(func(path, name string) {
		mu.Lock()
		defer mu.Unlock()
		if read[path] == nil {
			read[path] = map[string]bool{}
		}
		read[path][strings.ToLower(name)] = true
	})
	t.Cleanup(func() { request.TraceQueries(nil) })

	k := kerneltest.Start(t, nil)
	token := k.Admin()
	params := regexp.MustCompile(`\{[^}]+\}`)
	declared := map[string]map[string]bool{}
	called := 0
	for _, r := range k.Routes() {
		if r.Method != "GET" || strings.HasPrefix(r.Path, "/hub/") {
			continue
		}
		names := map[string]bool{}
		for _, q := range r.Query {
			names[strings.ToLower(q.Name)] = true
		}
		declared[route.FiberPath(r.Path)] = names
		if strings.HasSuffix(r.Path, "/page") {
			for _, q := range route.PagingQuery {
				if !names[strings.ToLower(q.Name)] {
					t.Errorf("GET %s: paging parameter %s not declared (route.Paged)", r.Path, q.Name)
				}
			}
		}
		req := httptest.NewRequestWithContext(t.Context(), "GET", params.ReplaceAllString(r.Path, "1"), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := k.App().Test(req, fiber.TestConfig{Timeout: time.Minute})
		if err != nil {
			t.Fatalf("GET %s: %v", r.Path, err)
		}
		_ = resp.Body.Close()
		called++
	}
	mu.Lock()
	defer mu.Unlock()
	if len(read) == 0 || called == 0 {
		t.Fatalf("no query parameter read by %d GET routes: the tracer is not wired", called)
	}
	for path, names := range read {
		d, ok := declared[path]
		if !ok {
			continue // a route of another test's kernel or a non-GET route
		}
		for n := range names {
			if !d[n] {
				t.Errorf("GET %s reads query parameter %q, which its route does not declare", path, n)
			}
		}
	}
}
