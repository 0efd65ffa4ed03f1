//go:build !unit

package file_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysfileupload"
	"github.com/adminkernel/kernel/ent/sysjoblog"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/file"
	"github.com/adminkernel/kernel/host/file/link"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
)

// Every operation on local storage and on S3: upload, page, download,
// view, delete, batch-delete.
func TestFileOperations(t *testing.T) {
	for name, env := range storages(t) {
		t.Run(name, func(t *testing.T) {
			k := kerneltest.Start(t, env)
			tok := k.Admin()
			content := pngBytes(70000)
			var up uploadOutput
			upload(k, tok, `..\..\etc/报告 "Q1".PNG`, content).Expect(t, "upload", 200, 0).Decode(t, &up)
			if up.OriginalName != `报告 Q1.PNG` || up.SizeBytes != int64(len(content)) || up.ViewURL == "" || !strings.HasPrefix(up.StoragePath, "files/") {
				t.Fatalf("upload output %+v", up)
			}
			if strings.Contains(up.StoragePath, "报告") || strings.Contains(up.StoragePath, "..") {
				t.Fatalf("storage path %q derived from the client name", up.StoragePath)
			}

			var page struct {
				Total int `json:"total"`
				Items []struct {
					ID          int64   `json:"id"`
					Extension   string  `json:"extension"`
					ContentType *string `json:"contentType"`
					Hash        *string `json:"hash"`
					ViewURL     *string `json:"viewUrl"`
				} `json:"items"`
			}
			k.Do("GET", "/api/v1/sys/file/page?FileName=q1", tok, nil).Expect(t, "page", 200, 0).Decode(t, &page)
			if page.Total != 1 || page.Items[0].ID != up.ID || page.Items[0].Extension != ".png" ||
				*page.Items[0].ContentType != "image/png" || *page.Items[0].Hash != sum(content) || page.Items[0].ViewURL == nil {
				t.Fatalf("page %+v", page)
			}
			// The page's signed link (a kernel addition) views the file as the upload's does.
			if pv := get(k, *page.Items[0].ViewURL, ""); pv.Status != 200 || !bytes.Equal(pv.Body, content) || pv.Header.Get("Content-Type") != "image/png" {
				t.Fatalf("view through the page's link: HTTP %d %v", pv.Status, pv.Header)
			}

			dl := get(k, fmt.Sprintf("/api/v1/sys/file/%d/download", up.ID), tok)
			if dl.Status != 200 || !bytes.Equal(dl.Body, content) {
				t.Fatalf("download: HTTP %d, %d bytes", dl.Status, len(dl.Body))
			}
			if cd := dl.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, "filename*=UTF-8''%E6%8A%A5%E5%91%8A%20Q1.PNG") {
				t.Errorf("download Content-Disposition %q", cd)
			}
			for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Content-Security-Policy": file.FileCSP, "Content-Type": "application/octet-stream", "ETag": `"` + sum(content) + `"`} {
				if got := dl.Header.Get(h); got != want {
					t.Errorf("download %s = %q, want %q", h, got, want)
				}
			}

			v := get(k, up.ViewURL, "")
			if v.Status != 200 || !bytes.Equal(v.Body, content) || v.Header.Get("Content-Type") != "image/png" ||
				!strings.HasPrefix(v.Header.Get("Content-Disposition"), "inline;") || v.Header.Get("Content-Security-Policy") != file.FileCSP {
				t.Fatalf("view: HTTP %d %v", v.Status, v.Header)
			}

			// A zip is viewed as an attachment of type octet-stream.
			var z uploadOutput
			upload(k, tok, "a.zip", zipBytes(3000)).Expect(t, "upload zip", 200, 0).Decode(t, &z)
			if zv := get(k, z.ViewURL, ""); zv.Status != 200 || zv.Header.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(zv.Header.Get("Content-Disposition"), "attachment;") {
				t.Fatalf("zip view: HTTP %d %v", zv.Status, zv.Header)
			}

			k.Do("DELETE", fmt.Sprintf("/api/v1/sys/file/%d", up.ID), tok, nil).Expect(t, "delete", 200, 0)
			k.Do("DELETE", fmt.Sprintf("/api/v1/sys/file/%d", up.ID), tok, nil).ExpectCode(t, "delete again", errcode.FileNotFound)
			if d := get(k, fmt.Sprintf("/api/v1/sys/file/%d/download", up.ID), tok); envelopeCode(d.Body) != int(errcode.FileNotFound) {
				t.Fatalf("download of a deleted file: HTTP %d %s", d.Status, d.Body)
			}
			if d := get(k, up.ViewURL, ""); envelopeCode(d.Body) != int(errcode.FileNotFound) {
				t.Fatalf("view of a deleted file: HTTP %d %s", d.Status, d.Body)
			}
			k.Do("POST", "/api/v1/sys/file/batch-delete", tok, map[string]any{"ids": []int64{z.ID, up.ID}}).ExpectCode(t, "batch with a deleted id", errcode.FileNotFound)
			k.Do("POST", "/api/v1/sys/file/batch-delete", tok, map[string]any{"ids": []int64{z.ID}}).Expect(t, "batch-delete", 200, 0)
			k.Do("GET", "/api/v1/sys/file/page", tok, nil).Expect(t, "page", 200, 0).Decode(t, &page)
			if page.Total != 0 {
				t.Fatalf("page after deletes: %+v", page)
			}
		})
	}
}

