// Package s3test starts a real S3 server for tests: versitygw (a Go S3
// gateway) serving a POSIX directory, and gives the kernel settings that
// use it (Service:Upload:Storage=S3).
package s3test

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Bin finds the versitygw binary: on PATH or in $(go env GOPATH)/bin.
func Bin(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.CommandContext(context.Background(), "go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "versitygw")
		if _, err := os.Stat(p); err == nil { //nolint:gosec // G703: a path under the test environment's GOPATH
			return p
		}
	}
	t.Fatalf("versitygw is needed for the S3 storage tests and was not found on PATH or in $(go env GOPATH)/bin; install it with: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0")
	return ""
}

// Versity starts versitygw on a free port over a temporary directory with
// one bucket and returns the kernel settings that use it. It is stopped
// when the test ends.
func Versity(t testing.TB) []string {
	t.Helper()
	bin := Bin(t)
	root := t.TempDir()
	const bucket, access, secret = "kernel-files", "akfilestest", "akfilestestsecret0123456789"
	if err := os.Mkdir(filepath.Join(root, bucket), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	var logs bytes.Buffer
	cmd := exec.CommandContext(context.Background(), bin, "--access", access, "--secret", secret, "--port", addr, "--quiet", "posix", root) //nolint:gosec // G204: the test's own binary and arguments
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(access, secret, ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ok, err := c.BucketExists(ctx, bucket)
		cancel()
		if err == nil && ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("versitygw at %s did not answer (bucket %s: %v, %v):\n%s", addr, bucket, ok, err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return []string{
		"Service__Upload__Storage=S3",
		"Service__Upload__S3__Endpoint=" + addr,
		"Service__Upload__S3__Bucket=" + bucket,
		"Service__Upload__S3__AccessKey=" + access,
		"Service__Upload__S3__SecretKey=" + secret,
		"Service__Upload__S3__PathStyle=true",
		"Service__Upload__S3__Prefix=test/",
	}
}
