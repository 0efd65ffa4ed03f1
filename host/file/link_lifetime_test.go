//go:build !unit

package file_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// The link keys of these tests, as an operator configures them.
const (
	linkKeyOld = "the-old-file-link-key-of-32-bytes-or-more"
	linkKeyNew = "the-new-file-link-key-of-32-bytes-or-more"
)

// oldFormatLink is a view link as versions before issue times wrote it
// ("sig=<key id>.<base64url HMAC over label, purpose, id, exp>"), made
// here from the format with the configured key: what a profile stored
// before an upgrade holds.
func oldFormatLink(keyID, key string, id, exp int64) string {
	h := hmac.New(sha256.New, []byte(key))
	fmt.Fprintf(h, "adminkernel file link\x00view\x00%d\x00%d", id, exp)
	sig := keyID + "." + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
	return fmt.Sprintf("/api/v1/sys/file/%d/view?exp=%d&sig=%s", id, exp, url.QueryEscape(sig))
}

// issuedLink is a view link in the current format, issued at iat.
func issuedLink(keyID, key string, id, exp, iat int64) string {
	h := hmac.New(sha256.New, []byte(key))
	fmt.Fprintf(h, "adminkernel file link v2\x00view\x00%d\x00%d\x00%d", id, exp, iat)
	sig := fmt.Sprintf("%s.%d.%s", keyID, iat, base64.RawURLEncoding.EncodeToString(h.Sum(nil)))
	return fmt.Sprintf("/api/v1/sys/file/%d/view?exp=%d&sig=%s", id, exp, url.QueryEscape(sig))
}

// TestViewLinkLifetimeChange: the kernel restarted on the same database
// and files with another link lifetime or key ring judges the links
// issued before by the settings now in force. A link without expiry
// (issued under lifetime 0, by this version or an older one) stops
// working once the lifetime is set and its issue time is further back
// than it; a link issued under a longer lifetime is cut to the shorter
// one; a key removed from the ring takes its links with it; avatars are
// judged the same.
func TestViewLinkLifetimeChange(t *testing.T) {
	shared := t.TempDir()
	env := kerneltest.BackendEnviron(t, nil)
	if db, _ := kerneltest.Backend(t); db == config.DBSqlite {
		env = append(env, "Service__Database__ConnectionString=Data Source="+filepath.Join(shared, "ak.db"))
	}
	env = append(env, "Service__DataDir="+shared)
	start := func(ttl string, keys ...string) *kerneltest.Kernel {
		e := append([]string{"Service__Upload__SignedUrlTtlMinutes=" + ttl}, env...)
		for i, k := range keys {
			id, _, _ := strings.Cut(k, "=")
			e = append(e, fmt.Sprintf("Service__Upload__SigningKeys__%d__Id=%s", i, id),
				fmt.Sprintf("Service__Upload__SigningKeys__%d__Key=%s", i, map[string]string{"old": linkKeyOld, "new": linkKeyNew}[id]))
		}
		return kerneltest.Start(t, e)
	}

	// Lifetime 0: the upload's link has no expiry and works.
	k := start("0", "old")
	tok := k.Admin()
	var f uploadOutput
	upload(k, tok, "a.png", pngBytes(300)).Expect(t, "upload", 200, 0).Decode(t, &f)
	if !strings.Contains(f.ViewURL, "exp=0&") {
		t.Fatalf("a link under lifetime 0: %s", f.ViewURL)
	}
	now := time.Now().Unix()
	longAgo := now - 3*3600
	oldNoExpiry := oldFormatLink("old", linkKeyOld, f.ID, 0)
	issuedNoExpiry := issuedLink("old", linkKeyOld, f.ID, 0, longAgo)
	for name, path := range map[string]string{"just issued": f.ViewURL, "older version": oldNoExpiry, "issued 3 h ago": issuedNoExpiry} {
		if r := get(k, path, ""); r.Status != 200 {
			t.Errorf("lifetime 0, %s: HTTP %d", name, r.Status)
		}
	}
	k.Do("PUT", "/api/v1/personal/profile", tok, map[string]any{"name": "Admin", "avatar": oldNoExpiry}).Expect(t, "avatar under lifetime 0", 200, 0)
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}

	// Lifetime 60 minutes: links without expiry issued more than an hour
	// ago, and those of an older version (no issue time), stop working;
	// the link issued a moment ago still works (its hour has not passed);
	// a link issued 90 minutes ago under a 2 h lifetime is cut to 1 h.
	k = start("60", "old")
	tok = k.Admin()
	issued2h := issuedLink("old", linkKeyOld, f.ID, now-90*60+2*3600, now-90*60)
	refused := map[string]string{
		"older version, no expiry":        oldNoExpiry,
		"issued 3 h ago, no expiry":       issuedNoExpiry,
		"issued 90 min ago, 2 h lifetime": issued2h,
	}
	for name, path := range refused {
		if r := get(k, path, ""); r.Status != 403 || len(r.Body) != 0 {
			t.Errorf("lifetime 60 min, %s: HTTP %d, want 403", name, r.Status)
		}
	}
	if r := get(k, f.ViewURL, ""); r.Status != 200 {
		t.Errorf("lifetime 60 min, the link issued a moment ago: HTTP %d", r.Status)
	}
	k.Do("PUT", "/api/v1/personal/profile", tok, map[string]any{"name": "Admin", "avatar": oldNoExpiry}).
		ExpectCode(t, "an older version's avatar link under a lifetime", errcode.AvatarUrlInvalid)
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}

	// Key rotation: the old key kept behind the new one still verifies;
	// once removed, its links are refused.
	k = start("0", "new", "old")
	if r := get(k, f.ViewURL, ""); r.Status != 200 {
		t.Errorf("old key kept in the ring: HTTP %d", r.Status)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	k = start("0", "new")
	for name, path := range map[string]string{"just issued": f.ViewURL, "older version": oldNoExpiry} {
		if r := get(k, path, ""); r.Status != 403 {
			t.Errorf("old key removed, %s: HTTP %d, want 403", name, r.Status)
		}
	}
}

