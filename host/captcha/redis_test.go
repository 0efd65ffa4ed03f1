//go:build !unit

package captcha_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/host/captcha"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestCaptchaPendingCapBoundsRedis: with Redis the answers live in Redis;
// past the cap the number of answer keys there stays at the cap. The kernel
// runs on Redis whatever the backend selection (the in-process bound is
// TestCaptchaPendingCapBoundsMemory).
func TestCaptchaPendingCapBoundsRedis(t *testing.T) {
	const (
		capAnswers = 200
		beyond     = 1000
	)
	k := kerneltest.Start(t, []string{"Service__Security__Captcha__MaxPending=" + strconv.Itoa(capAnswers),
		"Service__Cache__Provider=Redis", "Service__Cache__Redis__Address=" + kerneltest.RedisAddr(),
		"Service__Cache__Redis__KeyPrefix=" + kerneltest.RedisPrefix(t)})
	rdb := redis.NewClient(&redis.Options{Addr: kerneltest.RedisAddr()})
	t.Cleanup(func() { _ = rdb.Close() })
	pattern := k.Config().Service.Cache.Redis.KeyPrefix + captcha.KeyPrefix + "*"
	keys := func() int {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		n := 0
		iter := rdb.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			n++
		}
		if err := iter.Err(); err != nil {
			t.Fatalf("scanning %s: %v", pattern, err)
		}
		return n
	}
	for i := range capAnswers {
		if s := k.Do("GET", captchaPath, "", nil).Status; s != http.StatusOK {
			t.Fatalf("captcha %d = HTTP %d below the cap", i+1, s)
		}
	}
	if got := keys(); got != capAnswers {
		t.Fatalf("%d answer keys in Redis after %d captchas, want %d", got, capAnswers, capAnswers)
	}
	for i := range beyond {
		if s := k.Do("GET", captchaPath, "", nil).Status; s != http.StatusTooManyRequests {
			t.Fatalf("captcha %d beyond the cap = HTTP %d, want 429", i+1, s)
		}
	}
	got := keys()
	t.Logf("Redis: %d answer keys after %d captchas and %d refused requests", got, capAnswers, beyond)
	if got != capAnswers {
		t.Fatalf("%d answer keys in Redis after %d refused requests, want %d", got, beyond, capAnswers)
	}
}
