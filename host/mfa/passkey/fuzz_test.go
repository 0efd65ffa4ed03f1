package passkey_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/cache/memcache"
	"github.com/adminkernel/kernel/host/database/dbtest"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/mfa/passkey"
	"github.com/adminkernel/kernel/host/mfa/passkey/passkeytest"
)

// FuzzFinish feeds the credential object of a finish body (the WebAuthn
// attestation of register/finish, the assertion of login/finish and
// passwordless/finish) to the relying party, each time on a fresh
// ceremony: nothing panics, every refusal is an envelope error (never a
// 500), and no ceremony is ever accepted (the fuzzer cannot answer a
// challenge it never saw). Seeds are real responses of an authenticator
// to other ceremonies and shapes around them; one passkey is registered,
// so an assertion naming it reaches the signature check.
func FuzzFinish(f *testing.F) {
	ctx := context.Background()
	cfg := dbtest.Config(f, config.DBSqlite)
	db := dbtest.OpenConfig(f, cfg)
	if err := db.Migrate(ctx); err != nil {
		f.Fatal(err)
	}
	store, err := memcache.New(memcache.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = store.Close() })
	svc, err := passkey.New(db.Client, store, cfg)
	if err != nil || !svc.Enabled() {
		f.Fatalf("relying party: %v (enabled %v)", err, svc.Enabled())
	}
	owner := passkey.Owner{ID: 4242, Account: "fuzz", Name: "Fuzz"}
	auth := passkeytest.New(config.DevPasskeyOrigin)

	// A real registration, and a real (stale) attestation and assertion.
	b, err := svc.BeginRegistration(ctx, owner)
	if err != nil {
		f.Fatal(err)
	}
	att, err := auth.Create(options(f, b))
	if err != nil {
		f.Fatal(err)
	}
	if _, err := svc.FinishRegistration(ctx, owner, passkey.RegisterInput{CeremonyID: b.CeremonyID, Credential: att}); err != nil {
		f.Fatalf("registering the seed passkey: %v", err)
	}
	b, err = svc.BeginPasswordless(ctx)
	if err != nil {
		f.Fatal(err)
	}
	assertion, err := auth.Get(options(f, b))
	if err != nil {
		f.Fatal(err)
	}
	b, err = svc.BeginRegistration(ctx, owner)
	if err != nil {
		f.Fatal(err)
	}
	att2, err := passkeytest.New(config.DevPasskeyOrigin).Create(options(f, b))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][]byte{att, att2, assertion} {
		f.Add(uint8(0), s)
		f.Add(uint8(1), s)
	}
	for _, s := range []string{`{}`, `null`, `[]`, `"x"`, `{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{}}`,
		`{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{"clientDataJSON":"e30","attestationObject":"oA"}}`,
		`{"id":"AAAA","rawId":"AAAA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"","signature":"","userHandle":"AAAAAAAAEJI"}}`} {
		f.Add(uint8(0), []byte(s))
		f.Add(uint8(1), []byte(s))
	}

	envelope := func(t *testing.T, what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: a ceremony was accepted from fuzzed input", what)
		}
		if _, ok := errcode.As(err); !ok {
			t.Fatalf("%s: %v is not an envelope error (would answer 500)", what, err)
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, credential []byte) {
		raw := json.RawMessage(credential)
		if kind%2 == 0 {
			b, err := svc.BeginRegistration(ctx, owner)
			if err != nil {
				t.Fatal(err)
			}
			_, err = svc.FinishRegistration(ctx, owner, passkey.RegisterInput{CeremonyID: b.CeremonyID, Name: "k", Credential: raw})
			envelope(t, "register/finish", err)
			return
		}
		b, err := svc.BeginPasswordless(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p, err := svc.Take(ctx, passkey.KindPasswordless, b.CeremonyID, raw)
		if err != nil {
			envelope(t, "passwordless/finish (take)", err)
			return
		}
		_, err = svc.Verify(ctx, p)
		envelope(t, "passwordless/finish (verify)", err)
	})
}

// options is the JSON of a begin answer's options, as a browser gets them.
func options(f *testing.F, b *passkey.Begin) json.RawMessage {
	f.Helper()
	raw, err := json.Marshal(b.Options)
	if err != nil {
		f.Fatal(err)
	}
	return raw
}
