package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysMenu is a menu node: catalog, page or button (wire contract §4.3).
type SysMenu struct{ ent.Schema }

// Mixin of SysMenu.
func (SysMenu) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysMenu.
func (SysMenu) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_menu"}}
}

// Fields of SysMenu.
func (SysMenu) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("parent_id").Default(0).Comment("0 = root"),
		field.Int("type").Range(1, 3).Comment("1 catalog, 2 menu (page), 3 button"),
		field.String("title").MaxRuneLen(128),
		field.String("permission").MaxRuneLen(1024).Default("").
			Comment("permission codes joined with ';'"),
		field.Int("sort").Default(0),
		field.Bool("enabled").Default(true),
		field.Int64("module_id").Optional().Nillable().Comment("top-level nodes only"),
		field.String("path").MaxRuneLen(512).Optional().Nillable(),
		field.String("component").MaxRuneLen(512).Optional().Nillable(),
		field.String("icon").MaxRuneLen(128).Optional().Nillable(),
		field.Bool("visible").Default(true),
	}
}

// Indexes of SysMenu.
func (SysMenu) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("parent_id"),
		index.Fields("module_id"),
	}
}

// SysModule is a portal module (wire contract §4.3, modules).
type SysModule struct{ ent.Schema }

// Mixin of SysModule.
func (SysModule) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysModule.
func (SysModule) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_module"}}
}

// Fields of SysModule.
func (SysModule) Fields() []ent.Field {
	return []ent.Field{
		field.String("code").MaxRuneLen(64).NotEmpty(),
		field.String("title").MaxRuneLen(128),
		field.String("icon").MaxRuneLen(128).Optional().Nillable(),
		field.String("default_route").MaxRuneLen(256).Optional().Nillable(),
		field.String("api_prefix").MaxRuneLen(64).Optional().Nillable(),
		field.Int("sort").Default(0),
		field.Bool("enabled").Default(true),
		field.String("remark").MaxRuneLen(512).Optional().Nillable(),
	}
}

// Indexes of SysModule.
func (SysModule) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("code", "delete_key").Unique(),
	}
}
