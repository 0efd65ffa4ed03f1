package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysFile is an uploaded file (wire contract §4.11 "Files", SysFile): its
// metadata; the bytes live in the configured storage under storage_path,
// a name the kernel makes up (never derived from the upload's name).
// Soft-deleted like the admin entities (the recycle bin restores it).
type SysFile struct{ ent.Schema }

// Mixin of SysFile.
func (SysFile) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysFile.
func (SysFile) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_file"}}
}

// Fields of SysFile.
func (SysFile) Fields() []ent.Field {
	return []ent.Field{
		field.String("original_name").MaxRuneLen(256).NotEmpty(),
		field.String("storage_path").MaxRuneLen(256).NotEmpty().Immutable(),
		field.String("extension").MaxRuneLen(32),
		field.String("content_type").MaxRuneLen(128).Optional().Nillable(),
		field.Int64("size_bytes").NonNegative(),
		field.String("hash").MaxRuneLen(64).Optional().Nillable().Comment("SHA-256 of the content, lowercase hex"),
		field.Int64("org_id").Optional().Nillable().Comment("the uploader's org at upload time (data scope)"),
	}
}

// Indexes of SysFile.
func (SysFile) Indexes() []ent.Index {
	return []ent.Index{index.Fields("hash", "size_bytes"), index.Fields("create_user_id")}
}

// SysFileUpload is a chunked upload in progress (POST /sys/file/chunk/init):
// removed when it completes or when it is abandoned for longer than
// Service:Upload:ChunkExpiryHours.
type SysFileUpload struct{ ent.Schema }

// Mixin of SysFileUpload.
func (SysFileUpload) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}, CreatedMixin{}} }

// Annotations of SysFileUpload.
func (SysFileUpload) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_file_upload"}}
}

// Fields of SysFileUpload.
func (SysFileUpload) Fields() []ent.Field {
	return []ent.Field{
		field.String("file_hash").MaxRuneLen(64).NotEmpty().Immutable(),
		field.String("file_name").MaxRuneLen(256).NotEmpty(),
		field.Int64("total_size").NonNegative().Immutable(),
		field.Int("chunk_count").Positive().Immutable(),
		field.String("content_type").MaxRuneLen(128).Optional().Nillable(),
		field.Int64("org_id").Optional().Nillable(),
		field.Time("touch_time").SchemaType(timeTypes).Default(time.Now).Comment("last chunk received (expiry counts from here)"),
	}
}

// Indexes of SysFileUpload.
func (SysFileUpload) Indexes() []ent.Index {
	return []ent.Index{index.Fields("create_user_id", "file_hash"), index.Fields("touch_time")}
}

// SysFileChunk records one received chunk of a SysFileUpload; the chunk's
// bytes are in the storage under a name derived from the upload id and the
// index. A chunk sent again replaces the bytes and keeps the row.
type SysFileChunk struct{ ent.Schema }

// Mixin of SysFileChunk.
func (SysFileChunk) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}, CreatedMixin{}} }

// Annotations of SysFileChunk.
func (SysFileChunk) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_file_chunk"}}
}

// Fields of SysFileChunk.
func (SysFileChunk) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("upload_id").Immutable(),
		field.Int("chunk_index").NonNegative().Immutable(),
		field.Int64("size_bytes").NonNegative(),
		field.String("hash").MaxRuneLen(64).Comment("SHA-256 of the chunk, lowercase hex"),
	}
}

// Indexes of SysFileChunk.
func (SysFileChunk) Indexes() []ent.Index {
	return []ent.Index{index.Fields("upload_id", "chunk_index").Unique()}
}