// TestViewLinkSingleCharacterMutations: one-character changes of a link's
// signature are refused through the view route: every position changed
// to two other characters, and the last character to every other one of
// the alphabet (its padding-bit variants included: a lenient decoder
// reads them as the same MAC). host/file/link tests every byte value at
// every position without HTTP.
func TestViewLinkSingleCharacterMutations(t *testing.T) {
	k := kerneltest.Start(t, []string{"Service__Upload__SigningKeys__0__Id=old", "Service__Upload__SigningKeys__0__Key=" + linkKeyOld})
	tok := k.Admin()
	var f uploadOutput
	upload(k, tok, "m.png", pngBytes(200)).Expect(t, "upload", 200, 0).Decode(t, &f)
	for _, link := range []string{f.ViewURL, oldFormatLink("old", linkKeyOld, f.ID, 0)} {
		u, err := url.Parse(link)
		if err != nil {
			t.Fatal(err)
		}
		sig := u.Query().Get("sig")
		if r := get(k, link, ""); r.Status != 200 {
			t.Fatalf("%s: HTTP %d", link, r.Status)
		}
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.="
		accepted := 0
		for i := range len(sig) {
			var others string
			if i == len(sig)-1 {
				others = alphabet
			} else {
				j := strings.IndexByte(alphabet, sig[i])
				others = string(alphabet[(j+1)%len(alphabet)]) + string(alphabet[(j+len(alphabet)/2)%len(alphabet)])
			}
			for _, c := range others {
				if byte(c) == sig[i] {
					continue
				}
				m := sig[:i] + string(c) + sig[i+1:]
				path := fmt.Sprintf("/api/v1/sys/file/%d/view?exp=%s&sig=%s", f.ID, u.Query().Get("exp"), url.QueryEscape(m))
				if r := get(k, path, ""); r.Status != 403 {
					accepted++
					t.Errorf("signature %q (character %d changed) answered HTTP %d", m, i, r.Status)
				}
			}
		}
		if accepted > 0 {
			t.Errorf("%d single-character mutations of %q accepted", accepted, sig)
		}
	}
}
