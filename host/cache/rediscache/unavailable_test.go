//go:build !unit

package rediscache

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/cache/rediscache/redistest"
)

// replyServer is a stand-in Redis that answers every command with one
// error reply (what a loading, read-only or overloaded server says), so
// that go-redis parses a real reply off the wire.
func replyServer(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				r := bufio.NewReader(c)
				for skipCommand(r) == nil {
					if _, err := c.Write([]byte("-" + reply + "\r\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// skipCommand reads one RESP command (an array of bulk strings).
func skipCommand(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "*") {
		return fmt.Errorf("not an array: %q", line)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return err
	}
	for range n {
		head, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		size, err := strconv.Atoi(strings.TrimSpace(head[1:]))
		if err != nil {
			return err
		}
		if _, err := r.Discard(size + 2); err != nil {
			return err
		}
	}
	return nil
}

func client(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1, DialerRetries: 1})
}

func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// TestIsUnavailable classifies real go-redis errors: from a refused port,
// a stand-in server's error replies, a real server's error replies, a
// closed client and a cancelled context.
func TestIsUnavailable(t *testing.T) {
	ctx := context.Background()
	real := client(testAddr())
	t.Cleanup(func() { _ = real.Close() })
	key := "aktest:" + randHex(t) + ":k"
	t.Cleanup(func() { real.Del(context.Background(), key) })
	if err := real.Set(ctx, key, "v", time.Minute).Err(); err != nil {
		t.Fatalf("these tests need a Redis at %s: %v", testAddr(), err)
	}
	closed := client(testAddr())
	_ = closed.Close()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	errorReply := func(reply string) error {
		c := client(replyServer(t, reply))
		defer func() { _ = c.Close() }()
		return c.Get(ctx, "k").Err()
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", client(closedPort(t)).Ping(ctx).Err(), true},
		{"LOADING", errorReply("LOADING Redis is loading the dataset in memory"), true},
		{"READONLY", errorReply("READONLY You can't write against a read only replica."), true},
		{"MASTERDOWN", errorReply("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."), true},
		{"BUSY", errorReply("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT."), true},
		{"OOM", errorReply("OOM command not allowed when used memory > 'maxmemory'."), true},
		{"TRYAGAIN", errorReply("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{"CLUSTERDOWN", errorReply("CLUSTERDOWN The cluster is down"), true},
		{"max clients", errorReply("ERR max number of clients reached"), true},
		{"BUSYGROUP is a bug", errorReply("BUSYGROUP Consumer Group name already exists"), false},
		{"WRONGPASS is misconfiguration", errorReply("WRONGPASS invalid username-password pair or user is disabled."), false},
		{"NOAUTH is misconfiguration", errorReply("NOAUTH Authentication required."), false},
		{"WRONGTYPE", real.LPush(ctx, key, "x").Err(), false},
		{"NOSCRIPT", real.EvalSha(ctx, strings.Repeat("0", 40), nil).Err(), false},
		{"syntax error", real.Do(ctx, "SET", key, "v", "NOPE").Err(), false},
		{"miss", real.Get(ctx, key+":absent").Err(), false},
		{"closed client", closed.Ping(ctx).Err(), false},
		{"cancelled context", real.Ping(cancelled).Err(), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if tt.want && tt.err == nil {
			t.Errorf("%s: no error to classify", tt.name)
			continue
		}
		if got := IsUnavailable(tt.err); got != tt.want {
			t.Errorf("%s: IsUnavailable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
		if got := IsUnavailable(fmt.Errorf("wrapped: %w", tt.err)); tt.err != nil && got != tt.want {
			t.Errorf("%s wrapped: IsUnavailable = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestOutageMarksAndRecovers: a Cache whose server stops marks every
// method's error cache.ErrUnavailable, its tracker logs one WARN, and the
// same Cache works again once the server is back, with one INFO.
func TestOutageMarksAndRecovers(t *testing.T) {
	srv := redistest.Start(t)
	var buf syncBuf
	tr := NewTracker(hclog.New(&hclog.LoggerOptions{Output: &buf}))
	ctx := context.Background()
	c, err := New(ctx, config.Redis{Address: srv.Addr, KeyPrefix: "t:"}, WithTracker(tr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Set(ctx, "a", []byte("1"), time.Minute); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	ops := map[string]func() error{
		"get":          func() error { _, _, err := c.Get(ctx, "a"); return err },
		"set":          func() error { return c.Set(ctx, "a", []byte("1"), time.Minute) },
		"delete":       func() error { return c.Delete(ctx, "a") },
		"deletePrefix": func() error { _, err := c.DeletePrefix(ctx, "a"); return err },
		"putOnce":      func() error { return c.PutOnce(ctx, "o", []byte("1"), time.Minute) },
		"take":         func() error { _, _, err := c.Take(ctx, "o"); return err },
		"incr":         func() error { _, err := c.Incr(ctx, "n", 1, time.Minute); return err },
		"count":        func() error { _, _, err := c.Count(ctx, "n"); return err },
		"reset":        func() error { return c.Reset(ctx, "n") },
		"ping":         func() error { return c.Ping(ctx) },
		"lease":        func() error { _, err := c.TryLease(ctx, "l", "me", time.Minute); return err },
		"renew":        func() error { _, err := c.RenewLease(ctx, "l", "me", time.Minute); return err },
		"release":      func() error { return c.ReleaseLease(ctx, "l", "me") },
	}
	for name, op := range ops {
		err := op()
		if !errors.Is(err, cache.ErrUnavailable) {
			t.Errorf("%s while Redis is down: %v, want cache.ErrUnavailable", name, err)
		}
	}
	if _, down := tr.Down(); !down {
		t.Fatal("tracker not down")
	}
	if n := strings.Count(buf.String(), "redis unavailable"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, buf.String())
	}
	srv.Restart()
	// After PoolSize failed dials go-redis answers from its last dial error
	// until a background dial (every second) succeeds: back within ~1 s.
	deadline := time.Now().Add(5 * time.Second)
	for c.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("Redis not back 5 s after the restart")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for name, op := range ops {
		if err := op(); err != nil {
			t.Errorf("%s after the restart: %v", name, err)
		}
	}
	if _, down := tr.Down(); down {
		t.Fatal("tracker still down")
	}
	if n := strings.Count(buf.String(), "redis is back after"); n != 1 {
		t.Errorf("%d back lines, want 1:\n%s", n, buf.String())
	}
	// A real error reply is not an outage and proves Redis is up.
	// (a key of its own: the operations above may have left "a" a string)
	if err := c.client.LPush(ctx, "t:list", "x").Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, "list"); err == nil || errors.Is(err, cache.ErrUnavailable) {
		t.Errorf("WRONGTYPE: %v, want an unmarked error", err)
	}
}

type syncBuf struct {
	mu chan struct{}
	b  bytes.Buffer
}

func (s *syncBuf) lock() {
	if s.mu == nil {
		s.mu = make(chan struct{}, 1)
	}
	s.mu <- struct{}{}
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.lock()
	defer func() { <-s.mu }()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.lock()
	defer func() { <-s.mu }()
	return s.b.String()
}
