// Package passkey is the kernel's WebAuthn relying party (issue 19 item 4,
// a kernel extension): users register passkeys (discoverable credentials
// with user verification) on their personal page and use one as the
// second factor of a login instead of TOTP or, with
// sys.security.passkey.passwordless on, as the whole login. The relying
// party (id, display name, origins) comes from Service:Security:Passkey
// (config.PasskeyRP); the credentials live in sys_user_passkey; the
// ceremony state (the library's SessionData) is a one-time record of the
// cache's one-time store, taken exactly once, living CeremonyTTL.
//
// The login flows themselves (lockout, login log, tokens) are host/auth's:
// this package verifies and records.
package passkey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysuserpasskey"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
)

// KeyPasswordless is the runtime switch of the passwordless login.
//
//nolint:gosec // G101: a setting name that contains "password", not a credential
const KeyPasswordless = "sys.security.passkey.passwordless"

// MethodPasskey is the login-log and session method of a login finished
// with a passkey.
const MethodPasskey = "passkey"

// CeremonyTTL is the life of a ceremony (begin to finish).
const CeremonyTTL = 5 * time.Minute

// Limits of the inputs.
const (
	// MaxNameLen is the longest passkey label (runes).
	MaxNameLen = 64
	// DefaultName labels a passkey registered without a name.
	DefaultName = "Passkey"
	// MaxPerUser bounds the passkeys of one user.
	MaxPerUser = 20
	// maxCredentialJSON bounds the credential object of a finish body.
	maxCredentialJSON = 64 << 10
	ceremonyBytes     = 32
)

// Ceremony kinds: each has its own key prefix, so a ceremony begun for one
// flow cannot be finished by another.
const (
	KindRegister     = "reg"
	KindSecondFactor = "mfa"
	KindPasswordless = "pwl"
	keyPrefix        = "passkey:cer:"
)

// Service is the relying party and the credential store.
type Service struct {
	client *ent.Client
	store  cache.Store
	wa     *webauthn.WebAuthn // nil: passkeys are off
	now    func() time.Time
}

// New builds the service from the effective relying party of cfg
// (config.PasskeyRP; Validate has checked it). Without one (no RpId
// outside Development) the service is off: every operation answers 40031.
func New(client *ent.Client, store cache.Store, cfg *config.Config) (*Service, error) {
	s := &Service{client: client, store: store, now: time.Now}
	rpID, display, origins, on := cfg.PasskeyRP()
	if !on {
		return s, nil
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:                  rpID,
		RPDisplayName:         display,
		RPOrigins:             origins,
		AttestationPreference: protocol.PreferNoAttestation,
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: CeremonyTTL, TimeoutUVD: CeremonyTTL},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: CeremonyTTL, TimeoutUVD: CeremonyTTL},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("Service:Security:Passkey: %w", err)
	}
	s.wa = wa
	return s, nil
}

// SetClock replaces the clock of ceremony expiry (tests).
func (s *Service) SetClock(now func() time.Time) { s.now = now }

// Enabled reports whether a relying party is configured.
func (s *Service) Enabled() bool { return s != nil && s.wa != nil }

// RPID is the relying party id ("" when off).
func (s *Service) RPID() string {
	if !s.Enabled() {
		return ""
	}
	return s.wa.Config.RPID
}

func (s *Service) on() error {
	if !s.Enabled() {
		return errcode.New(errcode.PasskeyDisabled).With("reason", "notConfigured")
	}
	return nil
}

// Begin is the answer of every begin endpoint: the ceremony id to send
// back with the finish call, and the options for navigator.credentials
// (publicKey: PublicKeyCredentialCreationOptions or ...RequestOptions in
// their JSON form).
type Begin struct {
	CeremonyID string `json:"ceremonyId"`
	Options    any    `json:"options"`
}

// Item is one passkey of the personal list.
type Item struct {
	ID         int64      `json:"id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty"`
	BackedUp   bool       `json:"backedUp"`
}

// ceremony is the one-time record of a begun ceremony.
type ceremony struct {
	UserID int64 `json:"u,omitempty"`
	// Method is the first factor of a second-factor ceremony, Challenge
	// the 40018 login challenge it completes.
	Method    string               `json:"m,omitempty"`
	Challenge string               `json:"c,omitempty"`
	Session   webauthn.SessionData `json:"s"`
	ExpiresAt time.Time            `json:"e"`
}

