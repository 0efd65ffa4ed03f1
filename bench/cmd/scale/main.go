// Command scale measures the kernel on a database of a million users
// (issue 27, items 3 and 4; docs/design/benchmarks.md "A million users").
//
//	go run ./bench/cmd/scale -db postgres            # fill (once) and measure
//	go run ./bench/cmd/scale -db mysql -users 1000000
//	go run ./bench/cmd/scale -db sqlite -users 100000 -sessions 100000 -only refresh
//
// It creates (or reuses) the database ak_scale on the server, lets the
// kernel binary migrate and seed it, fills it with -users users across
// -orgs organisations (a three-level tree under the seeded root), -roles
// roles, one or two roles per user, and -sessions session rows (1 000 of
// them belong to one user), then starts the kernel against it with Redis
// and measures, with bench/internal/load, the admin pages and session
// operations, printing the p50/p99 of each and the EXPLAIN of every
// statement the user page runs (captured from the kernel's own SQL log).
// The report goes to <out>/scale-<db>.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

type options struct {
	db         string // postgres | mysql | sqlite
	admin      string // admin DSN (CREATE DATABASE)
	name       string // database name
	users      int
	orgs       int
	roles      int
	sessions   int
	bin        string
	out        string
	redis      string
	duration   time.Duration
	conns      int
	refill     bool
	skipFill   bool
	skipExplan bool
	only       string // "" (every scenario), "pages", "sessions" or "refresh"
}

func main() {
	var o options
	flag.StringVar(&o.db, "db", "postgres", "postgres, mysql or sqlite (the kernel's file under -out, in-process cache)")
	flag.StringVar(&o.admin, "admin", "", "admin DSN (default postgres://postgres@127.0.0.1:5432/test?sslmode=disable or root@tcp(127.0.0.1:3306)/test)")
	flag.StringVar(&o.name, "name", "ak_scale", "database to create or reuse")
	flag.IntVar(&o.users, "users", 1_000_000, "users to create")
	flag.IntVar(&o.orgs, "orgs", 1_000, "organisations (three levels under the seeded root)")
	flag.IntVar(&o.roles, "roles", 60, "roles (each user holds one or two; one user holds 50)")
	flag.IntVar(&o.sessions, "sessions", 1_000_000, "session rows (1 000 belong to one user)")
	flag.StringVar(&o.bin, "bin", "", "kernel binary (default: built into <out>/bin)")
	flag.StringVar(&o.out, "out", "bench/out", "output directory")
	flag.StringVar(&o.redis, "redis", "127.0.0.1:6379", "Redis address for the kernel's cache")
	flag.DurationVar(&o.duration, "d", 5*time.Second, "measured time per scenario")
	flag.IntVar(&o.conns, "c", 4, "concurrent connections per scenario")
	flag.BoolVar(&o.refill, "refill", false, "drop and refill the database")
	flag.BoolVar(&o.skipFill, "measure-only", false, "do not fill (the database must be filled)")
	flag.BoolVar(&o.skipExplan, "no-explain", false, "skip the EXPLAIN capture")
	flag.StringVar(&o.only, "only", "", "measure only this scenario group: pages (the admin pages, searches, login and permissions of the 50-role user), sessions (login, refresh and force-logout of the user with 1 000 sessions) refresh (refresh throughput) or resources (the example inventory application's org-scoped stock-level resource at a million rows; runs that binary)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func run(ctx context.Context, o options) error {
	if o.db != "postgres" && o.db != "mysql" && o.db != "sqlite" {
		return fmt.Errorf("-db must be postgres, mysql or sqlite, not %q", o.db)
	}
	if o.only != "" && o.only != "refresh" && o.only != "sessions" && o.only != "pages" && o.only != "resources" {
		return fmt.Errorf("-only must be empty, pages, sessions, refresh or resources, not %q", o.only)
	}
	if err := os.MkdirAll(o.out, 0o750); err != nil {
		return err
	}
	if o.bin == "" && o.only == "resources" {
		if err := buildInventory(ctx, &o); err != nil {
			return err
		}
	}
	if o.bin == "" {
		o.bin = filepath.Join(o.out, "bin", "adminkernel")
		logf("building %s", o.bin)
		//nolint:gosec // fixed arguments
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", o.bin, "./host/cmd/adminkernel")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building the kernel: %w", err)
		}
	}
	t, err := openTarget(ctx, o)
	if err != nil {
		return err
	}
	defer t.close()
	if !o.skipFill {
		if err := fill(ctx, o, t); err != nil {
			return err
		}
	}
	return measure(ctx, o, t)
}
