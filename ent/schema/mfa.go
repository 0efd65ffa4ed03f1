package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysMfaHighSensitivity is a permission code an administrator added to the
// high-sensitivity list: its route needs a recent re-authentication while
// TOTP is on, like the routes the contract marks +R (wire contract §4 "MFA
// administration"). Rows are removed for real (DELETE).
type SysMfaHighSensitivity struct{ ent.Schema }

// Mixin of SysMfaHighSensitivity.
func (SysMfaHighSensitivity) Mixin() []ent.Mixin { return linkMixins() }

// Annotations of SysMfaHighSensitivity.
func (SysMfaHighSensitivity) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_mfa_high_sensitivity"}}
}

// Fields of SysMfaHighSensitivity.
func (SysMfaHighSensitivity) Fields() []ent.Field {
	return []ent.Field{
		field.String("permission_code").MaxRuneLen(256).NotEmpty().Immutable(),
		field.String("remark").MaxRuneLen(512).Optional().Nillable(),
	}
}

// Indexes of SysMfaHighSensitivity.
func (SysMfaHighSensitivity) Indexes() []ent.Index {
	return []ent.Index{index.Fields("permission_code").Unique()}
}
