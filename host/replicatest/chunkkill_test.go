//go:build !unit

package replicatest

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/file/storage/s3test"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestChunkedUploadSurvivesKill (issue 21): a chunked upload to a real
// `adminkernel serve` process that is killed (SIGKILL) while a chunk is
// being received resumes on the restarted process (same data directory
// and database): chunk/init answers the chunks received before the kill,
// without the one in flight; the rest is sent, complete succeeds and the
// downloaded file has the right SHA-256. On local storage and on a real S3
// server (versitygw); the database and cache follow ADMINKERNEL_TEST_DB /
// ADMINKERNEL_TEST_CACHE.
func TestChunkedUploadSurvivesKill(t *testing.T) {
	bin := binary(t)
	for _, storage := range []string{"Local", "S3"} {
		t.Run(storage, func(t *testing.T) { chunkKill(t, bin, storage) })
	}
}

const (
	killChunkSize  = 256 << 10
	killChunkCount = 8
)

func chunkKill(t *testing.T, bin, storage string) {
	dbType, cache := kerneltest.Backend(t)
	cfg := dbtest.Config(t, dbType)
	settings := []string{
		"ADMINKERNEL_ENVIRONMENT=Development",
		"Service__Database__DbType=" + dbType,
		"Service__Database__ConnectionString=" + cfg.Service.Database.ConnectionString.Reveal(),
		"Service__Security__Jwt__SigningKey=replicatest-signing-key-" + strings.Repeat("k", 32),
		"Service__Seed__AdminPassword=" + adminPassword,
		"Service__Security__Password__Pbkdf2Iterations=100000",
		// Concurrent clients log in from 127.0.0.1: lift the hashing pool's
		// per-address and per-account shares (default 2).
		"Service__Security__Password__HashPerClient=1000", "Service__Security__Password__HashPerAccount=1000",
	}
	if cache == kerneltest.CacheRedis {
		settings = append(settings,
			"Service__Cache__Provider=Redis",
			"Service__Cache__Redis__Address="+kerneltest.RedisAddr(),
			"Service__Cache__Redis__KeyPrefix="+kerneltest.RedisPrefix(t))
	}
	if storage == "S3" {
		settings = append(settings, s3test.Versity(t)...)
	}
	dir := t.TempDir() // the content root of both processes: data/ (SQLite, local files) survives the kill
	c := newBrowser(t)
	first := startReplicaIn(t, bin, "first", freePort(t), settings, dir)
	first.waitReady(c)
	tok := c.login(first.base, "superAdmin", adminPassword).AccessToken

	content := make([]byte, killChunkSize*killChunkCount-1000) // the last chunk is short
	copy(content, "PK\x03\x04")                                // sniffs as application/zip
	if _, err := rand.Read(content[4:]); err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256(content)
	hash := hex.EncodeToString(digest[:])
	chunk := func(i int) []byte { return content[i*killChunkSize : min((i+1)*killChunkSize, len(content))] }
	initBody := map[string]any{"fileHash": hash, "fileName": "resumed.zip", "totalSize": len(content), "chunkCount": killChunkCount}
	var in struct {
		Uploaded        bool   `json:"uploaded"`
		UploadID        *int64 `json:"uploadId"`
		ReceivedIndexes []int  `json:"receivedIndexes"`
	}
	c.do("POST", first.base+"/api/v1/sys/file/chunk/init", tok, initBody).expect(t, "chunk/init", 200, 0).decode(t, &in)
	if in.Uploaded || in.UploadID == nil || len(in.ReceivedIndexes) != 0 {
		t.Fatalf("chunk/init of a new upload = %+v", in)
	}
	uploadID := *in.UploadID
	before := []int{0, 1, 2, 5}
	for _, i := range before {
		sendKillChunk(t, c, first.base, tok, uploadID, i, bytes.NewReader(chunk(i))).expect(t, fmt.Sprintf("chunk %d", i), 200, 0)
	}

	// Chunk 3 in flight: half of it sent, the body left open, then SIGKILL.
	pr, pw := io.Pipe()
	sent := make(chan error, 1)
	go func() {
		_, err := trySendKillChunk(c, first.base, tok, uploadID, 3, pr)
		sent <- err
	}()
	if _, err := pw.Write(chunk(3)[:killChunkSize/2]); err != nil {
		t.Fatal(err)
	}
	if storage == "Local" {
		waitPartial(t, filepath.Join(dir, "data", "files", "chunks", fmt.Sprint(uploadID)))
	} else {
		time.Sleep(500 * time.Millisecond) // the part is on its way to the object store
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.exited
	_ = pw.CloseWithError(io.ErrUnexpectedEOF)
	if err := <-sent; err == nil {
		t.Fatal("the chunk in flight was answered although the process was killed")
	}

	second := startReplicaIn(t, bin, "second", freePort(t), settings, dir)
	second.waitReady(c)
	tok = c.login(second.base, "superAdmin", adminPassword).AccessToken
	c.do("POST", second.base+"/api/v1/sys/file/chunk/init", tok, initBody).expect(t, "chunk/init after the restart", 200, 0).decode(t, &in)
	if in.Uploaded || in.UploadID == nil || *in.UploadID != uploadID {
		t.Fatalf("chunk/init after the restart = %+v, want upload %d resumed", in, uploadID)
	}
	if !slices.Equal(in.ReceivedIndexes, before) {
		t.Fatalf("received indexes after the kill = %v, want %v (the chunk in flight is not received)", in.ReceivedIndexes, before)
	}
	for i := range killChunkCount {
		if !slices.Contains(in.ReceivedIndexes, i) {
			sendKillChunk(t, c, second.base, tok, uploadID, i, bytes.NewReader(chunk(i))).expect(t, fmt.Sprintf("chunk %d after the restart", i), 200, 0)
		}
	}
	var f struct {
		ID        int64 `json:"id"`
		SizeBytes int64 `json:"sizeBytes"`
	}
	c.do("POST", second.base+"/api/v1/sys/file/chunk/complete", tok, map[string]any{
		"uploadId": fmt.Sprint(uploadID), "fileHash": hash, "fileName": "resumed.zip", "chunkCount": killChunkCount,
	}).expect(t, "chunk/complete", 200, 0).decode(t, &f)

	req, err := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/sys/file/%d/download", second.base, f.ID), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("download = HTTP %d, %d bytes, %v", resp.StatusCode, n, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hash || n != int64(len(content)) {
		t.Fatalf("downloaded %d bytes with SHA-256 %s, want %d bytes with %s", n, got, len(content), hash)
	}
	if storage == "Local" {
		// complete removed the upload's chunks, the killed write's
		// temporary file included.
		if _, err := os.Stat(filepath.Join(dir, "data", "files", "chunks", fmt.Sprint(uploadID))); !os.IsNotExist(err) {
			t.Fatalf("the chunk directory is still there after complete: %v", err)
		}
	}
}