// Bad input is refused with the contract's codes, never a 500.
func TestFileUploadRefusals(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	if err := k.Settings().Set(context.Background(), "sys.upload.maxSizeMb", "1"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		file    string
		content []byte
		code    errcode.Code
	}{
		{"empty", "a.png", nil, errcode.FileEmpty},
		{"extension not allowed", "a.exe", zipBytes(100), errcode.FileExtNotAllowed},
		{"no extension", "README", zipBytes(100), errcode.FileExtNotAllowed},
		{"a png that is HTML", "a.png", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>"), errcode.FileExtNotAllowed},
		{"a pdf that is a png", "a.pdf", pngBytes(100), errcode.FileExtNotAllowed},
		{"an xlsx that is HTML", "a.xlsx", []byte("<html><body>x</body></html>"), errcode.FileExtNotAllowed},
		{"over maxSizeMb", "a.zip", zipBytes(1<<20 + 1), errcode.FileTooLarge},
		{"at maxSizeMb", "a.zip", zipBytes(1 << 20), errcode.Success},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			upload(k, tok, c.file, c.content).ExpectCode(t, c.name, c.code)
		})
	}
	// The allowed extensions are read at every upload.
	if err := k.Settings().Set(context.Background(), "sys.upload.allowedExtensions", "exe, .BIN"); err != nil {
		t.Fatal(err)
	}
	upload(k, tok, "a.zip", zipBytes(100)).ExpectCode(t, "zip no longer allowed", errcode.FileExtNotAllowed)
	upload(k, tok, "tool.Bin", zipBytes(100)).ExpectCode(t, "bin allowed", errcode.Success)

	send := func(ct string, body string) kerneltest.Reply {
		req := httptest.NewRequestWithContext(t.Context(), "POST", "/api/v1/sys/file/upload", strings.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+tok)
		return k.Send(req)
	}
	send("application/json", `{"file":"x"}`).Expect(t, "JSON body", 415, int(errcode.UnsupportedMediaType))
	send("multipart/form-data; boundary=XX", "--XX\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nv\r\n--XX--\r\n").ExpectCode(t, "no file part", errcode.FileEmpty)
	send("multipart/form-data; boundary=XX", "--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\nPK\x03\x04abc").ExpectCode(t, "truncated body", errcode.RequestInvalid)
	send("multipart/form-data; boundary=XX", "garbage").ExpectCode(t, "no part at all", errcode.FileEmpty)

	// Without the permission code: 403 / 41001.
	k.User("noperm", "Passw0rd!x")
	other := k.Login("noperm", "Passw0rd!x").AccessToken
	upload(k, other, "a.bin", zipBytes(10)).Expect(t, "upload without permission", 403, int(errcode.NoPermission))
}

