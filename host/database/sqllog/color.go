package sqllog

import (
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/config"
)

// ColorDefault decides Service:Database:SqlLog:Color: a set value wins;
// unset means colours only when stdout is a terminal (a character device)
// and NO_COLOR is not set to a non-empty value (no-color.org).
func ColorDefault(setting *bool, stdout *os.File) bool {
	if setting != nil {
		return *setting
	}
	if os.Getenv("NO_COLOR") != "" || stdout == nil {
		return false
	}
	fi, err := stdout.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}

// FromConfig returns the Options of cfg's Service:Database settings
// (SqlLog:Enabled, MinMillis, MaxSqlChars, Color and SlowSqlMillis) with
// log as the logger (the Category logger). An unset Color follows
// ColorDefault(nil, stdout), except that it is off when Logging:File is set
// or Logging:Format is json (no escape codes in files and JSON).
func FromConfig(cfg *config.Config, log hclog.Logger, stdout *os.File) Options {
	db := cfg.Service.Database
	color := ColorDefault(db.SQLLog.Color, stdout)
	if db.SQLLog.Color == nil && (cfg.Logging.File != "" || strings.EqualFold(cfg.Logging.Format, "json")) {
		color = false
	}
	return Options{
		Log:         log,
		Enabled:     db.SQLLog.Enabled,
		MinMillis:   db.SQLLog.MinMillis,
		SlowMillis:  db.SlowSQLMillis,
		MaxSQLChars: db.SQLLog.MaxSQLChars,
		Color:       color,
	}
}

// RequestSummary reports whether Middleware should log the per-request
// summary: SqlLog:Enabled and SqlLog:RequestSummary (the summary is part of
// the statement log, a development tool).
func RequestSummary(cfg *config.Config) bool {
	return cfg.Service.Database.SQLLog.Enabled && cfg.Service.Database.SQLLog.RequestSummary
}
