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
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/internal/race"
)

// serve runs k on a real listener until the test ends and returns its
// base URL.
func serve(t *testing.T, k *kerneltest.Kernel) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.ServeListener(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// patterned is an endless reader of zip-looking bytes (a zip signature
// first), counting what it gave.
type patterned struct {
	n     atomic.Int64
	limit int64
}

func (p *patterned) Read(b []byte) (int, error) {
	off := p.n.Load()
	if off >= p.limit {
		return 0, io.EOF
	}
	n := int64(len(b))
	if off+n > p.limit {
		n = p.limit - off
	}
	for i := int64(0); i < n; i++ {
		o := off + i
		if o < 4 {
			b[i] = "PK\x03\x04"[o]
		} else {
			b[i] = byte(o*13 + o/7)
		}
	}
	p.n.Add(n)
	return int(n), nil
}

// streamUpload posts a multipart upload of size bytes from src without
// holding it in memory, with its Content-Length.
func streamUpload(t *testing.T, base, tok, name string, src io.Reader, size int64) (*http.Response, error) {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	// The length of the multipart framing around the content.
	var frame bytes.Buffer
	fw := multipart.NewWriter(&frame)
	_ = fw.SetBoundary(mw.Boundary())
	if _, err := fw.CreateFormFile("file", name); err != nil {
		t.Fatal(err)
	}
	head := frame.Len()
	_ = fw.Close()
	total := int64(frame.Len()) + size
	_ = head
	go func() {
		w, err := mw.CreateFormFile("file", name)
		if err == nil {
			_, err = io.Copy(w, src)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/api/v1/sys/file/upload", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = total
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+tok)
	return http.DefaultClient.Do(req)
}

func decodeEnvelope(t *testing.T, resp *http.Response, v any) int {
	t.Helper()
	defer resp.Body.Close()
	var e struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("HTTP %d: not an envelope: %v", resp.StatusCode, err)
	}
	if v != nil && e.Code == 0 {
		if err := json.Unmarshal(e.Data, v); err != nil {
			t.Fatal(err)
		}
	}
	return e.Code
}

// A 5 GB body with a 1 MB limit is cut early with 44002: the service stops
// reading once the limit is passed.
func TestFileOversizeCutEarly(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	if err := k.Settings().Set(context.Background(), "sys.upload.maxSizeMb", "1"); err != nil {
		t.Fatal(err)
	}
	base := serve(t, k)
	src := &patterned{limit: 5 << 30}
	start := time.Now()
	resp, err := streamUpload(t, base, tok, "huge.zip", src, src.limit)
	sent := src.n.Load()
	// The service answers 44002 and closes the connection with the rest of
	// the body unread: depending on timing the client reads the answer or
	// meets the reset first (it is still writing). Either way it is cut.
	if err != nil {
		t.Logf("the client met %v", err)
	} else if code := decodeEnvelope(t, resp, nil); code != int(errcode.FileTooLarge) {
		t.Fatalf("code %d, want 44002", code)
	}
	t.Logf("refused after %v; the client had produced %d MiB of 5120", time.Since(start).Round(time.Millisecond), sent>>20)
	if sent > 256<<20 {
		t.Fatalf("the client produced %d MiB before the refusal: the body was read far past the limit", sent>>20)
	}
}

// heapPeak samples the heap until stop is closed and returns the highest
// HeapAlloc seen.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// Uploading and downloading a 1 GiB file (256 MiB under the race detector)
// keeps the heap growth (kernel and
// this test's client together) under 64 MiB, on local storage and on S3
// (versitygw runs in its own process: its memory is not counted). ADMINKERNEL_TEST_FILE_GIB
// changes the size (e.g. 0.25 on a slow machine).
func TestFileMemoryBound(t *testing.T) {
	size := int64(1 << 30)
	if race.Enabled {
		size = 1 << 28 // a quarter: the bound is a few buffers, whatever the size
	}
	if v := os.Getenv("ADMINKERNEL_TEST_FILE_GIB"); v != "" {
		var f float64
		if _, err := fmt.Sscan(v, &f); err != nil || f <= 0 {
			t.Fatalf("ADMINKERNEL_TEST_FILE_GIB=%q", v)
		}
		size = int64(f * (1 << 30))
	}
	for name, env := range storages(t) {
		t.Run(name, func(t *testing.T) {
			// Both together take over a minute under -race on a busy
			// machine: -short keeps the local one only.
			if name == "S3" && testing.Short() {
				t.Skip("-short: the S3 memory bound runs without -short")
			}
			memoryBound(t, env, size)
		})
	}
}

func memoryBound(t *testing.T, env []string, size int64) {
	k := kerneltest.Start(t, env)
	tok := k.Admin()
	if err := k.Settings().Set(context.Background(), "sys.upload.maxSizeMb", "2048"); err != nil {
		t.Fatal(err)
	}
	base := serve(t, k)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseline := ms.HeapAlloc
	stop := make(chan struct{})
	peak := heapPeak(stop)

	start := time.Now()
	src := &patterned{limit: size}
	h := sha256.New()
	resp, err := streamUpload(t, base, tok, "big.zip", io.TeeReader(src, h), size)
	if err != nil {
		close(stop)
		t.Fatal(err)
	}
	var out uploadOutput
	if code := decodeEnvelope(t, resp, &out); code != 0 || out.SizeBytes != size {
		close(stop)
		t.Fatalf("upload: code %d, %+v", code, out)
	}
	up := time.Since(start)
	want := hex.EncodeToString(h.Sum(nil))

	start = time.Now()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", fmt.Sprintf("%s/api/v1/sys/file/%d/download", base, out.ID), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		close(stop)
		t.Fatal(err)
	}
	dh := sha256.New()
	n, err := io.Copy(dh, dresp.Body)
	_ = dresp.Body.Close()
	down := time.Since(start)
	close(stop)
	p := <-peak
	if err != nil || n != size || hex.EncodeToString(dh.Sum(nil)) != want {
		t.Fatalf("download: %d bytes, %v, hash match %v", n, err, hex.EncodeToString(dh.Sum(nil)) == want)
	}
	growth := int64(p) - int64(baseline)
	t.Logf("%d MiB up in %v, down in %v; heap baseline %d MiB, peak %d MiB, growth %.1f MiB",
		size>>20, up.Round(time.Millisecond), down.Round(time.Millisecond), baseline>>20, p>>20, float64(growth)/(1<<20))
	if growth > 64<<20 {
		t.Fatalf("heap grew by %.1f MiB during a %d MiB upload and download, want < 64 MiB", float64(growth)/(1<<20), size>>20)
	}
}