// Signed links: tampered, expired, other-id and other-purpose signatures
// are 403 with an empty body; Range and conditional requests.
func TestFileSignedLinks(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Upload__SignedUrlTtlMinutes=5"})
	tok := k.Admin()
	content := pngBytes(1000)
	var a, b uploadOutput
	upload(k, tok, "a.png", content).Expect(t, "upload a", 200, 0).Decode(t, &a)
	upload(k, tok, "b.png", pngBytes(500)).Expect(t, "upload b", 200, 0).Decode(t, &b)
	ring, err := link.FromConfig(k.Config())
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(a.ViewURL)
	exp, sig := u.Query().Get("exp"), u.Query().Get("sig")
	if exp == "0" || exp == "" {
		t.Fatalf("a link with a lifetime has exp %q", exp)
	}
	now := time.Now()
	past := now.Add(-time.Minute).Unix()
	expiredSig, _ := ring.Sign(link.PurposeView, a.ID, past, past-60)
	otherPurpose, _ := ring.Sign("download", a.ID, 0, now.Unix())
	noExpiry, _ := ring.Sign(link.PurposeView, a.ID, 0, now.Unix())
	// Issued without an expiry six minutes ago (when the lifetime was 0):
	// the lifetime of 5 minutes now in force has run out for it.
	oldNoExpiry, _ := ring.Sign(link.PurposeView, a.ID, 0, now.Add(-6*time.Minute).Unix())
	foreign := link.New([]link.Key{{ID: "dev", Secret: []byte("another key of at least thirty-two bytes")}}, 0)
	foreignSig, _ := foreign.Sign(link.PurposeView, a.ID, 0, now.Unix())
	tampered := []byte(sig)
	tampered[len(tampered)-2] ^= 1
	view := func(id int64, exp, sig string) string {
		return fmt.Sprintf("/api/v1/sys/file/%d/view?exp=%s&sig=%s", id, exp, url.QueryEscape(sig))
	}
	refused := map[string]string{
		"tampered signature":                    view(a.ID, exp, string(tampered)),
		"later expiry":                          view(a.ID, fmt.Sprint(time.Now().Add(time.Hour).Unix()), sig),
		"expired":                               view(a.ID, fmt.Sprint(past), expiredSig),
		"other id":                              view(b.ID, exp, sig),
		"other purpose":                         view(a.ID, "0", otherPurpose),
		"another key":                           view(a.ID, "0", foreignSig),
		"no signature":                          fmt.Sprintf("/api/v1/sys/file/%d/view", a.ID),
		"no expiry":                             view(a.ID, "", sig),
		"negative expiry":                       view(a.ID, "-1", sig),
		"id not a number":                       "/api/v1/sys/file/abc/view?exp=0&sig=x",
		"unknown id":                            view(1<<40, exp, sig),
		"expiry removed (0)":                    view(a.ID, "0", sig),
		"signature of no kind":                  view(a.ID, exp, "x.y"),
		"no expiry, issued before the lifetime": view(a.ID, "0", oldNoExpiry),
	}
	for name, path := range refused {
		t.Run(name, func(t *testing.T) {
			r := get(k, path, "")
			if r.Status != 403 || len(r.Body) != 0 {
				t.Fatalf("HTTP %d body %q, want 403 and no body", r.Status, r.Body)
			}
		})
	}
	if r := get(k, view(a.ID, "0", noExpiry), ""); r.Status != 200 {
		t.Fatalf("a link signed without expiry, issued within the lifetime: HTTP %d", r.Status)
	}

	etag := `"` + sum(content) + `"`
	ranges := []struct {
		name      string
		headers   []string
		status    int
		body      []byte
		rangeHdr  string
		bodyEmpty bool
	}{
		{"first bytes", []string{"Range", "bytes=0-9"}, 206, content[:10], "bytes 0-9/1000", false},
		{"middle", []string{"Range", "bytes=100-199"}, 206, content[100:200], "bytes 100-199/1000", false},
		{"open end", []string{"Range", "bytes=990-"}, 206, content[990:], "bytes 990-999/1000", false},
		{"suffix", []string{"Range", "bytes=-5"}, 206, content[995:], "bytes 995-999/1000", false},
		{"end past the size", []string{"Range", "bytes=995-5000"}, 206, content[995:], "bytes 995-999/1000", false},
		{"past the end", []string{"Range", "bytes=1000-"}, 416, nil, "bytes */1000", true},
		{"several ranges: whole body", []string{"Range", "bytes=0-1,5-6"}, 200, content, "", false},
		{"malformed: whole body", []string{"Range", "bytes=x-y"}, 200, content, "", false},
		{"If-Range matching", []string{"Range", "bytes=0-9", "If-Range", etag}, 206, content[:10], "bytes 0-9/1000", false},
		{"If-Range stale", []string{"Range", "bytes=0-9", "If-Range", `"old"`}, 200, content, "", false},
		{"If-None-Match", []string{"If-None-Match", etag}, 304, nil, "", true},
		{"If-None-Match weak list", []string{"If-None-Match", `"x", W/` + etag}, 304, nil, "", true},
		{"If-None-Match other", []string{"If-None-Match", `"x"`}, 200, content, "", false},
	}
	for _, c := range ranges {
		for _, path := range []struct{ name, path, tok string }{{"view", a.ViewURL, ""}, {"download", fmt.Sprintf("/api/v1/sys/file/%d/download", a.ID), tok}} {
			t.Run(path.name+"/"+c.name, func(t *testing.T) {
				r := get(k, path.path, path.tok, c.headers...)
				if r.Status != c.status || r.Header.Get("Content-Range") != c.rangeHdr {
					t.Fatalf("HTTP %d Content-Range %q, want %d %q", r.Status, r.Header.Get("Content-Range"), c.status, c.rangeHdr)
				}
				if c.bodyEmpty && len(r.Body) != 0 || !c.bodyEmpty && !bytes.Equal(r.Body, c.body) {
					t.Fatalf("body of %d bytes, want %d", len(r.Body), len(c.body))
				}
				if c.status != 304 && c.status != 416 && r.Header.Get("Accept-Ranges") != "bytes" {
					t.Errorf("Accept-Ranges %q", r.Header.Get("Accept-Ranges"))
				}
			})
		}
	}
}

