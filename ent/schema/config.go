package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysConfig is a runtime setting of the config center (wire contract §4.5).
type SysConfig struct{ ent.Schema }

// Mixin of SysConfig.
func (SysConfig) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysConfig.
func (SysConfig) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_config"}}
}

// Fields of SysConfig.
func (SysConfig) Fields() []ent.Field {
	return []ent.Field{
		field.String("config_key").MaxRuneLen(128).NotEmpty().Immutable(),
		field.Text("config_value").Optional().Nillable(),
		field.String("name").MaxRuneLen(128),
		field.String("group_code").MaxRuneLen(64).Optional().Nillable(),
		field.Int("sort").Default(0),
		field.String("remark").MaxRuneLen(512).Optional().Nillable(),
	}
}

// Indexes of SysConfig.
func (SysConfig) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("config_key", "delete_key").Unique(),
		index.Fields("group_code"),
	}
}

// SysDictType is a dictionary (wire contract §4.6).
type SysDictType struct{ ent.Schema }

// Mixin of SysDictType.
func (SysDictType) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysDictType.
func (SysDictType) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_dict_type"}}
}

// Fields of SysDictType.
func (SysDictType) Fields() []ent.Field {
	return []ent.Field{
		field.String("code").MaxRuneLen(64).NotEmpty().Immutable(),
		field.String("name").MaxRuneLen(128),
		field.Int("sort").Default(0),
		field.Bool("enabled").Default(true),
		field.String("remark").MaxRuneLen(512).Optional().Nillable(),
	}
}

// Indexes of SysDictType.
func (SysDictType) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("code", "delete_key").Unique(),
	}
}

// SysDictItem is an entry of a dictionary (wire contract §4.6).
type SysDictItem struct{ ent.Schema }

// Mixin of SysDictItem.
func (SysDictItem) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysDictItem.
func (SysDictItem) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_dict_item"}}
}

// Fields of SysDictItem.
func (SysDictItem) Fields() []ent.Field {
	return []ent.Field{
		field.String("dict_type_code").MaxRuneLen(64).NotEmpty(),
		field.String("label").MaxRuneLen(128),
		field.String("value").MaxRuneLen(128),
		field.Int("sort").Default(0),
		field.Bool("enabled").Default(true),
	}
}

// Indexes of SysDictItem: a value is unique within its type.
func (SysDictItem) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("dict_type_code", "value", "delete_key").Unique(),
	}
}
