package file

import (
	"testing"
)

// FuzzChunkMeta: the metadata of a chunked upload — the chunk request's
// uploadId and index fields (ChunkField), the init's fileHash (checkHash)
// and the chunk size implied by totalSize and chunkCount (ChunkBound) —
// never panics, and what is accepted stays in range: an index within
// 0..MaxChunks, a hash of 64 lower-case hex digits, a chunk bound of at
// least one byte and at most MaxChunkBytes with which count chunks can
// carry total bytes.
func FuzzChunkMeta(f *testing.F) {
	f.Add("index", []byte("3"), "ab", int64(3000), int64(3))
	f.Add("uploadId", []byte(" 123 "), "", int64(5), int64(4))
	f.Add("index", []byte("-1"), "0000000000000000000000000000000000000000000000000000000000000000", int64(8<<20+1), int64(1))
	f.Add("index", []byte("10001"), "x", int64(1<<62), int64(10000))
	f.Add("index", []byte("9223372036854775808"), "", int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, name string, raw []byte, hash string, total, count int64) {
		if len(raw) > 32 { // the handler reads at most 32 bytes
			raw = raw[:32]
		}
		if n, err := ChunkField(name, raw); err == nil {
			if n < 0 || name == "index" && n > MaxChunks {
				t.Fatalf("ChunkField(%q, %q) accepted %d", name, raw, n)
			}
		}
		if h, err := checkHash(hash); err == nil && !sha256Hex.MatchString(h) {
			t.Fatalf("checkHash(%q) accepted %q", hash, h)
		}
		bound, ok := ChunkBound(total, count)
		if !ok {
			return
		}
		if total <= 0 || count < 1 || count > total {
			t.Fatalf("ChunkBound(%d, %d) accepted out-of-range arguments", total, count)
		}
		if bound < 1 || bound > MaxChunkBytes {
			t.Fatalf("ChunkBound(%d, %d) = %d, out of 1..%d", total, count, bound, MaxChunkBytes)
		}
		// count chunks of bound bytes carry total (no overflow: bound <=
		// 8 MiB, count <= total).
		if total/count > bound || total/count == bound && total%count != 0 {
			t.Fatalf("ChunkBound(%d, %d) = %d: %d chunks cannot carry the file", total, count, bound, count)
		}
	})
}