type chunkFixture struct {
	k       *kerneltest.Kernel
	tok     string
	content []byte
	chunks  [][]byte
}

func newChunks(k *kerneltest.Kernel, tok string, content []byte, size int) chunkFixture {
	f := chunkFixture{k: k, tok: tok, content: content}
	for off := 0; off < len(content); off += size {
		f.chunks = append(f.chunks, content[off:min(off+size, len(content))])
	}
	return f
}

func (f chunkFixture) init(name string) initOutput {
	f.k.T.Helper()
	var out initOutput
	f.k.Do("POST", "/api/v1/sys/file/chunk/init", f.tok, map[string]any{
		"fileHash": sum(f.content), "fileName": name, "totalSize": len(f.content), "chunkCount": len(f.chunks),
	}).Expect(f.k.T, "chunk/init", 200, 0).Decode(f.k.T, &out)
	return out
}

func (f chunkFixture) complete(id int64, name string) kerneltest.Reply {
	f.k.T.Helper()
	return f.k.Do("POST", "/api/v1/sys/file/chunk/complete", f.tok, map[string]any{
		"uploadId": id, "fileHash": sum(f.content), "fileName": name, "chunkCount": len(f.chunks),
	})
}

// Chunked upload: any order, in parallel, idempotent; resumable; complete
// verifies; a known hash is an instant upload. On local storage and S3.
func TestFileChunkedUpload(t *testing.T) {
	for name, env := range storages(t) {
		t.Run(name, func(t *testing.T) {
			k := kerneltest.Start(t, env)
			tok := k.Admin()
			f := newChunks(k, tok, zipBytes(1<<20+12345), 256<<10)
			in := f.init("big.zip")
			if in.Uploaded || in.UploadID == nil || len(in.ReceivedIndexes) != 0 {
				t.Fatalf("init: %+v", in)
			}
			id := *in.UploadID
			f.complete(id, "big.zip").ExpectCode(t, "complete with no chunk", errcode.ChunkMissing)

			// Chunks 1.. in parallel, in reverse order, chunk 2 twice.
			var wg sync.WaitGroup
			replies := make([]kerneltest.Reply, len(f.chunks)+1)
			for i := len(f.chunks) - 1; i >= 1; i-- {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					replies[i] = sendChunk(k, tok, id, i, f.chunks[i])
				}(i)
			}
			wg.Add(1)
			go func() { defer wg.Done(); replies[len(f.chunks)] = sendChunk(k, tok, id, 2, f.chunks[2]) }()
			wg.Wait()
			for i, r := range replies[1:] {
				r.Expect(t, fmt.Sprintf("chunk %d", i+1), 200, 0)
			}
			// Resuming: init again names the received chunks.
			again := f.init("big.zip")
			if again.UploadID == nil || *again.UploadID != id || fmt.Sprint(again.ReceivedIndexes) != "[1 2 3 4]" {
				t.Fatalf("resumed init: %+v", again)
			}
			r := f.complete(id, "big.zip").ExpectCode(t, "complete without chunk 0", errcode.ChunkMissing)
			if fmt.Sprint(r.Args["missing"]) != "[0]" {
				t.Errorf("missing = %v", r.Args["missing"])
			}
			sendChunk(k, tok, id, len(f.chunks), []byte("x")).ExpectCode(t, "index out of range", errcode.RequestInvalid)
			sendChunk(k, tok, id+1, 0, f.chunks[0]).ExpectCode(t, "unknown upload", errcode.FileNotFound)
			sendChunk(k, tok, id, 0, f.chunks[0]).Expect(t, "chunk 0", 200, 0)

			var out uploadOutput
			f.complete(id, "big.zip").Expect(t, "complete", 200, 0).Decode(t, &out)
			if out.SizeBytes != int64(len(f.content)) || out.ViewURL == "" {
				t.Fatalf("complete: %+v", out)
			}
			dl := get(k, fmt.Sprintf("/api/v1/sys/file/%d/download", out.ID), tok)
			if !bytes.Equal(dl.Body, f.content) {
				t.Fatalf("downloaded %d bytes, not the uploaded ones", len(dl.Body))
			}
			f.complete(id, "big.zip").ExpectCode(t, "complete twice", errcode.FileNotFound)

			// The same content again: instant upload, a new row.
			inst := f.init("copy.zip")
			if !inst.Uploaded || inst.File == nil || inst.File.ID == out.ID || inst.File.StoragePath != out.StoragePath || inst.File.OriginalName != "copy.zip" {
				t.Fatalf("instant upload: %+v", inst)
			}
		})
	}
}

