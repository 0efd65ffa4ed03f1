//go:build !unit

package file_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/file"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// TestFileChunkBounds (Security III): a chunk is at most the upload's chunk
// size (implied by totalSize and chunkCount, at most 8 MiB) and the
// upload's chunks together at most its totalSize; one user's unfinished
// uploads declare at most Service:Upload:PendingMaxMb. Before, one chunk
// could be as large as the whole file, 10 000 of them parked for a day.
func TestFileChunkBounds(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Upload__PendingMaxMb=30"})
	tok := k.Admin()
	if err := k.Settings().Set(context.Background(), "sys.upload.maxSizeMb", "2048"); err != nil {
		t.Fatal(err)
	}
	initBody := func(hash string, total, count int) map[string]any {
		return map[string]any{"fileHash": hash, "fileName": "b.zip", "totalSize": total, "chunkCount": count}
	}
	// 20 MiB in one chunk: the chunk size would be over 8 MiB.
	k.Do("POST", "/api/v1/sys/file/chunk/init", tok, initBody(strings.Repeat("1", 64), 20<<20, 1)).
		ExpectCode(t, "one 20 MiB chunk", errcode.ChunkTooLarge)
	k.Do("POST", "/api/v1/sys/file/chunk/init", tok, initBody(strings.Repeat("1", 64), 20<<20, 2)).
		ExpectCode(t, "two 10 MiB chunks", errcode.ChunkTooLarge)

	// 3000 bytes in 3 chunks: chunks of up to 1499 bytes.
	f := newChunks(k, tok, zipBytes(3000), 1000)
	id := *f.init("b.zip").UploadID
	r := sendChunk(k, tok, id, 0, bytes.Repeat([]byte("z"), 1500)).ExpectCode(t, "a chunk over the chunk size", errcode.ChunkTooLarge)
	if r.Args["max"] != float64(1499) {
		t.Errorf("args %v, want max 1499", r.Args)
	}
	sendChunk(k, tok, id, 0, bytes.Repeat([]byte("z"), 3000)).ExpectCode(t, "a chunk of the whole file", errcode.ChunkTooLarge)
	sendChunk(k, tok, id, 0, f.chunks[0]).Expect(t, "chunk 0", 200, 0)
	sendChunk(k, tok, id, 1, bytes.Repeat([]byte("z"), 1499)).Expect(t, "chunk 1 at the chunk size", 200, 0)
	// 1000 + 1499 held: chunk 2 may add 501 bytes at most.
	sendChunk(k, tok, id, 2, f.chunks[2]).ExpectCode(t, "chunks over the total", errcode.ChunkTooLarge)
	sendChunk(k, tok, id, 1, f.chunks[1]).Expect(t, "chunk 1 again", 200, 0)
	sendChunk(k, tok, id, 2, f.chunks[2]).Expect(t, "chunk 2", 200, 0)
	f.complete(id, "b.zip").Expect(t, "complete", 200, 0)

	// Pending bytes: 30 MB per user. Two 12 MiB uploads fit, a third not;
	// resuming one of them still works.
	k.Do("POST", "/api/v1/sys/file/chunk/init", tok, initBody(strings.Repeat("2", 64), 12<<20, 12)).Expect(t, "first pending", 200, 0)
	k.Do("POST", "/api/v1/sys/file/chunk/init", tok, initBody(strings.Repeat("3", 64), 12<<20, 12)).Expect(t, "second pending", 200, 0)
	r = k.Do("POST", "/api/v1/sys/file/chunk/init", tok, initBody(strings.Repeat("4", 64), 12<<20, 12)).
		ExpectCode(t, "third pending", errcode.UploadPendingExceeded)
	if r.Args["max"] != float64(30) {
		t.Errorf("args %v, want max 30", r.Args)
	}
	k.Do("POST", "/api/v1/sys/file/chunk/init", tok, initBody(strings.Repeat("2", 64), 12<<20, 12)).Expect(t, "resuming the first", 200, 0)
	// Another user has a budget of their own.
	k.User("uploader", "Upl0ader#Pass", "POST:/api/v1/sys/file/chunk/init")
	ot := k.Login("uploader", "Upl0ader#Pass").AccessToken
	k.Do("POST", "/api/v1/sys/file/chunk/init", ot, initBody(strings.Repeat("4", 64), 12<<20, 12)).Expect(t, "another user's upload", 200, 0)
}

// TestChunkBound: the implied chunk size of a split.
func TestChunkBound(t *testing.T) {
	for _, c := range []struct {
		total, count, want int64
		ok                 bool
	}{
		{3000, 3, 1499, true},
		{3000, 1, 3000, true},
		{1<<20 + 12345, 5, (1<<20 + 12344) / 4, true},
		{8 << 20, 1, 8 << 20, true},
		{8<<20 + 1, 1, 0, false},
		{16 << 20, 2, 8 << 20, true},
		{20 << 20, 2, 0, false},
		{20 << 20, 3, 8 << 20, true},
		{0, 1, 0, false},
		{5, 6, 0, false},
		{5, 4, 2, true},
		{10000, 10000, 1, true},
		{5, 0, 0, false},
	} {
		got, ok := file.ChunkBound(c.total, c.count)
		if got != c.want || ok != c.ok {
			t.Errorf("ChunkBound(%d, %d) = %d, %v; want %d, %v", c.total, c.count, got, ok, c.want, c.ok)
		}
	}
}
