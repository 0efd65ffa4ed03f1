// Package schema is the hand-written ent schema of the kernel's tables.
//
// Conventions shared by every entity:
//
//   - Table names are `sys_*` (entsql.Annotation); columns are the snake_case
//     form of the wire contract's camelCase JSON names.
//   - `id` is an int64 snowflake (below 2^53). The schema declares no
//     default: whoever opens the client installs the id source (the kernel
//     gives its own generator to database.Open, whose create hook sets the id
//     of every created row, bulk creates included, unless it is set
//     explicitly: seed rows use fixed ids 1-999, consumer seed rows start at
//     1000). The schema imports nothing of the host.
//   - Associations are plain int64 columns (user_id, role_id, ...), not ent
//     edges: the contract's DTOs are flat and the services join by id. There
//     are no foreign-key constraints; services delete dependent rows.
//   - Strings are bounded with MaxRuneLen so that MySQL/MariaDB utf8mb4
//     indexes fit (at most varchar(256) in an index). Writes longer than the
//     bound fail ent validation before reaching the database: services
//     truncate free text (user agents, messages) before saving.
//   - Long texts (stack traces, parameter JSON, config values) are field.Text:
//     TEXT on SQLite and PostgreSQL, LONGTEXT on MySQL.
//   - Times are DATETIME on SQLite, TIMESTAMPTZ on PostgreSQL and
//     DATETIME(6) on MySQL (not TIMESTAMP, which ends in 2038).
//
// Soft delete and unique keys: admin entities carry `is_delete` (the
// contract's isDelete) and `delete_key`. While a row is live delete_key is 0;
// soft-deleting a row sets is_delete=true AND delete_key=<the row's id>.
// Every business unique key includes delete_key, e.g. UNIQUE(account,
// delete_key) on sys_user, so that at most one live row holds a key while
// any number of deleted rows keep theirs. This frees the key for re-creation
// (the contract frees (provider, subject) when a binding is removed) and works
// the same on SQLite, PostgreSQL and MySQL, which has no partial indexes.
// Restoring a row resets both columns; a unique violation then means a live
// row took the key meanwhile (error 42021 RecycleUniqueConflict).
package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
)

// timeTypes maps time fields to DATETIME(6) on MySQL; the other dialects
// keep ent's defaults (SQLite datetime, PostgreSQL timestamptz).
var timeTypes = map[string]string{dialect.MySQL: "datetime(6)"}

// noAutoIncrement: ids come from the kernel's snowflake generator (a create
// hook), never from the database.
var noAutoIncrement = false

// IDMixin adds the snowflake primary key.
type IDMixin struct{ mixin.Schema }

// Fields of the IDMixin.
func (IDMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id").
			Positive().
			Immutable().
			Annotations(entsql.Annotation{Incremental: &noAutoIncrement}).
			Comment("snowflake id below 2^53; seed rows use fixed ids below 4096"),
	}
}

// AuditMixin adds the contract's base columns createTime, createUserId,
// updateTime and updateUserId.
type AuditMixin struct{ mixin.Schema }

// Fields of the AuditMixin.
func (AuditMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("create_time").SchemaType(timeTypes).Default(time.Now).Immutable(),
		field.Int64("create_user_id").Optional().Nillable().Immutable(),
		field.Time("update_time").SchemaType(timeTypes).Optional().Nillable().UpdateDefault(time.Now),
		field.Int64("update_user_id").Optional().Nillable(),
	}
}

// CreatedMixin adds create_time and create_user_id only: logs and sessions are
// written once and never updated through the admin API.
type CreatedMixin struct{ mixin.Schema }

// Fields of the CreatedMixin.
func (CreatedMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("create_time").SchemaType(timeTypes).Default(time.Now).Immutable(),
		field.Int64("create_user_id").Optional().Nillable().Immutable(),
	}
}

// SoftDeleteMixin adds is_delete and delete_key (see the package comment).
type SoftDeleteMixin struct{ mixin.Schema }

// Fields of the SoftDeleteMixin.
func (SoftDeleteMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Bool("is_delete").Default(false),
		field.Int64("delete_key").Default(0).
			Comment("0 while live; the row's id once soft-deleted. Part of every unique key."),
	}
}

// adminMixins are the mixins of every soft-deletable admin entity.
func adminMixins() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, AuditMixin{}, SoftDeleteMixin{}}
}

// linkMixins are the mixins of association tables (hard-deleted).
func linkMixins() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, AuditMixin{}}
}

// logMixins are the mixins of append-only tables.
func logMixins() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, CreatedMixin{}}
}