// complete checks the whole file: a chunk that does not belong, a hash
// that is not the init's.
func TestFileChunkVerification(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	f := newChunks(k, tok, zipBytes(3000), 1000)
	in := f.init("v.zip")
	id := *in.UploadID
	sendChunk(k, tok, id, 0, f.chunks[0]).Expect(t, "chunk 0", 200, 0)
	sendChunk(k, tok, id, 1, bytes.Repeat([]byte("z"), 1000)).Expect(t, "a wrong chunk 1", 200, 0)
	sendChunk(k, tok, id, 2, f.chunks[2]).Expect(t, "chunk 2", 200, 0)
	f.complete(id, "v.zip").ExpectCode(t, "complete with a wrong chunk", errcode.ChunkHashMismatch)
	k.Do("POST", "/api/v1/sys/file/chunk/complete", tok, map[string]any{"uploadId": id, "fileHash": strings.Repeat("a", 64), "fileName": "v.zip", "chunkCount": 3}).
		ExpectCode(t, "complete with another hash", errcode.ChunkHashMismatch)
	sendChunk(k, tok, id, 1, f.chunks[1]).Expect(t, "chunk 1 again", 200, 0)
	f.complete(id, "v.zip").Expect(t, "complete", 200, 0)

	bad := []struct {
		name string
		body map[string]any
		code errcode.Code
	}{
		{"hash not hex", map[string]any{"fileHash": "xyz", "fileName": "a.zip", "totalSize": 10, "chunkCount": 1}, errcode.RequestInvalid},
		{"empty", map[string]any{"fileHash": sum(nil), "fileName": "a.zip", "totalSize": 0, "chunkCount": 1}, errcode.FileEmpty},
		{"too large", map[string]any{"fileHash": sum(nil), "fileName": "a.zip", "totalSize": 21 << 20, "chunkCount": 1}, errcode.FileTooLarge},
		{"extension", map[string]any{"fileHash": sum(nil), "fileName": "a.sh", "totalSize": 10, "chunkCount": 1}, errcode.FileExtNotAllowed},
		{"chunk count 0", map[string]any{"fileHash": sum(nil), "fileName": "a.zip", "totalSize": 10, "chunkCount": 0}, errcode.RequestInvalid},
		{"more chunks than bytes", map[string]any{"fileHash": sum(nil), "fileName": "a.zip", "totalSize": 10, "chunkCount": 11}, errcode.RequestInvalid},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			k.Do("POST", "/api/v1/sys/file/chunk/init", tok, c.body).ExpectCode(t, c.name, c.code)
		})
	}
	// A chunk part before its uploadId cannot be placed.
	ct, body := multipartBody(t, nil, "chunk", "blob", []byte("abc"))
	req := httptest.NewRequestWithContext(t.Context(), "POST", "/api/v1/sys/file/chunk", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Authorization", "Bearer "+tok)
	k.Send(req).ExpectCode(t, "chunk before uploadId", errcode.RequestInvalid)
}

