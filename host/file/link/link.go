// Package link signs and checks the file links of the wire contract
// (GET /api/v1/sys/file/{id}/view?exp=…&sig=…): an HMAC-SHA256 over the
// purpose, the file id, the expiry and the issue time, with the key ring
// Service:Upload:SigningKeys — separate from the access-token keys and
// rotatable like them (the first key signs, every key verifies, each
// signature names its key). The signature carries the issue time
// ("<key id>.<issued>.<mac>"), so the lifetime in force when a link is
// checked applies to it, not only the one in force when it was issued.
package link

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysfile"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/devkey"
)

// PurposeView is the purpose of the contract's /view links.
const PurposeView = "view"

// ViewPath is the path template of a view link, %d the file id.
const ViewPath = "/api/v1/sys/file/%d/view"

// DevKeyFile is the generated development key, kept in Service:DataDir.
const DevKeyFile = "dev-file-link.key"

const devKeyID = "dev"

// Key is one key of the ring.
type Key struct {
	ID     string
	Secret []byte
}

// Ring signs with its first key and verifies with all of them. A ring
// without keys (Production without Service:Upload:SigningKeys) signs
// nothing and accepts nothing.
type Ring struct {
	keys []Key
	ttl  time.Duration
}

// ErrNoKey: the ring has no key.
var ErrNoKey = errors.New("link: Service:Upload:SigningKeys is not set")

// New returns a ring of keys with the link lifetime ttl (0: no expiry),
// counted from each link's issue time.
func New(keys []Key, ttl time.Duration) *Ring { return &Ring{keys: keys, ttl: ttl} }

// FromConfig returns the ring of cfg: the configured keys or, outside
// Production when none are set, the development key generated once under
// DataDir (mode 0600) and read from there afterwards. It keeps nothing
// between calls: the files area builds its ring once, and an avatar check
// (rare) reads the same keys again.
func FromConfig(cfg *config.Config) (*Ring, error) {
	u := cfg.Service.Upload
	ttl := time.Duration(u.SignedURLTTLMinutes) * time.Minute
	var keys []Key
	switch {
	case len(u.SigningKeys) > 0:
		for _, k := range u.SigningKeys {
			keys = append(keys, Key{ID: k.ID, Secret: []byte(k.Key.Reveal())})
		}
	case cfg.IsProduction():
	default:
		secret, err := devkey.Load(filepath.Join(cfg.DataPath(), DevKeyFile), "file-link key", 32)
		if err != nil {
			return nil, err
		}
		keys = []Key{{ID: devKeyID, Secret: secret}}
	}
	return New(keys, ttl), nil
}

// Ready reports whether the ring can sign.
func (r *Ring) Ready() bool { return len(r.keys) > 0 }

// TTL is the link lifetime (0: no expiry).
func (r *Ring) TTL() time.Duration { return r.ttl }

// macV1 is the MAC of the links issued before links carried their issue
// time ("<key id>.<mac>"): accepted only as issued at the Unix epoch (see
// Verify).
func macV1(secret []byte, purpose string, id, exp int64) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("adminkernel file link\x00"))
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, id, 10))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, exp, 10))
	return h.Sum(nil)
}

// mac is the MAC of a link: a label of its own, the purpose, the id, the
// expiry and the issue time.
func mac(secret []byte, purpose string, id, exp, iat int64) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("adminkernel file link v2\x00"))
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, id, 10))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, exp, 10))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, iat, 10))
	return h.Sum(nil)
}

// b64 decodes MACs strictly: 43 characters of the URL alphabet whose last
// one carries zero padding bits, so each MAC has exactly one spelling.
var b64 = base64.RawURLEncoding.Strict()

// macLen is the length of an encoded MAC (32 bytes, unpadded).
const macLen = 43

// MaxIssueSkew is how far in the future a link's issue time may be (the
// clocks of the replicas differ a little).
const MaxIssueSkew = time.Minute

// Sign returns the signature of (purpose, id, exp) issued at iat (Unix
// seconds): "<key id>.<iat>.<base64url HMAC>". exp is a Unix time in
// seconds, 0 for a link without an expiry of its own.
func (r *Ring) Sign(purpose string, id, exp, iat int64) (string, error) {
	if !r.Ready() {
		return "", ErrNoKey
	}
	k := r.keys[0]
	return k.ID + "." + strconv.FormatInt(iat, 10) + "." + base64.RawURLEncoding.EncodeToString(mac(k.Secret, purpose, id, exp, iat)), nil
}

