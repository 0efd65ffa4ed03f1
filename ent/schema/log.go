package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysOpLog is an operation-log entry (wire contract §4.9). Append-only; the
// admin API clears the table with a hard delete. create_time is the time of
// the operation.
type SysOpLog struct{ ent.Schema }

// Mixin of SysOpLog.
func (SysOpLog) Mixin() []ent.Mixin { return logMixins() }

// Annotations of SysOpLog.
func (SysOpLog) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_op_log"}}
}

// Fields of SysOpLog.
func (SysOpLog) Fields() []ent.Field {
	return []ent.Field{
		field.String("title").MaxRuneLen(256),
		field.String("http_method").MaxRuneLen(16),
		field.String("path").MaxRuneLen(1024),
		field.Text("param_json").Optional().Nillable().Comment("sensitive fields masked as ***"),
		field.Int("result_code").Default(0),
		field.Bool("success"),
		field.String("exception_message").MaxRuneLen(2000).Optional().Nillable(),
		field.Int64("elapsed_ms").Default(0),
		field.Int64("operator_id").Optional().Nillable(),
		field.String("ip").MaxRuneLen(64).Optional().Nillable(),
		field.String("user_agent").MaxRuneLen(512).Optional().Nillable(),
		field.String("request_id").MaxRuneLen(128).Optional().Nillable().
			Comment("the request's X-Request-ID (the caller's when valid)"),
		field.String("trace_id").MaxRuneLen(64).Optional().Nillable().
			Comment("the W3C trace id of the request when it was traced (Service:Telemetry:Tracing)"),
	}
}

// Indexes of SysOpLog.
func (SysOpLog) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("create_time"),
		index.Fields("operator_id"),
	}
}

// SysLoginLog is a login attempt (wire contract §4.9).
type SysLoginLog struct{ ent.Schema }

// Mixin of SysLoginLog.
func (SysLoginLog) Mixin() []ent.Mixin { return logMixins() }

// Annotations of SysLoginLog.
func (SysLoginLog) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_login_log"}}
}

// Fields of SysLoginLog.
func (SysLoginLog) Fields() []ent.Field {
	return []ent.Field{
		field.String("account").MaxRuneLen(128).Comment("the raw input, even for an unknown account"),
		field.Bool("success"),
		field.Int("result_code").Default(0),
		field.Int64("user_id").Optional().Nillable(),
		field.String("login_method").MaxRuneLen(32).Optional().Nillable().
			Comment("password | sms | the external provider code"),
		field.String("ip").MaxRuneLen(64).Optional().Nillable(),
		field.String("user_agent").MaxRuneLen(512).Optional().Nillable(),
	}
}

// Indexes of SysLoginLog.
func (SysLoginLog) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("create_time"),
		index.Fields("user_id"),
	}
}

// SysExceptionLog records an unhandled error (wire contract §4.9). Request
// and response bodies are never stored.
type SysExceptionLog struct{ ent.Schema }

// Mixin of SysExceptionLog.
func (SysExceptionLog) Mixin() []ent.Mixin { return logMixins() }

// Annotations of SysExceptionLog.
func (SysExceptionLog) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_exception_log"}}
}

// Fields of SysExceptionLog.
func (SysExceptionLog) Fields() []ent.Field {
	return []ent.Field{
		field.String("http_method").MaxRuneLen(16),
		field.String("path").MaxRuneLen(1024),
		field.String("trace_id").MaxRuneLen(64).Optional().Nillable(),
		field.String("exception_type").MaxRuneLen(256),
		field.String("message").MaxRuneLen(2000).Optional().Nillable().Comment("truncated to 2000 characters"),
		field.Text("stack_trace").Optional().Nillable().Comment("truncated to 8000 characters"),
		field.Int64("operator_id").Optional().Nillable(),
		field.String("ip").MaxRuneLen(64).Optional().Nillable(),
		field.String("user_agent").MaxRuneLen(512).Optional().Nillable(),
		field.String("request_id").MaxRuneLen(128).Optional().Nillable().
			Comment("the request's X-Request-ID (the caller's when valid)"),
	}
}

// Indexes of SysExceptionLog.
func (SysExceptionLog) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("create_time"),
	}
}