// Data scope: a file belongs to its uploader's org; a user who sees only
// their own rows neither lists, downloads nor deletes another's file.
func TestFileDataScope(t *testing.T) {
	k := kerneltest.Start(t, nil)
	codes := []string{"GET:/api/v1/sys/file/page", "POST:/api/v1/sys/file/upload", "GET:/api/v1/sys/file/{id}/download", "DELETE:/api/v1/sys/file/{id}", "POST:/api/v1/sys/file/batch-delete"}
	k.User("alice", "Passw0rd!x", codes...)
	k.User("bob", "Passw0rd!x", codes...)
	alice := k.Login("alice", "Passw0rd!x").AccessToken
	bob := k.Login("bob", "Passw0rd!x").AccessToken
	var a uploadOutput
	upload(k, alice, "a.png", pngBytes(100)).Expect(t, "alice uploads", 200, 0).Decode(t, &a)
	var page struct {
		Total int `json:"total"`
	}
	// Without a scope-bearing role a user sees only their own rows.
	k.Do("GET", "/api/v1/sys/file/page", bob, nil).Expect(t, "bob's page", 200, 0).Decode(t, &page)
	if page.Total != 0 {
		t.Fatalf("bob sees %d files", page.Total)
	}
	k.Do("GET", "/api/v1/sys/file/page", alice, nil).Expect(t, "alice's page", 200, 0).Decode(t, &page)
	if page.Total != 1 {
		t.Fatalf("alice sees %d files", page.Total)
	}
	if r := get(k, fmt.Sprintf("/api/v1/sys/file/%d/download", a.ID), bob); envelopeCode(r.Body) != int(errcode.FileNotFound) {
		t.Fatalf("bob downloads alice's file: HTTP %d %.80s", r.Status, r.Body)
	}
	k.Do("DELETE", fmt.Sprintf("/api/v1/sys/file/%d", a.ID), bob, nil).ExpectCode(t, "bob deletes", errcode.FileNotFound)
	k.Do("POST", "/api/v1/sys/file/batch-delete", bob, map[string]any{"ids": []int64{a.ID}}).ExpectCode(t, "bob batch-deletes", errcode.FileNotFound)
	// The admin (unrestricted) sees it.
	k.Do("GET", "/api/v1/sys/file/page", k.Admin(), nil).Expect(t, "admin's page", 200, 0).Decode(t, &page)
	if page.Total != 1 {
		t.Fatalf("admin sees %d files", page.Total)
	}
}

// The avatar of the profile accepts a signed view link of an image this
// kernel issued, and nothing else.
func TestFileAvatar(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	var img, zip uploadOutput
	upload(k, tok, "me.png", pngBytes(200)).Expect(t, "upload", 200, 0).Decode(t, &img)
	upload(k, tok, "me.zip", zipBytes(200)).Expect(t, "upload", 200, 0).Decode(t, &zip)
	profile := func(avatar string) kerneltest.Reply {
		return k.Do("PUT", "/api/v1/personal/profile", tok, map[string]any{"name": "Admin", "avatar": avatar})
	}
	for name, a := range map[string]string{
		"foreign URL":      "https://evil.example/x.png",
		"tampered":         strings.Replace(img.ViewURL, "sig=dev.", "sig=dev.A", 1),
		"not an image":     zip.ViewURL,
		"javascript":       "javascript:alert(1)",
		"other path":       strings.Replace(img.ViewURL, "/view", "/download", 1),
		"extra parameters": img.ViewURL + "&x=1",
	} {
		t.Run(name, func(t *testing.T) { profile(a).ExpectCode(t, name, errcode.AvatarUrlInvalid) })
	}
	profile(img.ViewURL).Expect(t, "signed image link", 200, 0)
	profile("http://kernel.example"+img.ViewURL).Expect(t, "absolute signed image link", 200, 0)
	var me struct {
		Avatar *string `json:"avatar"`
	}
	k.Do("GET", "/api/v1/personal/profile", tok, nil).Expect(t, "profile", 200, 0).Decode(t, &me)
	if me.Avatar == nil || *me.Avatar != "http://kernel.example"+img.ViewURL {
		t.Fatalf("avatar %v", me.Avatar)
	}
	profile("").Expect(t, "clearing", 200, 0)
}

