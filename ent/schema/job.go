package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SysJob is a scheduled job (wire contract §4.11 "Jobs", JobInput and
// SysJob). The enums are stored as their contract numbers.
type SysJob struct{ ent.Schema }

// Mixin of SysJob.
func (SysJob) Mixin() []ent.Mixin { return adminMixins() }

// Annotations of SysJob.
func (SysJob) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_job"}}
}

// Fields of SysJob.
func (SysJob) Fields() []ent.Field {
	return []ent.Field{
		field.String("code").MaxRuneLen(64).NotEmpty().Immutable(),
		field.String("name").MaxRuneLen(128),
		field.Int("handler_kind").Comment("1 Compiled, 2 Http, 3 Sql"),
		field.String("handler_name").MaxRuneLen(128).Default(""),
		field.Text("handler_param").Optional().Nillable(),
		field.String("http_url").MaxRuneLen(2048).Optional().Nillable(),
		field.String("http_method").MaxRuneLen(16).Optional().Nillable(),
		field.Text("http_body").Optional().Nillable(),
		field.Text("http_headers").Optional().Nillable(),
		field.Text("sql").Optional().Nillable(),
		field.Int("trigger_kind").Comment("1 Cron, 2 Interval, 3 OneShot"),
		field.String("cron_expression").MaxRuneLen(128).Optional().Nillable(),
		field.Int("interval_seconds").Optional().Nillable(),
		field.Time("run_at").SchemaType(timeTypes).Optional().Nillable(),
		field.String("time_zone").MaxRuneLen(64).Optional().Nillable(),
		field.Int("misfire_strategy").Default(1).Comment("1 Skip, 2 FireOnceNow"),
		field.Int("concurrency_mode").Default(1).Comment("1 SerialSkip, 2 Parallel"),
		field.Int("timeout_seconds").Default(0),
		field.Int("retry_count").Default(0),
		field.Int("retry_interval_seconds").Default(0),
		field.Int("fail_alert_threshold").Default(0),
		field.Bool("alert_by_notice").Default(false),
		field.String("remark").MaxRuneLen(512).Optional().Nillable(),
		field.Time("start_time").SchemaType(timeTypes).Optional().Nillable(),
		field.Time("end_time").SchemaType(timeTypes).Optional().Nillable(),
		field.Int("status").Default(1).Comment("1 Ready, 2 Paused, 3 Completed, 4 Panic"),
		field.Bool("is_system").Default(false),
		field.Time("schedule_anchor").SchemaType(timeTypes).Default(time.Now).
			Comment("when the schedule was last set: intervals count from it, and no firing before it is owed"),
		field.Time("next_fire_time").SchemaType(timeTypes).Optional().Nillable(),
		field.Time("last_fire_time").SchemaType(timeTypes).Optional().Nillable(),
		field.Int("last_run_status").Optional().Nillable(),
		field.Int("consecutive_failures").Default(0),
		// Added with the contract's job bodies (migration 0017, expand):
		// the Http success statuses ("200-299,304"), the job's alert
		// recipients and its run counters.
		field.String("http_success_statuses").MaxRuneLen(256).Optional().Nillable(),
		field.String("alert_emails").MaxRuneLen(1024).Optional().Nillable(),
		field.Int64("number_of_runs").Default(0).Comment("ended runs (Skipped firings not counted)"),
		field.Int64("number_of_errors").Default(0).Comment("ended runs that did not succeed"),
	}
}

// Indexes of SysJob.
func (SysJob) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("code", "delete_key").Unique(),
		index.Fields("status"),
	}
}

// SysJobLog is one run of a job (SysJobLog of the contract). The row is
// also the claim of the firing: fire_instance_id (job id and fire time) is
// unique, so of several replicas inserting the same firing exactly one
// succeeds, and lease_until is the lease its runner renews while it runs.
type SysJobLog struct{ ent.Schema }

// Mixin of SysJobLog.
func (SysJobLog) Mixin() []ent.Mixin { return []ent.Mixin{IDMixin{}} }

// Annotations of SysJobLog.
func (SysJobLog) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "sys_job_log"}}
}

// Fields of SysJobLog.
func (SysJobLog) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("job_id").Immutable(),
		field.String("job_name").MaxRuneLen(128),
		field.String("fire_instance_id").MaxRuneLen(64).NotEmpty().Immutable(),
		field.Time("fire_time").SchemaType(timeTypes).Immutable(),
		field.Int("run_status").Comment("1 Running, 2 Success, 3 Failed, 4 Timeout, 5 Cancelled, 6 Skipped"),
		field.Time("start_time").SchemaType(timeTypes),
		field.Time("end_time").SchemaType(timeTypes).Optional().Nillable(),
		field.Int64("elapsed_ms").Optional().Nillable(),
		field.Text("output").Optional().Nillable(),
		field.Text("error_message").Optional().Nillable(),
		field.String("instance").MaxRuneLen(128),
		field.String("triggered_by").MaxRuneLen(16).Comment("schedule, manual, misfire"),
		field.Time("lease_until").SchemaType(timeTypes).Optional().Nillable(),
		field.Bool("kill_requested").Default(false),
		// The run's W3C trace id when tracing sampled it (issue 26): from
		// the run log to its trace, as sys_op_log.trace_id does for requests.
		field.String("trace_id").MaxRuneLen(64).Optional().Nillable(),
		// The index of the run's last attempt (0: the first; retries of a
		// firing run within its row, migration 0017).
		field.Int("retry_index").Default(0),
	}
}

// Indexes of SysJobLog.
func (SysJobLog) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("fire_instance_id").Unique(),
		index.Fields("job_id", "start_time"),
		index.Fields("run_status"),
		index.Fields("start_time"),
	}
}
