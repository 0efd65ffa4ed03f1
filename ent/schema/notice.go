package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysNotice is a published notice (wire contract §4.11 "Notices"). Who
// receives it is receiver_type: 0 every user, 1 the holders of the roles
// listed in sys_notice_receiver (resolved when read, so a later role grant
// counts), 2 the users listed there. Read state lives in sys_notice_read and
// sys_notice_watermark, never one row per receiver at publication.
type SysNotice struct{ ent.Schema }

// Mixin of SysNotice.
func (SysNotice) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysNotice.
func (SysNotice) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_notice"}}
}

// Fields of SysNotice.
func (SysNotice) Fields() []ent.Field {
	return []ent.Field{
		field.String("title").MaxRuneLen(256).NotEmpty(),
		field.Text("content").Optional().Nillable(),
		field.Int("type").Comment("1 Notice, 2 Announcement, 3 Message"),
		field.Int("receiver_type").Comment("0 All, 1 Roles, 2 Users"),
		field.Text("actions_json").Optional().Nillable(),
		field.Time("publish_time").SchemaType(timeTypes).Default(time.Now).Immutable(),
	}
}

// Indexes of SysNotice.
func (SysNotice) Indexes() []ent.Index {
	return []ent.Index{index.Fields("is_delete", "receiver_type")}
}

// SysNoticeReceiver is one role (receiver_type 1) or user (receiver_type 2)
// a notice is addressed to. Rows are written once, with the notice.
type SysNoticeReceiver struct{ ent.Schema }

// Mixin of SysNoticeReceiver.
func (SysNoticeReceiver) Mixin() []ent.Mixin { return logMixins() }

// Annotations of SysNoticeReceiver.
func (SysNoticeReceiver) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_notice_receiver"}}
}

// Fields of SysNoticeReceiver.
func (SysNoticeReceiver) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("notice_id").Immutable(),
		field.Int64("receiver_id").Immutable().Comment("a role id or a user id, after the notice's receiver_type"),
	}
}

// Indexes of SysNoticeReceiver: one row per (notice, receiver); the
// second serves "notices addressed to these roles / this user".
func (SysNoticeReceiver) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("notice_id", "receiver_id").Unique(),
		index.Fields("receiver_id", "notice_id"),
	}
}

// SysNoticeRead records that a user read one notice above the user's
// watermark. Rows exist only for notices actually read one by one.
type SysNoticeRead struct{ ent.Schema }

// Mixin of SysNoticeRead.
func (SysNoticeRead) Mixin() []ent.Mixin { return logMixins() }

// Annotations of SysNoticeRead.
func (SysNoticeRead) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_notice_read"}}
}

// Fields of SysNoticeRead.
func (SysNoticeRead) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("user_id").Immutable(),
		field.Int64("notice_id").Immutable(),
	}
}

// Indexes of SysNoticeRead.
func (SysNoticeRead) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id", "notice_id").Unique()}
}

// SysNoticeWatermark is a user's "read all": every notice with an id up to
// read_upto_id counts as read. One row per user, written by read-all.
type SysNoticeWatermark struct{ ent.Schema }

// Mixin of SysNoticeWatermark.
func (SysNoticeWatermark) Mixin() []ent.Mixin { return linkMixins() }

// Annotations of SysNoticeWatermark.
func (SysNoticeWatermark) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_notice_watermark"}}
}

// Fields of SysNoticeWatermark.
func (SysNoticeWatermark) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("user_id").Immutable(),
		field.Int64("read_upto_id"),
	}
}

// Indexes of SysNoticeWatermark.
func (SysNoticeWatermark) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id").Unique()}
}
