//go:build !unit

package file_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/file/storage/s3test"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/gofiber/fiber/v3"
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

func versity(t testing.TB) []string { return s3test.Versity(t) }
