package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysRole is a role (wire contract §4.2).
type SysRole struct{ ent.Schema }

// Mixin of SysRole.
func (SysRole) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysRole.
func (SysRole) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_role"}}
}

// Fields of SysRole.
func (SysRole) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").MaxRuneLen(64),
		field.String("code").MaxRuneLen(64).NotEmpty(),
		field.Int("sort").Default(0),
		field.Bool("enabled").Default(true),
		field.String("remark").MaxRuneLen(512).Optional().Nillable(),
		field.Bool("is_delegatable").Default(false),
	}
}

// Indexes of SysRole.
func (SysRole) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("code", "delete_key").Unique(),
	}
}

// SysRoleMenu grants a menu node (and its permission codes) to a role.
type SysRoleMenu struct{ ent.Schema }

// Mixin of SysRoleMenu.
func (SysRoleMenu) Mixin() []ent.Mixin { return linkMixins() }

// Annotations of SysRoleMenu.
func (SysRoleMenu) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_role_menu"}}
}

// Fields of SysRoleMenu.
func (SysRoleMenu) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("role_id"),
		field.Int64("menu_id"),
	}
}

// Indexes of SysRoleMenu.
func (SysRoleMenu) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("role_id", "menu_id").Unique(),
		index.Fields("menu_id"),
	}
}

// SysRoleDataScope is the data scope of a role (wire contract §4.2).
type SysRoleDataScope struct{ ent.Schema }

// Mixin of SysRoleDataScope.
func (SysRoleDataScope) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysRoleDataScope.
func (SysRoleDataScope) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_role_data_scope"}}
}

// Fields of SysRoleDataScope.
func (SysRoleDataScope) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("role_id"),
		field.Int("scope_type").Range(1, 5).
			Comment("1 all, 2 own org, 3 own org and below, 4 self, 5 custom"),
		field.Text("custom_org_ids").Optional().Nillable().
			Comment("comma-separated org ids, e.g. \"2,6\" (scope_type 5)"),
	}
}

// Indexes of SysRoleDataScope: one live scope per role.
func (SysRoleDataScope) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("role_id", "delete_key").Unique(),
	}
}
