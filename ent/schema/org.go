package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysOrg is an organisation node (wire contract §4.4).
type SysOrg struct{ ent.Schema }

// Mixin of SysOrg.
func (SysOrg) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysOrg.
func (SysOrg) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_org"}}
}

// Fields of SysOrg.
func (SysOrg) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("parent_id").Default(0).Comment("0 = top level"),
		field.String("name").MaxRuneLen(128),
		field.String("code").MaxRuneLen(64).NotEmpty(),
		field.String("category").MaxRuneLen(32).Optional().Nillable().
			Comment("dict org_category value"),
		field.Int("sort").Default(0),
		field.Bool("enabled").Default(true),
	}
}

// Indexes of SysOrg.
func (SysOrg) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("code", "delete_key").Unique(),
		index.Fields("parent_id"),
	}
}

// SysPosition is a job position (wire contract §4.4).
type SysPosition struct{ ent.Schema }

// Mixin of SysPosition.
func (SysPosition) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysPosition.
func (SysPosition) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_position"}}
}

// Fields of SysPosition.
func (SysPosition) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").MaxRuneLen(64),
		field.String("code").MaxRuneLen(64),
		field.Int("sort").Default(0),
		field.Bool("enabled").Default(true),
	}
}
