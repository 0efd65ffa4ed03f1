package schema

import (
	"strings"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysUser is an account (wire contract §4.1, UserItem and AddUserInput).
type SysUser struct{ ent.Schema }

// Mixin of SysUser.
func (SysUser) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysUser.
func (SysUser) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_user"}}
}

// Fields of SysUser.
func (SysUser) Fields() []ent.Field {
	return []ent.Field{
		field.String("account").MaxRuneLen(64).NotEmpty().Immutable().
			Comment("login name; unique among live users (UNIQUE(account, delete_key))"),
		field.String("account_norm").MaxRuneLen(64).Optional().Immutable().
			Comment("lower-cased account (NormalizeAccount), filled on create by the client hook host/database installs; " +
				"UNIQUE(account_norm, delete_key) makes accounts unique case-insensitively on every dialect"),
		field.String("name").MaxRuneLen(64),
		field.String("nickname").MaxRuneLen(64).Optional().Nillable(),
		field.String("password_hash").MaxRuneLen(256).Default("").Sensitive().
			Comment("encoded password hash; empty = no password login"),
		field.Bool("must_change_password").Default(false),
		field.Time("password_changed_at").SchemaType(timeTypes).Optional().Nillable(),
		field.Bool("is_super_admin").Default(false),
		field.Bool("enabled").Default(true),
		field.String("phone").MaxRuneLen(32).Optional().Nillable(),
		field.String("email").MaxRuneLen(128).Optional().Nillable(),
		field.String("gender").MaxRuneLen(8).Optional().Nillable().
			Comment("dict gender value: 1 male, 2 female, 0 unknown"),
		field.String("avatar").MaxRuneLen(1024).Optional().Nillable(),
		field.Int64("org_id").Optional().Nillable(),
		field.Int64("position_id").Optional().Nillable(),
		field.Int64("director_id").Optional().Nillable(),
		field.Bool("force_totp").Default(false),
		field.Bool("totp_enabled").Default(false),
		field.String("totp_secret").MaxRuneLen(256).Optional().Nillable().Sensitive().
			Comment("TOTP seed, stored by the MFA feature (encrypted or plain, its choice)"),
		field.Int64("totp_last_step").Default(0).
			Comment("the last TOTP time step accepted (unix seconds / 30): a code of this step or an older one is refused"),
		field.Int64("default_module_id").Optional().Nillable(),
		field.Time("last_login_time").SchemaType(timeTypes).Optional().Nillable(),
		field.String("last_login_ip").MaxRuneLen(64).Optional().Nillable(),
		field.Int("login_fail_count").Default(0).NonNegative().
			Comment("consecutive failed password logins (sys.security.loginLock)"),
		field.Time("lock_until").SchemaType(timeTypes).Optional().Nillable().
			Comment("password login refused until this time"),
	}
}

// NormalizeAccount is the case-insensitive form of an account: what
// account_norm holds and what login and the uniqueness checks compare.
func NormalizeAccount(account string) string { return strings.ToLower(account) }

// Indexes of SysUser.
func (SysUser) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("account", "delete_key").Unique(),
		index.Fields("account_norm", "delete_key").Unique(),
		index.Fields("phone"),
		// A phone signs in by SMS: at most one live user holds it.
		index.Fields("phone", "delete_key").Unique(),
		index.Fields("org_id"),
		index.Fields("position_id"),
		// The user page at a million rows (docs/design/benchmarks.md, "A million
		// users"): live users newest first (a backward index scan for any
		// page, an index-only scan for the total) and the live users of a
		// data scope's orgs (an index-only count). The name and account
		// searches use trigram indexes on PostgreSQL, which ent cannot
		// express per dialect: migration 0009's Go data step creates them.
		index.Fields("is_delete", "create_time", "id"),
		index.Fields("org_id", "is_delete", "id"),
	}
}

// SysUserExternal binds an external identity to a user (wire contract §3.2).
type SysUserExternal struct{ ent.Schema }

// Mixin of SysUserExternal.
func (SysUserExternal) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysUserExternal.
func (SysUserExternal) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_user_external"}}
}

// Fields of SysUserExternal.
func (SysUserExternal) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("user_id"),
		field.String("provider").MaxRuneLen(32).NotEmpty().Comment("provider code"),
		field.String("subject").MaxRuneLen(256).NotEmpty().Comment("identity at the provider; never returned by the API"),
		field.String("display_name").MaxRuneLen(128).Optional().Nillable(),
		field.String("issuer").MaxRuneLen(512).Optional().Nillable().
			Comment("issuer of the identity when the provider reports one (built-in OIDC: the Authority); " +
				"a login whose provider now reports another issuer is refused, never remapped"),
	}
}

// Indexes of SysUserExternal: one live binding per identity and at most one
// live binding per (user, provider); the second index also serves lookups by
// user_id.
func (SysUserExternal) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "subject", "delete_key").Unique(),
		index.Fields("user_id", "provider", "delete_key").Unique(),
	}
}

// SysUserRole grants a role to a user.
type SysUserRole struct{ ent.Schema }

// Mixin of SysUserRole.
func (SysUserRole) Mixin() []ent.Mixin { return linkMixins() }

// Annotations of SysUserRole.
func (SysUserRole) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_user_role"}}
}

// Fields of SysUserRole.
func (SysUserRole) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("user_id"),
		field.Int64("role_id"),
	}
}

// Indexes of SysUserRole.
func (SysUserRole) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("user_id", "role_id").Unique(),
		index.Fields("role_id"),
	}
}
