package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysUserPasskey is one WebAuthn credential (a passkey) of a user
// (host/mfa/passkey). Registration inserts it, the owner removes it (a hard
// delete, written to the operation log), an administrator's MFA clear
// removes all of a user's. Every login with it moves sign_count forward
// with a compare-and-swap: a counter that goes back is a cloned
// authenticator and is refused.
type SysUserPasskey struct{ ent.Schema }

// Mixin of SysUserPasskey.
func (SysUserPasskey) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}} }

// Annotations of SysUserPasskey.
func (SysUserPasskey) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_user_passkey"}}
}

// Fields of SysUserPasskey.
func (SysUserPasskey) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("user_id").Immutable().Comment("sys_user.id the passkey belongs to"),
		field.String("credential_id").MaxRuneLen(1400).NotEmpty().Immutable().
			Comment("the credential id, base64url without padding (up to 1023 bytes)"),
		field.String("credential_hash").MaxRuneLen(64).NotEmpty().Immutable().
			Comment("SHA-256 of the raw credential id, lowercase hex (the unique lookup key)"),
		field.Bytes("public_key").NotEmpty().Immutable().
			Comment("the COSE public key of the credential"),
		field.Int64("sign_count").Default(0).Comment("the last signature counter seen"),
		field.String("aaguid").MaxRuneLen(36).Default("").Immutable().
			Comment("the authenticator model (AAGUID), empty when none was given"),
		field.String("transports").MaxRuneLen(128).Default("").
			Comment("transports the authenticator reported, comma-separated"),
		field.Bool("backup_eligible").Default(false).Immutable(),
		field.Bool("backed_up").Default(false),
		field.String("name").MaxRuneLen(64).NotEmpty().Comment("the user's label"),
		field.Time("created_at").SchemaType(timeTypes).Immutable(),
		field.Time("last_used_at").SchemaType(timeTypes).Optional().Nillable(),
	}
}

// Indexes of SysUserPasskey.
func (SysUserPasskey) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("credential_hash").Unique(),
		index.Fields("user_id"),
	}
}
