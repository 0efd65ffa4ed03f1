package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysSessionToken is one refresh token of a session: the lineage that
// rotation with reuse detection needs (RFC 9700 §4.14.2). Login inserts the
// first row; every refresh marks the presented row rotated (a compare-and-
// swap on rotated_at IS NULL) and inserts its successor. A rotated row that
// is presented again is reuse and revokes the whole session, except once
// inside the grace window (Service:Security:Session:RefreshGraceSeconds),
// where the immediately previous token gets one more successor so that two
// tabs refreshing together both keep a working pair.
//
// Only the SHA-256 of a token is stored. Rows live as long as their session:
// they are what recognises a replayed token, so they are purged only once the
// session has ended (host/session Purge).
type SysSessionToken struct{ ent.Schema }

// Mixin of SysSessionToken.
func (SysSessionToken) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}} }

// Annotations of SysSessionToken.
func (SysSessionToken) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_session_token"}}
}

// Fields of SysSessionToken.
func (SysSessionToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("session_id").MaxRuneLen(64).NotEmpty().Immutable().
			Comment("sys_session.session_id the token belongs to"),
		field.String("token_hash").MaxRuneLen(128).NotEmpty().Immutable().Sensitive().
			Comment("SHA-256 of the refresh token, lowercase hex"),
		field.Int64("parent_id").Optional().Nillable().Immutable().
			Comment("the token whose rotation issued this one (none for the login token)"),
		field.Time("create_time").SchemaType(timeTypes).Immutable(),
		field.Time("expires_at").SchemaType(timeTypes).Immutable(),
		field.Time("rotated_at").SchemaType(timeTypes).Optional().Nillable().
			Comment("set when the token was exchanged; presenting it again is reuse"),
		field.Int64("replaced_by").Optional().Nillable().
			Comment("the token issued by the rotation"),
		field.Time("grace_used_at").SchemaType(timeTypes).Optional().Nillable().
			Comment("set when the grace window honoured the token once more"),
	}
}

// Indexes of SysSessionToken.
func (SysSessionToken) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("token_hash").Unique(),
		index.Fields("session_id"),
	}
}
