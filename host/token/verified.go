package token

import (
	"strings"
	"sync"
)

// VerifiedCacheSize bounds how many verified tokens an Issuer remembers.
// An entry costs about half a kilobyte (the token's text and its claims),
// so the cache stays under about 4 MB.
const VerifiedCacheSize = 8192

// verifiedShards spreads the cache over independently locked maps so that
// concurrent requests on different tokens do not contend.
const verifiedShards = 16

// verified remembers the claims of tokens whose signature and claims
// verified, keyed by the token's exact text. A hit skips the HMAC and the
// JSON decode only: the caller still checks exp, nbf and iat against the
// clock on every use, and nothing else about a token can change (the key
// and the issuer are fixed for the Issuer's life). Session state is not
// here: revocation is the session check's business.
//
// Only tokens that verified are stored, so presenting garbage cannot fill
// the cache; a full shard drops an arbitrary entry (Go's map order) to make
// room. Expired entries are dropped when met.
type verified struct {
	perShard int
	shards   [verifiedShards]verifiedShard
}

type verifiedShard struct {
	mu sync.RWMutex
	m  map[string]Claims
}

func newVerified(size int) *verified {
	v := &verified{perShard: max(size/verifiedShards, 1)}
	for i := range v.shards {
		v.shards[i].m = make(map[string]Claims)
	}
	return v
}

// shard picks a shard from the token's last byte: a base64url character of
// the signature, i.e. of an HMAC output, evenly spread over 64 values.
func (v *verified) shard(raw string) *verifiedShard {
	if raw == "" {
		return &v.shards[0]
	}
	return &v.shards[raw[len(raw)-1]%verifiedShards]
}

func (v *verified) get(raw string) (Claims, bool) {
	s := v.shard(raw)
	s.mu.RLock()
	c, ok := s.m[raw]
	s.mu.RUnlock()
	return c, ok
}

// put remembers the claims of a token that verified. raw may point into a
// reused request buffer, so the key is a copy.
func (v *verified) put(raw string, c Claims) {
	s := v.shard(raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[raw]; ok {
		return
	}
	if len(s.m) >= v.perShard {
		for k := range s.m {
			delete(s.m, k)
			break
		}
	}
	s.m[strings.Clone(raw)] = c
}

// forget drops a token (it failed its time checks: it will keep failing
// them, or it is not valid yet and will verify again later).
func (v *verified) forget(raw string) {
	s := v.shard(raw)
	s.mu.Lock()
	delete(s.m, raw)
	s.mu.Unlock()
}

// len returns how many tokens are remembered (tests).
func (v *verified) len() int {
	n := 0
	for i := range v.shards {
		s := &v.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}