var _ = http.StatusOK

// Local storage with the shared cache (several replicas) warns at start
// that files are replica-local; S3 does not.
func TestFileReplicaLocalWarning(t *testing.T) {
	redis := func() []string {
		return []string{"Service__Cache__Provider=Redis", "Service__Cache__Redis__Address=" + kerneltest.RedisAddr(),
			"Service__Cache__Redis__KeyPrefix=" + kerneltest.RedisPrefix(t)}
	}
	const warning = "files are stored on this replica's disk"
	if k := kerneltest.Start(t, redis()); !strings.Contains(k.Log(), warning) {
		t.Fatalf("no replica-local warning with Redis and local storage:\n%s", k.Log())
	}
	if k := kerneltest.Start(t, append(redis(), versity(t)...)); strings.Contains(k.Log(), warning) {
		t.Fatal("the replica-local warning with S3 storage")
	}
	if k := kerneltest.Start(t, []string{"Service__Cache__Provider="}); strings.Contains(k.Log(), warning) && os.Getenv(kerneltest.EnvCache) != kerneltest.CacheRedis {
		t.Fatal("the replica-local warning with the in-process cache")
	}
}

// TestAbandonedUploadsJob: the files module offers the job scheduler its
// cleanup handler; a job running it removes the chunked uploads that went
// quiet for longer than the expiry and leaves a fresh one alone.
func TestAbandonedUploadsJob(t *testing.T) {
	k := kerneltest.Start(t, nil)
	tok := k.Admin()
	var hl struct {
		Handlers []string `json:"handlers"`
	}
	k.Do("GET", "/api/v1/sys/job/handlers", tok, nil).Expect(t, "handlers", 200, 0).Decode(t, &hl)
	found := false
	for _, h := range hl.Handlers {
		found = found || h == file.HandlerAbandonedUploads
	}
	if !found {
		t.Fatalf("handlers %+v lack %s", hl.Handlers, file.HandlerAbandonedUploads)
	}
	stale := newChunks(k, tok, pngBytes(3000), 1000).init("stale.png")
	fresh := newChunks(k, tok, zipBytes(3000), 1000).init("fresh.zip")
	ctx := context.Background()
	k.Ent().SysFileUpload.UpdateOneID(*stale.UploadID).SetTouchTime(time.Now().Add(-48 * time.Hour)).ExecX(ctx)

	var jobID, runID int64
	k.Do("POST", "/api/v1/sys/job", tok, map[string]any{
		"code": "uploads-cleanup", "name": "uploads cleanup", "handlerKind": 1, "handlerName": file.HandlerAbandonedUploads,
		"triggerKind": 1, "cronExpression": "0 0 * * * ?", "misfireStrategy": 1, "concurrencyMode": 1,
	}).Expect(t, "add job", 200, 0).Decode(t, &jobID)
	var ran bool
	k.Do("POST", fmt.Sprintf("/api/v1/sys/job/%d/run", jobID), tok, nil).Expect(t, "run", 200, 0).Decode(t, &ran)
	runID = k.Ent().SysJobLog.Query().Where(sysjoblog.JobID(jobID)).OnlyIDX(ctx)
	poll.Until(t, 10*time.Second, "the cleanup run", func() bool {
		l, err := k.Ent().SysJobLog.Get(ctx, runID)
		return err == nil && l.RunStatus == 2 // Success
	})
	if n := k.Ent().SysFileUpload.Query().Where(sysfileupload.ID(*stale.UploadID)).CountX(ctx); n != 0 {
		t.Fatal("the abandoned upload is still there")
	}
	if n := k.Ent().SysFileUpload.Query().Where(sysfileupload.ID(*fresh.UploadID)).CountX(ctx); n != 1 {
		t.Fatal("the fresh upload was removed")
	}
}