// Verify reports whether sig signs (purpose, id, exp) with a key of the
// ring and the link is still valid at now: before exp (when not 0) and,
// when the ring has a lifetime, before its issue time plus the lifetime
// (the ring's current one: a shorter lifetime applies to the links issued
// before). A link without an issue time (issued by an older version) counts
// as issued at the epoch: valid only while the lifetime is 0. Every part is
// read strictly: a signature has one spelling.
func (r *Ring) Verify(purpose string, id, exp int64, sig string, now time.Time) bool {
	t := now.Unix()
	if exp < 0 || exp != 0 && t >= exp {
		return false
	}
	kid, rest, ok := strings.Cut(sig, ".")
	if !ok || kid == "" {
		return false
	}
	issued, enc, v2 := strings.Cut(rest, ".")
	var iat int64
	if v2 {
		if iat, ok = parseIssued(issued); !ok || iat > t+int64(MaxIssueSkew/time.Second) {
			return false
		}
	} else {
		enc = rest
	}
	if r.ttl > 0 && t >= iat+int64(r.ttl/time.Second) {
		return false
	}
	if len(enc) != macLen {
		return false
	}
	var got [32]byte
	if n, err := b64.Decode(got[:], []byte(enc)); err != nil || n != len(got) {
		return false
	}
	for _, k := range r.keys {
		if k.ID != kid {
			continue
		}
		if v2 {
			return hmac.Equal(got[:], mac(k.Secret, purpose, id, exp, iat))
		}
		return hmac.Equal(got[:], macV1(k.Secret, purpose, id, exp))
	}
	return false
}

// parseIssued reads an issue time: 1 to 12 digits, no leading zero.
func parseIssued(s string) (int64, bool) {
	if s == "" || len(s) > 12 || s[0] == '0' {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// ViewURL returns the site-relative view link of file id, issued now and
// valid for the ring's lifetime (0: until the lifetime is set).
func (r *Ring) ViewURL(id int64, now time.Time) (string, error) {
	iat := now.Unix()
	var exp int64
	if r.ttl > 0 {
		exp = iat + int64(r.ttl/time.Second)
	}
	sig, err := r.Sign(PurposeView, id, exp, iat)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(ViewPath, id) + "?exp=" + strconv.FormatInt(exp, 10) + "&sig=" + url.QueryEscape(sig), nil
}

var viewPath = regexp.MustCompile(`^/api/v1/sys/file/([0-9]{1,19})/view$`)

// ParseView checks a view link as stored in a profile (site-relative or
// absolute http(s)): its path, a valid unexpired signature. It returns the
// file id.
func (r *Ring) ParseView(raw string, now time.Time) (int64, bool) {
	if len(raw) > 2048 {
		return 0, false
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Fragment != "" {
		return 0, false
	}
	if u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
		return 0, false
	}
	if (u.Scheme == "") != (u.Host == "") {
		return 0, false
	}
	m := viewPath.FindStringSubmatch(u.Path)
	if m == nil {
		return 0, false
	}
	id, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	q := u.Query()
	if len(q["exp"]) != 1 || len(q["sig"]) != 1 || len(q) != 2 {
		return 0, false
	}
	exp, err := strconv.ParseInt(q.Get("exp"), 10, 64)
	if err != nil || !r.Verify(PurposeView, id, exp, q.Get("sig"), now) {
		return 0, false
	}
	return id, true
}

// Avatar checks an avatar URL (personal profile, user administration): it
// must be a view link of this kernel with a valid, unexpired signature,
// naming a live file whose content is an image (inline types other than
// pdf). It returns the URL trimmed, or 42026 AvatarUrlInvalid.
func Avatar(ctx context.Context, client *ent.Client, cfg *config.Config, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	ring, err := FromConfig(cfg)
	if err != nil {
		return "", err
	}
	id, ok := ring.ParseView(raw, time.Now())
	if !ok {
		return "", errcode.New(errcode.AvatarUrlInvalid)
	}
	f, err := client.SysFile.Query().Where(sysfile.ID(id), sysfile.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return "", errcode.New(errcode.AvatarUrlInvalid)
	}
	if err != nil {
		return "", err
	}
	if f.ContentType == nil || !strings.HasPrefix(*f.ContentType, "image/") {
		return "", errcode.New(errcode.AvatarUrlInvalid)
	}
	return raw, nil
}