// Result is a verified assertion.
type Result struct {
	UserID    int64
	PasskeyID int64
	// Method and Challenge are those of a second-factor ceremony.
	Method    string
	Challenge string
}

// UserHandle is the WebAuthn user handle of a user: the id, 8 bytes big
// endian (no personal data; stable, so every passkey of a user carries it).
func UserHandle(userID int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(userID)) //nolint:gosec // ids are positive
}

func userOfHandle(h []byte) (int64, bool) {
	if len(h) != 8 {
		return 0, false
	}
	id := int64(binary.BigEndian.Uint64(h)) //nolint:gosec // a foreign handle maps to no user
	return id, id > 0
}

// credentialHash is the lookup key of a credential id.
func credentialHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// waUser is a user as the library sees it.
type waUser struct {
	id      int64
	account string
	name    string
	creds   []webauthn.Credential
}

func (u *waUser) WebAuthnID() []byte                         { return UserHandle(u.id) }
func (u *waUser) WebAuthnName() string                       { return u.account }
func (u *waUser) WebAuthnDisplayName() string                { return u.name }
func (u *waUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

func credentialOf(r *ent.SysUserPasskey) (webauthn.Credential, error) {
	raw, err := base64.RawURLEncoding.DecodeString(r.CredentialID)
	if err != nil {
		return webauthn.Credential{}, fmt.Errorf("sys_user_passkey %d: credential id: %w", r.ID, err)
	}
	flags := protocol.FlagUserPresent | protocol.FlagUserVerified
	if r.BackupEligible {
		flags |= protocol.FlagBackupEligible
	}
	if r.BackedUp {
		flags |= protocol.FlagBackupState
	}
	var aaguid []byte
	if r.Aaguid != "" {
		if u, err := uuid.Parse(r.Aaguid); err == nil {
			aaguid = u[:]
		}
	}
	var transports []protocol.AuthenticatorTransport
	for t := range strings.SplitSeq(r.Transports, ",") {
		if t != "" {
			transports = append(transports, protocol.AuthenticatorTransport(t))
		}
	}
	return webauthn.Credential{
		ID:            raw,
		PublicKey:     r.PublicKey,
		Transport:     transports,
		Flags:         webauthn.NewCredentialFlags(flags),
		Authenticator: webauthn.Authenticator{AAGUID: aaguid, SignCount: uint32(max(r.SignCount, 0))}, //nolint:gosec // stored from a uint32
	}, nil
}

func (s *Service) userCredentials(ctx context.Context, userID int64) ([]*ent.SysUserPasskey, []webauthn.Credential, error) {
	rows, err := s.client.SysUserPasskey.Query().Where(sysuserpasskey.UserID(userID)).
		Order(ent.Asc(sysuserpasskey.FieldID)).All(ctx)
	if err != nil {
		return nil, nil, err
	}
	creds := make([]webauthn.Credential, 0, len(rows))
	for _, r := range rows {
		c, err := credentialOf(r)
		if err != nil {
			return nil, nil, err
		}
		creds = append(creds, c)
	}
	return rows, creds, nil
}

// Has reports whether a user has a passkey (false when passkeys are off).
func (s *Service) Has(ctx context.Context, userID int64) (bool, error) {
	if !s.Enabled() {
		return false, nil
	}
	return s.client.SysUserPasskey.Query().Where(sysuserpasskey.UserID(userID)).Exist(ctx)
}

// List returns the passkeys of a user, oldest first.
func (s *Service) List(ctx context.Context, userID int64) ([]Item, error) {
	rows, err := s.client.SysUserPasskey.Query().Where(sysuserpasskey.UserID(userID)).
		Order(ent.Asc(sysuserpasskey.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Item, len(rows))
	for i, r := range rows {
		out[i] = Item{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt, BackedUp: r.BackedUp}
	}
	return out, nil
}

// Delete removes a passkey of the user: 40033 when the id is not one of
// the user's passkeys (another user's answers the same as an unknown id).
func (s *Service) Delete(ctx context.Context, userID, id int64) error {
	if id <= 0 {
		return errcode.New(errcode.PasskeyNotFound)
	}
	n, err := s.client.SysUserPasskey.Delete().
		Where(sysuserpasskey.ID(id), sysuserpasskey.UserID(userID)).Exec(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errcode.New(errcode.PasskeyNotFound)
	}
	return nil
}

// ClearUser removes every passkey of a user inside tx (an administrator's
// MFA clear).
func ClearUser(ctx context.Context, tx *ent.Tx, userID int64) error {
	_, err := tx.SysUserPasskey.Delete().Where(sysuserpasskey.UserID(userID)).Exec(ctx)
	return err
}

func newCeremonyID() (string, error) {
	b := make([]byte, ceremonyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ValidCeremonyID: 43 base64url characters.
func ValidCeremonyID(id string) bool {
	if len(id) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}

func (s *Service) put(ctx context.Context, kind string, rec ceremony) (string, error) {
	id, err := newCeremonyID()
	if err != nil {
		return "", err
	}
	rec.ExpiresAt = s.now().Add(CeremonyTTL)
	raw, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	if err := s.store.PutOnce(ctx, keyPrefix+kind+":"+id, raw, CeremonyTTL); err != nil {
		return "", fmt.Errorf("storing a passkey ceremony: %w", err)
	}
	return id, nil
}

// take removes and returns a ceremony of kind: 40032 when the id is
// malformed, unknown, expired or already taken (one of parallel finishes
// gets it).
func (s *Service) take(ctx context.Context, kind, id string) (ceremony, error) {
	var rec ceremony
	id = strings.TrimSpace(id)
	if !ValidCeremonyID(id) {
		return rec, errcode.New(errcode.PasskeyCeremonyInvalid)
	}
	raw, ok, err := s.store.Take(ctx, keyPrefix+kind+":"+id)
	if err != nil {
		return rec, fmt.Errorf("reading a passkey ceremony: %w", err)
	}
	if !ok || json.Unmarshal(raw, &rec) != nil || !s.now().Before(rec.ExpiresAt) {
		return rec, errcode.New(errcode.PasskeyCeremonyInvalid)
	}
	return rec, nil
}

// invalid is 40030 for a verification failure; the library's reason is
// logged by the caller, never answered.
func invalid(reason string) error {
	return errcode.New(errcode.PasskeyInvalid).With("reason", reason)
}

// Owner is the user a registration is for.
type Owner struct {
	ID      int64
	Account string
	Name    string
}

// BeginRegistration starts registering a passkey for the user: a
// discoverable credential (residentKey required) with user verification
// required; the user's passkeys are excluded (an authenticator holding one
// refuses to make a second).
func (s *Service) BeginRegistration(ctx context.Context, u Owner) (*Begin, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	rows, creds, err := s.userCredentials(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	if len(rows) >= MaxPerUser {
		return nil, errcode.New(errcode.RequestInvalid).With("reason", "tooManyPasskeys").With("max", MaxPerUser)
	}
	user := &waUser{id: u.ID, account: u.Account, name: u.Name, creds: creds}
	rk := true
	creation, sess, err := s.wa.BeginRegistration(user,
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey:        protocol.ResidentKeyRequirementRequired,
			RequireResidentKey: &rk,
			UserVerification:   protocol.VerificationRequired,
		}),
		webauthn.WithExclusions(webauthn.Credentials(creds).CredentialDescriptors()),
		webauthn.WithConveyancePreference(protocol.PreferNoAttestation),
	)
	if err != nil {
		return nil, fmt.Errorf("beginning a passkey registration: %w", err)
	}
	id, err := s.put(ctx, KindRegister, ceremony{UserID: u.ID, Session: *sess})
	if err != nil {
		return nil, err
	}
	return &Begin{CeremonyID: id, Options: creation.Response}, nil
}

// RegisterInput is the body of register/finish.
type RegisterInput struct {
	CeremonyID string          `json:"ceremonyId"`
	Name       string          `json:"name"`
	Credential json.RawMessage `json:"credential"`
}

// FinishRegistration verifies the attestation of a registration ceremony
// of the user (a ceremony of another user is 40032) and stores the
// passkey. 40030 when the response does not verify (origin, RP id,
// challenge, user verification), 40034 when the credential is already
// registered (to anyone).
func (s *Service) FinishRegistration(ctx context.Context, u Owner, in RegisterInput) (*Item, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	name := strings.TrimSpace(in.Name)
	if utf8.RuneCountInString(name) > MaxNameLen || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return nil, request.Invalid("name")
	}
	if name == "" {
		name = DefaultName
	}
	if len(in.Credential) == 0 || len(in.Credential) > maxCredentialJSON {
		return nil, request.Invalid("credential")
	}
	rec, err := s.take(ctx, KindRegister, in.CeremonyID)
	if err != nil {
		return nil, err
	}
	if rec.UserID != u.ID {
		return nil, errcode.New(errcode.PasskeyCeremonyInvalid)
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(in.Credential)
	if err != nil {
		return nil, invalid("malformed")
	}
	_, creds, err := s.userCredentials(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	cred, err := s.wa.CreateCredential(&waUser{id: u.ID, account: u.Account, name: u.Name, creds: creds}, rec.Session, parsed)
	if err != nil {
		return nil, &VerifyError{Err: err, Code: errcode.New(errcode.PasskeyInvalid).With("reason", "verification")}
	}
	if len(cred.ID) == 0 || len(cred.ID) > 1023 {
		return nil, invalid("credentialId")
	}
	transports := make([]string, 0, len(cred.Transport))
	for _, t := range cred.Transport {
		if ts := string(t); ts != "" && !strings.Contains(ts, ",") {
			transports = append(transports, ts)
		}
	}
	tr := strings.Join(transports, ",")
	if utf8.RuneCountInString(tr) > 128 {
		tr = ""
	}
	aaguid := ""
	if a, err := uuid.FromBytes(cred.Authenticator.AAGUID); err == nil && a != uuid.Nil {
		aaguid = a.String()
	}
	now := s.now()
	row, err := s.client.SysUserPasskey.Create().
		SetUserID(u.ID).
		SetCredentialID(base64.RawURLEncoding.EncodeToString(cred.ID)).
		SetCredentialHash(credentialHash(cred.ID)).
		SetPublicKey(cred.PublicKey).
		SetSignCount(int64(cred.Authenticator.SignCount)).
		SetAaguid(aaguid).
		SetTransports(tr).
		SetBackupEligible(cred.Flags.BackupEligible).
		SetBackedUp(cred.Flags.BackupState).
		SetName(name).
		SetCreatedAt(now).
		Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, errcode.New(errcode.PasskeyExists)
	}
	if err != nil {
		return nil, err
	}
	return &Item{ID: row.ID, Name: row.Name, CreatedAt: row.CreatedAt, BackedUp: row.BackedUp}, nil
}

// VerifyError is a verification failure: Code is answered, Err (the
// library's reason) is for the log.
type VerifyError struct {
	Err  error
	Code *errcode.Error
}

func (e *VerifyError) Error() string { return e.Code.Error() + ": " + e.Err.Error() }

// Unwrap gives the answered code to errcode.As.
func (e *VerifyError) Unwrap() error { return e.Code }

// BeginSecondFactor starts a second-factor assertion for a user who
// passed the first factor (method) and got the login challenge challenge
// (signal 40018): allowCredentials are the user's passkeys, user
// verification required. 40030 when the user has none.
func (s *Service) BeginSecondFactor(ctx context.Context, userID int64, method, challenge string) (*Begin, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	_, creds, err := s.userCredentials(ctx, userID)
	if err != nil {
		return nil, err
	}
	if len(creds) == 0 {
		return nil, invalid("noPasskey")
	}
	assertion, sess, err := s.wa.BeginLogin(&waUser{id: userID, creds: creds},
		webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, fmt.Errorf("beginning a passkey login: %w", err)
	}
	id, err := s.put(ctx, KindSecondFactor, ceremony{UserID: userID, Method: method, Challenge: challenge, Session: *sess})
	if err != nil {
		return nil, err
	}
	return &Begin{CeremonyID: id, Options: assertion.Response}, nil
}

// BeginPasswordless starts a discoverable assertion (no account typed:
// empty allowCredentials, user verification required). The caller checks
// the passwordless switch.
func (s *Service) BeginPasswordless(ctx context.Context) (*Begin, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	assertion, sess, err := s.wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, fmt.Errorf("beginning a passkey login: %w", err)
	}
	id, err := s.put(ctx, KindPasswordless, ceremony{Session: *sess})
	if err != nil {
		return nil, err
	}
	return &Begin{CeremonyID: id, Options: assertion.Response}, nil
}

// Peek is the user of a ceremony's credential before it is verified: the
// ceremony's user for a second factor, the owner of the credential for a
// passwordless login (0 when the credential is unknown or malformed). The
// login uses it to check the lockout and the account before verifying.
type Peek struct {
	UserID int64
	rec    ceremony
	parsed *protocol.ParsedCredentialAssertionData
	kind   string
}

// Take takes the ceremony of kind (40032) and parses the assertion (40030
// when malformed). Verify completes it.
func (s *Service) Take(ctx context.Context, kind, ceremonyID string, credential json.RawMessage) (*Peek, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	if len(credential) == 0 || len(credential) > maxCredentialJSON {
		return nil, request.Invalid("credential")
	}
	rec, err := s.take(ctx, kind, ceremonyID)
	if err != nil {
		return nil, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(credential)
	if err != nil {
		return &Peek{rec: rec, kind: kind, UserID: rec.UserID}, invalid("malformed")
	}
	p := &Peek{rec: rec, parsed: parsed, kind: kind, UserID: rec.UserID}
	if kind == KindPasswordless {
		p.UserID = 0
		if uid, ok := userOfHandle(parsed.Response.UserHandle); ok {
			row, err := s.client.SysUserPasskey.Query().
				Where(sysuserpasskey.CredentialHash(credentialHash(parsed.RawID))).Only(ctx)
			switch {
			case ent.IsNotFound(err):
			case err != nil:
				return nil, err
			case row.UserID == uid:
				p.UserID = uid
			}
		}
	}
	return p, nil
}

// Method and Challenge are those of a second-factor ceremony.
func (p *Peek) Method() string    { return p.rec.Method }
func (p *Peek) Challenge() string { return p.rec.Challenge }

// ErrCloned marks a counter regression.
var ErrCloned = errors.New("passkey: the signature counter went back (a cloned authenticator)")

// Verify checks the assertion of a taken ceremony against the user's
// passkeys (origin, RP id, challenge, signature, user verification) and
// moves the passkey's sign counter forward with a compare-and-swap: a
// counter that does not grow (while either value is non-zero) is a
// cloned authenticator, and of two parallel logins with one counter value
// one succeeds. Every failure is 40030 (a VerifyError carries the reason).
func (s *Service) Verify(ctx context.Context, p *Peek) (*Result, error) {
	if p.parsed == nil || p.UserID <= 0 {
		return nil, invalid("unknownCredential")
	}
	rows, creds, err := s.userCredentials(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	user := &waUser{id: p.UserID, creds: creds}
	var cred *webauthn.Credential
	if p.kind == KindPasswordless {
		_, cred, err = s.wa.ValidatePasskeyLogin(func(_, _ []byte) (webauthn.User, error) { return user, nil }, p.rec.Session, p.parsed)
	} else {
		cred, err = s.wa.ValidateLogin(user, p.rec.Session, p.parsed)
	}
	if err != nil {
		return nil, &VerifyError{Err: err, Code: errcode.New(errcode.PasskeyInvalid).With("reason", "verification")}
	}
	var row *ent.SysUserPasskey
	for i := range creds {
		if string(creds[i].ID) == string(cred.ID) {
			row = rows[i]
			break
		}
	}
	if row == nil {
		return nil, invalid("unknownCredential")
	}
	if cred.Authenticator.CloneWarning {
		return nil, &VerifyError{Err: ErrCloned, Code: errcode.New(errcode.PasskeyInvalid).With("reason", "counter")}
	}
	next := int64(cred.Authenticator.SignCount)
	upd := s.client.SysUserPasskey.Update().Where(sysuserpasskey.ID(row.ID))
	if next > 0 {
		upd = upd.Where(sysuserpasskey.SignCountLT(next))
	} else {
		upd = upd.Where(sysuserpasskey.SignCount(0))
	}
	n, err := upd.SetSignCount(next).SetBackedUp(cred.Flags.BackupState).SetLastUsedAt(s.now()).Save(ctx)
	if err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, &VerifyError{Err: ErrCloned, Code: errcode.New(errcode.PasskeyInvalid).With("reason", "counter")}
	}
	return &Result{UserID: p.UserID, PasskeyID: row.ID, Method: p.rec.Method, Challenge: p.rec.Challenge}, nil
}
