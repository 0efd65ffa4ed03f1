// Command load is a closed-loop HTTP/1.1 load generator for loopback
// benchmarks. It keeps -c keep-alive connections busy for -d after a
// -warmup and prints requests/s, p50 and p99 (and more) as JSON.
//
//	go run ./bench/cmd/load -url http://127.0.0.1:5100/api/v1/ping \
//	    -H "Authorization: Bearer $TOKEN" -c 16 -d 5s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/adminkernel/kernel/bench/internal/load"
)

type headers []string

func (h *headers) String() string     { return strings.Join(*h, ", ") }
func (h *headers) Set(v string) error { *h = append(*h, v); return nil }

func main() {
	var hs headers
	var (
		target   = flag.String("url", "", "absolute http URL (loopback only unless -any-host)")
		method   = flag.String("method", http.MethodGet, "request method")
		body     = flag.String("body", "", "request body (sent as is)")
		conns    = flag.Int("c", 16, "concurrent keep-alive connections")
		duration = flag.Duration("d", 5*time.Second, "measured duration (at most 10s)")
		warmup   = flag.Duration("warmup", time.Second, "warm-up before measuring (not recorded)")
		expect   = flag.Int("expect", http.StatusOK, "status that counts as success")
		client   = flag.String("client", "raw", "raw (hand-written HTTP/1.1 client) or nethttp")
		name     = flag.String("name", "", "label stored in the JSON result")
		anyHost  = flag.Bool("any-host", false, "allow a non-loopback target")
	)
	flag.Var(&hs, "H", `request header "Name: value" (repeatable)`)
	flag.Parse()
	if err := run(*target, *method, *body, *conns, *duration, *warmup, *expect, *client, *name, *anyHost, hs); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(target, method, body string, conns int, duration, warmup time.Duration, expect int, client, name string, anyHost bool, hs headers) error {
	if target == "" {
		return fmt.Errorf("-url is required")
	}
	if duration > 10*time.Second {
		return fmt.Errorf("-d %s: runs are capped at 10s", duration)
	}
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	if h := u.Hostname(); !anyHost && h != "127.0.0.1" && h != "localhost" && h != "::1" {
		return fmt.Errorf("%s is not a loopback address (use -any-host to override)", h)
	}
	header := http.Header{}
	for _, h := range hs {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return fmt.Errorf("-H %q: want \"Name: value\"", h)
		}
		header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := load.Run(ctx, load.Config{
		URL: target, Method: method, Body: []byte(body), Header: header,
		Connections: conns, Duration: duration, Warmup: warmup, Expect: expect, Client: client,
	})
	res.Name = name
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if encErr := enc.Encode(res); encErr != nil {
		return encErr
	}
	return err
}
