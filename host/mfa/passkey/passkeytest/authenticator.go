// Package passkeytest is a software WebAuthn authenticator for tests: it
// answers the creation and request options the kernel hands out with the
// credential JSON a browser would post (ES256 keys, "none" attestation),
// and lets a test tamper with what a real authenticator never would
// (origin, RP id, user verification, the sign counter). The browser suite
// (e2e/browser) uses Chromium's virtual authenticator instead.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// Authenticator holds credentials of one software authenticator.
type Authenticator struct {
	// Origin is the origin the "browser" reports (clientDataJSON.origin).
	Origin string
	// RPID overrides the relying party id hashed into authenticator data
	// ("" = the id of the options).
	RPID string
	// NoUV clears the user-verified flag.
	NoUV  bool
	creds map[string]*Credential
	last  *Credential
}

// Credential is one key pair of the authenticator.
type Credential struct {
	ID         []byte
	UserHandle []byte
	RPID       string
	Key        *ecdsa.PrivateKey
	SignCount  uint32
}

// New returns an authenticator whose "browser" reports origin.
func New(origin string) *Authenticator {
	return &Authenticator{Origin: origin, creds: map[string]*Credential{}}
}

// Last is the credential created last.
func (a *Authenticator) Last() *Credential { return a.last }

// Add installs a copy of a credential (a cloned authenticator).
func (a *Authenticator) Add(c Credential) {
	cp := c
	a.creds[string(c.ID)] = &cp
	a.last = &cp
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func unb64(s string) ([]byte, error) {
	if b, err := base64.RawURLEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.URLEncoding.DecodeString(s)
}

// creationOptions is the part of PublicKeyCredentialCreationOptions read.
type creationOptions struct {
	Challenge string `json:"challenge"`
	RP        struct {
		ID string `json:"id"`
	} `json:"rp"`
	User struct {
		ID string `json:"id"`
	} `json:"user"`
}

type requestOptions struct {
	Challenge string `json:"challenge"`
	RPID      string `json:"rpId"`
	Allow     []struct {
		ID string `json:"id"`
	} `json:"allowCredentials"`
}

func (a *Authenticator) clientData(typ, challenge string) []byte {
	raw, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": a.Origin, "crossOrigin": false})
	return raw
}

func (a *Authenticator) authData(rpID string, count uint32, attested []byte) []byte {
	if a.RPID != "" {
		rpID = a.RPID
	}
	h := sha256.Sum256([]byte(rpID))
	flags := byte(flagUP)
	if !a.NoUV {
		flags |= flagUV
	}
	if attested != nil {
		flags |= flagAT
	}
	out := append([]byte{}, h[:]...)
	out = append(out, flags)
	out = binary.BigEndian.AppendUint32(out, count)
	return append(out, attested...)
}

// Authenticator data flag bits.
const (
	flagUP = 0x01
	flagUV = 0x04
	flagAT = 0x40
)

// Create answers creation options (the JSON of options.publicKey) with a
// registration credential JSON.
func (a *Authenticator) Create(options json.RawMessage) (json.RawMessage, error) {
	var o creationOptions
	if err := json.Unmarshal(options, &o); err != nil {
		return nil, err
	}
	uh, err := unb64(o.User.ID)
	if err != nil {
		return nil, fmt.Errorf("user id: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 32)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	c := &Credential{ID: id, UserHandle: uh, RPID: o.RP.ID, Key: key}
	a.creds[string(id)] = c
	a.last = c
	ecdh, err := key.PublicKey.ECDH()
	if err != nil {
		return nil, err
	}
	pt := ecdh.Bytes() // 0x04 || X || Y
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         1,
		XCoord:        pt[1:33],
		YCoord:        pt[33:],
	})
	if err != nil {
		return nil, err
	}
	attested := make([]byte, 16)                                        // AAGUID: none
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(id))) //nolint:gosec // 32 bytes
	attested = append(attested, id...)
	attested = append(attested, cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": a.authData(o.RP.ID, 0, attested)})
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"id": b64(id), "rawId": b64(id), "type": "public-key",
		"response": map[string]any{
			"clientDataJSON":    b64(a.clientData("webauthn.create", o.Challenge)),
			"attestationObject": b64(att),
			"transports":        []string{"internal"},
		},
		"clientExtensionResults": map[string]any{},
	})
}

// Get answers request options with an assertion of a credential the
// options allow (or, for discoverable options, the one created last),
// moving its counter forward by one.
func (a *Authenticator) Get(options json.RawMessage) (json.RawMessage, error) {
	var o requestOptions
	if err := json.Unmarshal(options, &o); err != nil {
		return nil, err
	}
	c := a.last
	if len(o.Allow) > 0 {
		c = nil
		for _, al := range o.Allow {
			id, err := unb64(al.ID)
			if err != nil {
				return nil, err
			}
			if cc, ok := a.creds[string(id)]; ok {
				c = cc
				break
			}
		}
	}
	if c == nil {
		return nil, fmt.Errorf("no credential for these options")
	}
	c.SignCount++
	return a.Assert(c, o.Challenge, o.RPID)
}

// Assert signs an assertion of c with its current counter.
func (a *Authenticator) Assert(c *Credential, challenge, rpID string) (json.RawMessage, error) {
	if rpID == "" {
		rpID = c.RPID
	}
	ad := a.authData(rpID, c.SignCount, nil)
	cd := a.clientData("webauthn.get", challenge)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, c.Key, digest[:])
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"id": b64(c.ID), "rawId": b64(c.ID), "type": "public-key",
		"response": map[string]any{
			"clientDataJSON":    b64(cd),
			"authenticatorData": b64(ad),
			"signature":         b64(sig),
			"userHandle":        b64(c.UserHandle),
		},
		"clientExtensionResults": map[string]any{},
	})
}
