package kerneltest

import (
	"context"
	"crypto/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/database/dbtest"
)

// Environment variables that select the backend of every Start.
const (
	// EnvDB selects the database: Sqlite (default), PostgreSQL or MySql
	// (aliases as in dbtest: postgres, pg, mariadb, ...). The servers are
	// those of dbtest (ADMINKERNEL_TEST_POSTGRES, ADMINKERNEL_TEST_MYSQL).
	EnvDB = "ADMINKERNEL_TEST_DB"
	// EnvCache selects the cache: memory (default) or redis.
	EnvCache = "ADMINKERNEL_TEST_CACHE"
	// EnvRedis is the Redis host:port (default 127.0.0.1:6379), shared
	// with the rediscache tests.
	EnvRedis = "ADMINKERNEL_TEST_REDIS"

	// CacheMemory and CacheRedis are the values of EnvCache.
	CacheMemory = "memory"
	CacheRedis  = "redis"
)

// Backend returns the database (config.DBSqlite, DBPostgreSQL or DBMySQL)
// and the cache (CacheMemory or CacheRedis) the environment selects. An
// unknown value fails the test.
func Backend(t testing.TB) (db, cache string) {
	t.Helper()
	db = config.DBSqlite
	if v := strings.TrimSpace(os.Getenv(EnvDB)); v != "" {
		switch strings.ToLower(v) {
		case "sqlite", "sqlite3":
			db = config.DBSqlite
		case "postgresql", "postgres", "pg", "pgsql":
			db = config.DBPostgreSQL
		case "mysql", "mariadb":
			db = config.DBMySQL
		default:
			t.Fatalf("%s=%q: want Sqlite, PostgreSQL or MySql", EnvDB, v)
		}
	}
	cache = CacheMemory
	switch v := strings.ToLower(strings.TrimSpace(os.Getenv(EnvCache))); v {
	case "", "memory", "inprocess", "in-process":
	case "redis":
		cache = CacheRedis
	default:
		t.Fatalf("%s=%q: want memory or redis", EnvCache, v)
	}
	return db, cache
}

// RedisAddr is the test Redis address.
func RedisAddr() string {
	if a := strings.TrimSpace(os.Getenv(EnvRedis)); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

// BackendEnviron returns the settings that put a kernel on the selected
// backend: a fresh database (dropped when the test ends) unless environ
// already sets Service:Database:DbType or ConnectionString, and Redis with
// a unique key prefix (whose keys are removed when the test ends) unless
// environ already sets Service:Cache:Provider or a Redis setting.
func BackendEnviron(t testing.TB, environ []string) []string {
	t.Helper()
	db, cache := Backend(t)
	var out []string
	if db != config.DBSqlite && !sets(environ, "service__database__dbtype", "service__database__connectionstring") {
		cfg := dbtest.Config(t, db)
		out = append(out,
			"Service__Database__DbType="+cfg.Service.Database.DbType,
			"Service__Database__ConnectionString="+cfg.Service.Database.ConnectionString.Reveal())
	}
	if cache == CacheRedis && !sets(environ, "service__cache__provider", "service__cache__redis__") {
		prefix := RedisPrefix(t)
		out = append(out,
			"Service__Cache__Provider=Redis",
			"Service__Cache__Redis__Address="+RedisAddr(),
			"Service__Cache__Redis__KeyPrefix="+prefix)
	}
	return out
}

// RedisPrefix returns a fresh key prefix ("aktest:<random>:") and removes
// every key under it when the test ends (registered now, so it runs after
// the cleanups of kernels started later). An unreachable Redis fails the
// test.
func RedisPrefix(t testing.TB) string {
	t.Helper()
	prefix := "aktest:" + strings.ToLower(rand.Text()[:16]) + ":"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rediscache.New(ctx, config.Redis{Address: RedisAddr(), KeyPrefix: prefix})
	if err != nil {
		t.Fatalf("kerneltest: %s=redis needs a Redis 6.2+ at %s (set %s to another host:port): %v", EnvCache, RedisAddr(), EnvRedis, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.DeletePrefix(ctx, ""); err != nil {
			t.Errorf("kerneltest: removing the test keys under %s: %v", prefix, err)
		}
		_ = c.Close()
	})
	return prefix
}

// sets reports whether environ holds a setting whose key (lower case, "__"
// or ":" between levels) starts with one of the prefixes.
func sets(environ []string, prefixes ...string) bool {
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		k = strings.ToLower(strings.ReplaceAll(k, ":", "__"))
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				return true
			}
		}
	}
	return false
}
