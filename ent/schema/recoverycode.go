package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysUserRecoveryCode is one TOTP recovery code of a user (host/mfa).
// Completing a TOTP binding replaces a user's codes with ten new ones;
// using one marks it spent (a compare-and-swap on used_at IS NULL) and
// unbinds TOTP. Only the SHA-256 of a code is stored (a code carries 80
// random bits).
type SysUserRecoveryCode struct{ ent.Schema }

// Mixin of SysUserRecoveryCode.
func (SysUserRecoveryCode) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}} }

// Annotations of SysUserRecoveryCode.
func (SysUserRecoveryCode) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_user_recovery_code"}}
}

// Fields of SysUserRecoveryCode.
func (SysUserRecoveryCode) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("user_id").Immutable().Comment("sys_user.id the code belongs to"),
		field.String("code_hash").MaxRuneLen(128).NotEmpty().Immutable().Sensitive().
			Comment("SHA-256 of the normalised code, lowercase hex"),
		field.Time("create_time").SchemaType(timeTypes).Immutable(),
		field.Time("used_at").SchemaType(timeTypes).Optional().Nillable().
			Comment("set when the code was spent"),
	}
}

// Indexes of SysUserRecoveryCode.
func (SysUserRecoveryCode) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("user_id", "code_hash").Unique(),
	}
}