// A chunked upload survives a restart of the service: chunks sent before,
// the rest after, complete with the right hash.
func TestFileChunkResumeAfterRestart(t *testing.T) {
	for name, env := range storages(t) {
		t.Run(name, func(t *testing.T) {
			k1 := kerneltest.Start(t, env)
			f := newChunks(k1, k1.Admin(), zipBytes(600000), 100000)
			in := f.init("resume.zip")
			id := *in.UploadID
			for i := 0; i < 3; i++ {
				sendChunk(k1, f.tok, id, i, f.chunks[i]).Expect(t, fmt.Sprintf("chunk %d", i), 200, 0)
			}
			// Chunk 3 is cut off mid-way: the client goes away.
			cutChunk(t, k1, f.tok, id, 3, f.chunks[3])
			cfg := k1.Config().Clone()
			if err := k1.Close(); err != nil {
				t.Fatal(err)
			}

			hk, err := host.New(context.Background(), host.Options{Config: cfg, LogOutput: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = hk.Close() })
			k2 := &kerneltest.Kernel{Kernel: hk, T: t}
			f.k, f.tok = k2, k2.Admin()
			again := f.init("resume.zip")
			if again.UploadID == nil || *again.UploadID != id || fmt.Sprint(again.ReceivedIndexes) != "[0 1 2]" {
				t.Fatalf("after the restart: %+v", again)
			}
			for i := 3; i < len(f.chunks); i++ {
				sendChunk(k2, f.tok, id, i, f.chunks[i]).Expect(t, fmt.Sprintf("chunk %d", i), 200, 0)
			}
			var out uploadOutput
			f.complete(id, "resume.zip").Expect(t, "complete", 200, 0).Decode(t, &out)
			dl := get(k2, fmt.Sprintf("/api/v1/sys/file/%d/download", out.ID), f.tok)
			if sum(dl.Body) != sum(f.content) {
				t.Fatal("the resumed file's content differs")
			}
		})
	}
}

// cutChunk sends half of a chunk and stops: the body ends early.
func cutChunk(t *testing.T, k *kerneltest.Kernel, tok string, id int64, index int, content []byte) {
	t.Helper()
	ct, body := multipartBody(t, [][2]string{{"uploadId", fmt.Sprint(id)}, {"index", fmt.Sprint(index)}}, "chunk", "blob", content)
	body = body[:len(body)-len(content)/2]
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", "/api/v1/sys/file/chunk", bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+tok)
		r := k.Send(req)
		if r.Code == 0 {
			t.Errorf("a cut chunk was accepted: %s", r.Raw)
		}
	}()
	wg.Wait()
}
