package password

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"runtime"
)

// yieldEvery is the number of PBKDF2 iterations between two
// runtime.Gosched calls (about 0.6 ms of work at ~150 ns per iteration).
// Go preempts a long-running goroutine only about every 10 ms; yielding
// more often lets the requests queued behind a hash (pings, page loads) run
// between blocks of iterations instead of waiting for the preemption. The
// cost is about 150 Gosched calls per 600 000-iteration hash, well under
// 1 % (BenchmarkKey; docs/design/benchmarks.md "Login storm").
const yieldEvery = 4096

// key is PBKDF2-HMAC-SHA256 (RFC 8018 §5.2) computed in blocks of
// yieldEvery iterations with a runtime.Gosched between blocks. Its output
// is byte-identical to crypto/pbkdf2.Key(sha256.New, ...) (TestKeyMatches*).
func key(password string, salt []byte, iter, keyLen int) []byte {
	prf := hmac.New(sha256.New, []byte(password))
	hashLen := prf.Size()
	numBlocks := (keyLen + hashLen - 1) / hashLen
	dk := make([]byte, 0, numBlocks*hashLen)
	u := make([]byte, 0, hashLen)
	var ctr [4]byte
	for block := 1; block <= numBlocks; block++ {
		prf.Reset()
		prf.Write(salt)
		binary.BigEndian.PutUint32(ctr[:], uint32(block)) //nolint:gosec // G115: block ≤ numBlocks, a handful
		prf.Write(ctr[:])
		dk = prf.Sum(dk)
		t := dk[len(dk)-hashLen:]
		u = append(u[:0], t...)
		for n := 2; n <= iter; n++ {
			prf.Reset()
			prf.Write(u)
			u = prf.Sum(u[:0])
			for i := range u {
				t[i] ^= u[i]
			}
			if n%yieldEvery == 0 {
				runtime.Gosched()
			}
		}
	}
	return dk[:keyLen]
}
