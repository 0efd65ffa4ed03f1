package schema

import (
	"crypto/rand"
	"encoding/base64"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysSession is one login: every login method (password, SMS, external
// provider) creates one row; logout and force-logout set revoked_at (wire
// contract §2.1, §4.7).
//
// Refresh tokens: the lineage of a session's refresh tokens, which reuse
// detection and the grace window work on, is sys_session_token
// (SysSessionToken). The refresh_* columns here mirror the newest token
// issued (its hash and expiry, the hash it replaced and when) for
// diagnostics; host/session keeps them up to date in the transaction of
// every rotation.
//
// Identity: `id` is the usual int64 snowflake (internal, never on the wire);
// `session_id` is a separate random, unguessable string (32 random bytes,
// base64url, 43 characters), unique. session_id is what the access token's
// `sid` claim and the API's `sessionId` carry, so session ids cannot be
// enumerated through DELETE /sys/session/{sessionId}.
type SysSession struct{ ent.Schema }

// Mixin of SysSession.
func (SysSession) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}} }

// Annotations of SysSession.
func (SysSession) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_session"}}
}

// Fields of SysSession.
func (SysSession) Fields() []ent.Field {
	return []ent.Field{
		field.String("session_id").MaxRuneLen(64).NotEmpty().Immutable().DefaultFunc(NewSessionID).
			Comment("random public session id (JWT sid)"),
		field.Int64("user_id").Immutable(),
		field.String("login_method").MaxRuneLen(32).Immutable().
			Comment("password | sms | the external provider code"),
		field.Bool("mfa").Default(false).Comment("a second factor was verified at login"),
		field.Bool("must_change_password").Default(false).
			Comment("the user had to change the password at login: the session may only change it, " +
				"read the profile and log out until it is changed"),
		field.String("ip").MaxRuneLen(64).Optional().Nillable(),
		field.String("user_agent").MaxRuneLen(512).Optional().Nillable(),
		field.Time("create_time").SchemaType(timeTypes).Default(time.Now).Immutable().
			Comment("login time"),
		field.Time("last_seen_time").SchemaType(timeTypes).Default(time.Now),
		field.Time("expires_at").SchemaType(timeTypes).
			Comment("absolute end of the session: no refresh extends it past this"),
		field.String("refresh_token_hash").MaxRuneLen(128).Sensitive().
			Comment("hash of the current refresh token"),
		field.Time("refresh_expires_at").SchemaType(timeTypes).
			Comment("expiry of the current refresh token"),
		field.String("prev_refresh_token_hash").MaxRuneLen(128).Optional().Nillable().Sensitive().
			Comment("hash of the token replaced by the last rotation (grace window / reuse detection)"),
		field.Time("refresh_rotated_at").SchemaType(timeTypes).Optional().Nillable().
			Comment("time of the last rotation; start of the grace window"),
		field.Time("revoked_at").SchemaType(timeTypes).Optional().Nillable(),
		field.String("revoke_reason").MaxRuneLen(64).Optional().Nillable().
			Comment("logout | forced | reuse | concurrency | password | disabled ..."),
	}
}

// Indexes of SysSession.
func (SysSession) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("session_id").Unique(),
		index.Fields("user_id"),
		index.Fields("refresh_token_hash").Unique(),
		index.Fields("prev_refresh_token_hash"),
		index.Fields("expires_at"),
		// Online sessions at a million rows: newest login first, and the
		// live total (revoked_at IS NULL AND expires_at > now) as an
		// index-only range scan.
		index.Fields("create_time", "id"),
		index.Fields("revoked_at", "expires_at", "id"),
	}
}

// NewSessionID returns a fresh random session id: 32 bytes from crypto/rand,
// base64url without padding (43 characters).
func NewSessionID() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go ≥ 1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
