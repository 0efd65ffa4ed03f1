//go:build !unit

package file_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/adminkernel/kernel/host/kerneltest"
)

// pngBytes is a PNG signature followed by filler: it sniffs as image/png.
func pngBytes(n int) []byte {
	b := make([]byte, n)
	copy(b, "\x89PNG\r\n\x1a\n")
	for i := 8; i < n; i++ {
		b[i] = byte(i * 7)
	}
	return b
}

// zipBytes sniffs as application/zip.
func zipBytes(n int) []byte {
	b := make([]byte, n)
	copy(b, "PK\x03\x04")
	for i := 4; i < n; i++ {
		b[i] = byte(i*13 + i/7)
	}
	return b
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// multipartBody builds a multipart body of fields (in order) and one file
// part.
func multipartBody(t testing.TB, fields [][2]string, fileField, fileName string, content []byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if fileField != "" {
		fw, err := w.CreateFormFile(fileField, fileName)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(content); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), buf.Bytes()
}

// upload sends POST /sys/file/upload.
func upload(k *kerneltest.Kernel, token, name string, content []byte) kerneltest.Reply {
	k.T.Helper()
	ct, body := multipartBody(k.T, nil, "file", name, content)
	req := httptest.NewRequestWithContext(k.T.Context(), "POST", "/api/v1/sys/file/upload", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", "Bearer "+token)
	return k.Send(req)
}

// sendChunk sends POST /sys/file/chunk.
func sendChunk(k *kerneltest.Kernel, token string, uploadID int64, index int, content []byte) kerneltest.Reply {
	k.T.Helper()
	ct, body := multipartBody(k.T, [][2]string{{"uploadId", fmt.Sprint(uploadID)}, {"index", fmt.Sprint(index)}}, "chunk", "blob", content)
	req := httptest.NewRequestWithContext(k.T.Context(), "POST", "/api/v1/sys/file/chunk", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", "Bearer "+token)
	return k.Send(req)
}

type uploadOutput struct {
	ID           int64  `json:"id"`
	OriginalName string `json:"originalName"`
	StoragePath  string `json:"storagePath"`
	SizeBytes    int64  `json:"sizeBytes"`
	ViewURL      string `json:"viewUrl"`
}

type initOutput struct {
	Uploaded        bool          `json:"uploaded"`
	File            *uploadOutput `json:"file"`
	UploadID        *int64        `json:"uploadId"`
	ReceivedIndexes []int         `json:"receivedIndexes"`
}

// raw is a non-envelope answer (a file stream).
type raw struct {
	Status int
	Header http.Header
	Body   []byte
}

// get sends a GET through App().Test and returns the raw answer.
func get(k *kerneltest.Kernel, path, token string, headers ...string) raw {
	k.T.Helper()
	req := httptest.NewRequestWithContext(k.T.Context(), "GET", path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := k.App().Test(req, fiber.TestConfig{Timeout: 60 * time.Second})
	if err != nil {
		k.T.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		k.T.Fatal(err)
	}
	return raw{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// envelopeCode decodes the code of an envelope answer (-1 when the body is
// not one).
func envelopeCode(b []byte) int {
	var e struct {
		Code *int `json:"code"`
	}
	if json.Unmarshal(b, &e) != nil || e.Code == nil {
		return -1
	}
	return *e.Code
}

// storages are the storage settings every API test runs on: local disk
// and a real S3 server (versitygw serving a POSIX directory).
func storages(t *testing.T) map[string][]string {
	t.Helper()
	return map[string][]string{
		"Local": nil,
		"S3":    versity(t),
	}
}

// versityBin finds the versitygw binary: on PATH or in $(go env GOPATH)/bin.
func versityBin(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("versitygw is needed for the S3 storage tests and was not found on PATH or in $(go env GOPATH)/bin; install it with: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0")
	return ""
}

// versity starts versitygw on a free port over a temporary directory with
// one bucket and returns the kernel settings that use it. It is stopped
// when the test ends.
func versity(t testing.TB) []string {
	t.Helper()
	bin := versityBin(t)
	root := t.TempDir()
	const bucket, access, secret = "kernel-files", "akfilestest", "akfilestestsecret0123456789"
	if err := os.Mkdir(filepath.Join(root, bucket), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "--access", access, "--secret", secret, "--port", addr, "--quiet", "posix", root) //nolint:gosec // G204: the test's own binary and arguments
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