// waitPartial waits until the chunk directory holds a temporary file with
// some bytes in it: the chunk in flight is being written.
func waitPartial(t *testing.T, chunkDir string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(chunkDir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".put-") {
				if info, err := e.Info(); err == nil && info.Size() > 0 {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no partly written chunk appeared in %s", chunkDir)
}

func sendKillChunk(t *testing.T, c *browser, base, tok string, uploadID int64, index int, body io.Reader) reply {
	t.Helper()
	r, err := trySendKillChunk(c, base, tok, uploadID, index, body)
	if err != nil {
		t.Fatalf("chunk %d: %v", index, err)
	}
	return r
}

// trySendKillChunk streams POST /sys/file/chunk (multipart uploadId,
// index, chunk) with the chunk read from body.
func trySendKillChunk(c *browser, base, tok string, uploadID int64, index int, body io.Reader) (reply, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := mw.WriteField("uploadId", fmt.Sprint(uploadID))
		if err == nil {
			err = mw.WriteField("index", fmt.Sprint(index))
		}
		var part io.Writer
		if err == nil {
			part, err = mw.CreateFormFile("chunk", "blob")
		}
		if err == nil {
			_, err = io.Copy(part, body)
		}
		if err == nil {
			err = mw.Close()
		}
		_ = pw.CloseWithError(err)
	}()
	req, err := http.NewRequest("POST", base+"/api/v1/sys/file/chunk", pr)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	r := reply{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw)}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("body %q: %w", raw, err)
	}
	return r, nil
}
