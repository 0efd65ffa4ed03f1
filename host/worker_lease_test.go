//go:build !unit

package host_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/syncbuf"
)

// TestDuplicateWorkerIDRefusedInProduction: two kernels on one Redis with
// the same explicit Service:Snowflake:WorkerId. In Production the second
// refuses to start, naming the holder (host name and process id of the
// first); in Development it starts with a warning naming it; once the first
// has stopped (its lease released) a Production kernel takes the id.
func TestDuplicateWorkerIDRefusedInProduction(t *testing.T) {
	prefix := kerneltest.RedisPrefix(t) // fails the test when Redis is absent
	settings := func(env string) *config.Config {
		return load(t, t.TempDir(), env, testKey,
			"Service__Database__EnableCodeFirstInProduction=true",
			"Service__Security__Password__Pbkdf2Iterations=100000",
			"Service__Cache__Provider=Redis",
			"Service__Cache__Redis__Address="+kerneltest.RedisAddr(),
			"Service__Cache__Redis__KeyPrefix="+prefix,
			"Service__Snowflake__WorkerId=7")
	}
	first, _ := start(t, settings(config.Production))
	if l := first.WorkerLease(); l == nil || l.Worker() != 7 {
		t.Fatalf("the first kernel did not reserve worker 7: %v", l)
	}
	hostname, _ := os.Hostname()
	holder := fmt.Sprintf("held by %s pid %d #", hostname, os.Getpid())

	logs := &syncbuf.Buffer{}
	k, err := newKernel(settings(config.Production), logs)
	if err == nil {
		k.Close()
		t.Fatalf("a second Production kernel started on the leased worker id 7:\n%s", logs)
	}
	for _, want := range []string{"Service:Snowflake:WorkerId 7 is leased by another live replica", holder, "leave it 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not contain %q", err, want)
		}
	}

	dev, log := start(t, settings(config.Development))
	if !strings.Contains(log, "Service:Snowflake:WorkerId is leased by another replica") || !strings.Contains(log, "holder=\""+holder) {
		t.Errorf("Development start does not warn naming the holder:\n%s", log)
	}
	if dev.WorkerLease() != nil {
		t.Error("the Development kernel holds a lease on a taken id")
	}
	dev.Close()

	first.Close() // releases worker 7
	again, _ := start(t, settings(config.Production))
	if l := again.WorkerLease(); l == nil || l.Worker() != 7 {
		t.Fatalf("worker 7 was not reserved after the first kernel stopped: %v", l)
	}
}

func newKernel(cfg *config.Config, logs *syncbuf.Buffer) (*host.Kernel, error) {
	return host.New(context.Background(), host.Options{Config: cfg, LogOutput: logs})
}
