package host_test

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/password"
)

// legacyHasher verifies "legacy-sha256$<hex>" hashes of a system the users
// were migrated from and asks for their rehash; everything else, and every
// new hash, is the kernel's.
type legacyHasher struct {
	kernel   password.Hasher
	verified atomic.Int64 // legacy hashes verified
}

const legacyPrefix = "legacy-sha256$"

func legacyHash(pw string) string {
	sum := sha256.Sum256([]byte(pw))
	return legacyPrefix + hex.EncodeToString(sum[:])
}

func (h *legacyHasher) HashContext(ctx context.Context, plain string) (string, error) {
	return h.kernel.HashContext(ctx, plain)
}

func (h *legacyHasher) VerifyContext(ctx context.Context, hash, plain string) (bool, error) {
	if strings.HasPrefix(hash, legacyPrefix) {
		h.verified.Add(1)
		return subtle.ConstantTimeCompare([]byte(hash), []byte(legacyHash(plain))) == 1, nil
	}
	return h.kernel.VerifyContext(ctx, hash, plain)
}

func (h *legacyHasher) NeedsRehash(hash string) bool {
	return strings.HasPrefix(hash, legacyPrefix) || password.NeedsRehash(h.kernel, hash)
}

// noRehash has no NeedsRehash: the contract's default (false) applies.
type noRehash struct{ password.Hasher }

func TestPasswordHasherOption(t *testing.T) {
	ctx := context.Background()
	t.Run("migrated hashes verify and are rehashed at login", func(t *testing.T) {
		lh := &legacyHasher{}
		k := kerneltest.StartWith(t, kerneltest.Options{Host: func(o *host.Options) {
			o.PasswordHasher = func(kernel password.Hasher) password.Hasher {
				lh.kernel = kernel
				return lh
			}
		}})
		if k.Passwords() != password.Hasher(lh) {
			t.Fatal("the kernel does not use the hasher of Options.PasswordHasher")
		}
		k.Ent().SysUser.Create().SetAccount("migrated").SetName("migrated").SetPasswordHash(legacyHash("Migr8ted#Pass")).SaveX(ctx)

		r := k.Do("POST", "/api/v1/auth/login", "", map[string]string{"account": "migrated", "password": "wrong-Pass#1"})
		if r.Code == 0 {
			t.Fatal("a wrong password logged in with a legacy hash")
		}
		k.Login("migrated", "Migr8ted#Pass")
		u := k.Ent().SysUser.Query().Where(sysuser.Account("migrated")).OnlyX(ctx)
		if strings.HasPrefix(u.PasswordHash, legacyPrefix) {
			t.Fatalf("the legacy hash was not replaced at login: %s", u.PasswordHash)
		}
		if _, err := password.IterationsOf(u.PasswordHash); err != nil {
			t.Fatalf("the new hash is not the kernel's format: %v", err)
		}
		before := lh.verified.Load()
		k.Login("migrated", "Migr8ted#Pass") // now a kernel hash
		if lh.verified.Load() != before {
			t.Fatal("the second login went through the legacy verifier")
		}
	})

	t.Run("a hasher without NeedsRehash never asks for a rehash", func(t *testing.T) {
		k := kerneltest.StartWith(t, kerneltest.Options{Host: func(o *host.Options) {
			o.PasswordHasher = func(kernel password.Hasher) password.Hasher { return noRehash{kernel} }
		}})
		addUser(t, k, "oldcount", "Old#Count1", 200000, false)
		k.Login("oldcount", "Old#Count1")
		u := k.Ent().SysUser.Query().Where(sysuser.Account("oldcount")).OnlyX(ctx)
		if n, _ := password.IterationsOf(u.PasswordHash); n != 200000 {
			t.Fatalf("iterations after login = %d: rehashed although the hasher has no NeedsRehash", n)
		}
	})
}

func TestErrorCodeEnumsOption(t *testing.T) {
	a := errcode.Enum{Name: "BillingError", Members: []errcode.Member{{Code: 61101, Name: "InvoiceLocked", MsgKey: "error.billing.invoiceLocked"}}}
	b := errcode.Enum{Name: "ShippingError", Members: []errcode.Member{{Code: 61201, Name: "NoCarrier", MsgKey: "error.shipping.noCarrier"}}}
	tests := []struct {
		name    string
		opts    host.Options
		want    map[errcode.Code]string // code → source
		wantErr string
	}{
		{"ErrorCodeEnums", host.Options{ErrorCodeEnums: []errcode.Enum{a}}, map[errcode.Code]string{61101: "BillingError"}, ""},
		{"the ErrorCodes alias", host.Options{ErrorCodes: []errcode.Enum{b}}, map[errcode.Code]string{61201: "ShippingError"}, ""},
		{"both lists", host.Options{ErrorCodeEnums: []errcode.Enum{a}, ErrorCodes: []errcode.Enum{b}}, map[errcode.Code]string{61101: "BillingError", 61201: "ShippingError"}, ""},
		{"one number in both", host.Options{ErrorCodeEnums: []errcode.Enum{a}, ErrorCodes: []errcode.Enum{{Name: "Other", Members: []errcode.Member{{Code: 61101, Name: "X", MsgKey: "x"}}}}}, nil, "BillingError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, err := host.Catalog(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "Other") {
					t.Fatalf("Catalog error = %v, want one naming %s and Other", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[errcode.Code]string{}
			for _, e := range cat.Entries() {
				if e.Code >= 60000 {
					got[e.Code] = e.Source
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("consumer codes = %v, want %v", got, tt.want)
			}
			for c, src := range tt.want {
				if got[c] != src {
					t.Errorf("code %d source %q, want %q", c, got[c], src)
				}
			}
		})
	}
}
