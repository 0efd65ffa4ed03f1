package rediscache

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/adminkernel/kernel/config"
)

func TestWrongAddressError(t *testing.T) {
	const password = "hunter2-secret"
	const addr = "127.0.0.1:1" // nothing listens on port 1
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := New(ctx, config.Redis{Address: addr, Password: config.Secret(password)})
	if err == nil {
		_ = c.Close()
		t.Fatal("New with a wrong address: err = nil")
	}
	if !strings.Contains(err.Error(), addr) {
		t.Errorf("error %q does not name the address %s", err, addr)
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("error %q reveals the password", err)
	}
}

func TestNewRejectsEmptyAddress(t *testing.T) {
	if _, err := New(context.Background(), config.Redis{}); err == nil {
		t.Fatal("New with no address: err = nil")
	}
}

func TestTLSConfig(t *testing.T) {
	tc, err := tlsConfig("redis.example:6380", config.RedisTLS{Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if tc.MinVersion != tls.VersionTLS12 || tc.ServerName != "redis.example" || tc.InsecureSkipVerify || tc.RootCAs != nil {
		t.Errorf("default tls config = min %x, server %q, insecure %v, roots %v", tc.MinVersion, tc.ServerName, tc.InsecureSkipVerify, tc.RootCAs)
	}
	tc, err = tlsConfig("10.0.0.1:6380", config.RedisTLS{Enabled: true, ServerName: "cache.internal", InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if tc.ServerName != "cache.internal" || !tc.InsecureSkipVerify {
		t.Errorf("explicit tls config = server %q, insecure %v", tc.ServerName, tc.InsecureSkipVerify)
	}
	dir := t.TempDir()
	if _, err := tlsConfig("h:1", config.RedisTLS{CAFile: filepath.Join(dir, "missing.pem")}); err == nil {
		t.Error("missing ca file: err = nil")
	}
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tlsConfig("h:1", config.RedisTLS{CAFile: bad}); err == nil {
		t.Error("ca file without pem: err = nil")
	}
}

func TestEscapeGlob(t *testing.T) {
	if got, want := escapeGlob(`a*b?c[d]e\f`), `a\*b\?c\[d\]e\\f`; got != want {
		t.Fatalf("escapeGlob = %q, want %q", got, want)
	}
}

// TestNewClientTopology: the settings pick the client (no server is
// contacted), and conflicting settings are refused.
func TestNewClientTopology(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     config.Redis
		cluster bool
		wantErr string
	}{
		{name: "single address", cfg: config.Redis{Address: "127.0.0.1:6379"}},
		{name: "sentinel", cfg: config.Redis{SentinelAddresses: []string{" 127.0.0.1:26379 ", "127.0.0.1:26380"}, MasterName: "m"}},
		{name: "cluster", cfg: config.Redis{ClusterAddresses: []string{"127.0.0.1:7000"}}, cluster: true},
		{name: "sentinel without master", cfg: config.Redis{SentinelAddresses: []string{"127.0.0.1:26379"}}, wantErr: "master name"},
		{name: "both", cfg: config.Redis{SentinelAddresses: []string{"a:1"}, MasterName: "m", ClusterAddresses: []string{"b:2"}}, wantErr: "exclusive"},
		{name: "nothing", cfg: config.Redis{}, wantErr: "address is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(tc.cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			if _, isCluster := c.(*redis.ClusterClient); isCluster != tc.cluster {
				t.Fatalf("client %T, cluster = %v", c, tc.cluster)
			}
		})
	}
	if got := Describe(config.Redis{SentinelAddresses: []string{"s:1"}, MasterName: "m", Password: "pw"}); strings.Contains(got, "pw") || !strings.Contains(got, "s:1") {
		t.Errorf("Describe = %q", got)
	}
}
