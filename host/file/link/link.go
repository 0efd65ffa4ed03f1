// Package link signs and checks the file links of the wire contract
// (GET /api/v1/sys/file/{id}/view?exp=…&sig=…): an HMAC-SHA256 over the
// purpose, the file id and the expiry, with the key ring
// Service:Upload:SigningKeys — separate from the access-token keys and
// rotatable like them (the first key signs, every key verifies, each
// signature names its key).
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
	"sync"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysfile"
	"github.com/adminkernel/kernel/host/devkey"
	"github.com/adminkernel/kernel/host/errcode"
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

// New returns a ring of keys with the link lifetime ttl (0: no expiry).
func New(keys []Key, ttl time.Duration) *Ring { return &Ring{keys: keys, ttl: ttl} }

var rings sync.Map // *config.Config → *Ring

// FromConfig returns the ring of cfg (built once per settings tree): the
// configured keys or, outside Production when none are set, a development
// key generated once under DataDir (mode 0600).
func FromConfig(cfg *config.Config) (*Ring, error) {
	if r, ok := rings.Load(cfg); ok {
		return r.(*Ring), nil
	}
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
	r, _ := rings.LoadOrStore(cfg, New(keys, ttl))
	return r.(*Ring), nil
}

// Ready reports whether the ring can sign.
func (r *Ring) Ready() bool { return len(r.keys) > 0 }

// TTL is the link lifetime (0: no expiry).
func (r *Ring) TTL() time.Duration { return r.ttl }

func mac(secret []byte, purpose string, id, exp int64) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("adminkernel file link\x00"))
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, id, 10))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, exp, 10))
	return h.Sum(nil)
}

// Sign returns the signature of (purpose, id, exp): "<key id>.<base64url
// HMAC>". exp is a Unix time in seconds, 0 for a link that does not expire.
func (r *Ring) Sign(purpose string, id, exp int64) (string, error) {
	if !r.Ready() {
		return "", ErrNoKey
	}
	k := r.keys[0]
	return k.ID + "." + base64.RawURLEncoding.EncodeToString(mac(k.Secret, purpose, id, exp)), nil
}

// Verify reports whether sig signs (purpose, id, exp) with a key of the
// ring and, when exp is not 0, exp is not past at now.
func (r *Ring) Verify(purpose string, id, exp int64, sig string, now time.Time) bool {
	if exp < 0 || (exp != 0 && now.Unix() > exp) {
		return false
	}
	kid, enc, ok := strings.Cut(sig, ".")
	if !ok || len(enc) != 43 {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return false
	}
	for _, k := range r.keys {
		if k.ID == kid {
			return hmac.Equal(got, mac(k.Secret, purpose, id, exp))
		}
	}
	return false
}

// ViewURL returns the site-relative view link of file id, valid for the
// ring's lifetime from now.
func (r *Ring) ViewURL(id int64, now time.Time) (string, error) {
	var exp int64
	if r.ttl > 0 {
		exp = now.Add(r.ttl).Unix()
	}
	sig, err := r.Sign(PurposeView, id, exp)
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
