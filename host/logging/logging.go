// Package logging builds the kernel's hclog loggers from the Logging
// settings: one root logger, per-category levels (Logging:LogLevel) and an
// optional log file.
package logging

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"

	"github.com/adminkernel/kernel/config"
)

// Logs hands out category loggers that share one output.
type Logs struct {
	root   hclog.Logger
	levels map[string]hclog.Level // lower-case category → level
	file   *reopenFile            // Logging:File; nil without one
	mu     sync.Mutex
	named  map[string]hclog.Logger
}

// ParseLevel maps a settings level name to an hclog level.
func ParseLevel(name string) (hclog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "trace":
		return hclog.Trace, nil
	case "debug":
		return hclog.Debug, nil
	case "information", "info", "":
		return hclog.Info, nil
	case "warning", "warn":
		return hclog.Warn, nil
	case "error", "critical":
		return hclog.Error, nil
	case "none":
		return hclog.Off, nil
	}
	return hclog.NoLevel, fmt.Errorf("unknown log level %q", name)
}

// New builds the loggers. Output goes to out (standard error when nil) or,
// when Logging:File is set, to that file (relative to the content root)
// alone, unless Logging:FileAndStderr asks for both.
func New(cfg config.Logging, contentRoot string, out io.Writer) (*Logs, error) {
	if out == nil {
		out = os.Stderr
	}
	l := &Logs{levels: make(map[string]hclog.Level), named: make(map[string]hclog.Logger)}
	for cat, name := range cfg.LogLevel {
		lvl, err := ParseLevel(name)
		if err != nil {
			return nil, fmt.Errorf("Logging:LogLevel:%s: %w", cat, err)
		}
		l.levels[strings.ToLower(cat)] = lvl
	}
	if cfg.File != "" {
		path := cfg.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(contentRoot, path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, fmt.Errorf("log file: %w", err)
		}
		f, err := openLog(path)
		if err != nil {
			return nil, err
		}
		l.file = &reopenFile{path: path, f: f}
		if cfg.FileAndStderr {
			out = io.MultiWriter(out, l.file)
		} else {
			out = l.file
		}
	}
	lvl, ok := l.levels["default"]
	if !ok {
		lvl = hclog.Info
	}
	l.root = hclog.New(&hclog.LoggerOptions{
		Name:              "adminkernel",
		Level:             lvl,
		Output:            out,
		JSONFormat:        strings.EqualFold(cfg.Format, "json"),
		IndependentLevels: true,
		TimeFormat:        "2006-01-02T15:04:05.000Z07:00",
	})
	return l, nil
}

func openLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	return f, nil
}

// reopenFile is the log file: written under a lock that Reopen takes to
// swap the file.
type reopenFile struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

func (r *reopenFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	return r.f.Write(p)
}

// FilePath is the log file's path ("" without Logging:File).
func (l *Logs) FilePath() string {
	if l.file == nil {
		return ""
	}
	return l.file.path
}

// Reopen opens the log file again by its path and writes there from now
// on, closing the file it replaces: after logrotate renamed the file
// (its postrotate sends SIGHUP, which the serve command turns into this
// call), the log goes to a new file of the configured name. Without
// Logging:File it does nothing. When the path cannot be opened the log
// stays on the old file and the error is returned.
func (l *Logs) Reopen() error {
	if l.file == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(l.file.path), 0o750); err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	f, err := openLog(l.file.path)
	if err != nil {
		return err
	}
	l.file.mu.Lock()
	old := l.file.f
	l.file.f = f
	l.file.mu.Unlock()
	if old != nil {
		return old.Close()
	}
	return nil
}

// Root returns the root logger (category Default).
func (l *Logs) Root() hclog.Logger { return l.root }

// For returns the logger of a category ("SmartAdmin.Sql", "provider",
// ...), with its own level when Logging:LogLevel names the category.
func (l *Logs) For(category string) hclog.Logger {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lg, ok := l.named[category]; ok {
		return lg
	}
	lg := l.root.Named(category)
	if lvl, ok := l.levels[strings.ToLower(category)]; ok {
		lg.SetLevel(lvl)
	}
	l.named[category] = lg
	return lg
}

// Close closes the log file, if any.
func (l *Logs) Close() error {
	if l.file == nil {
		return nil
	}
	l.file.mu.Lock()
	defer l.file.mu.Unlock()
	if l.file.f == nil {
		return nil
	}
	err := l.file.f.Close()
	l.file.f = nil
	return err
}

// RequestIDKey is the context key of the request id: the request context
// of the kernel's HTTP requests answers it (host/database/sqllog's
// per-request context carries the X-Request-ID).
type RequestIDKey struct{}

// RequestID returns the request id ctx carries ("" outside a request).
func RequestID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(RequestIDKey{}).(string)
	return id
}

// Ctx returns log with the request id of ctx ("request_id") and, when the
// request is traced (Service:Telemetry:Tracing), its trace and span ids
// ("trace_id", "span_id") when ctx is a request's context, else log itself:
// log through it wherever a request context is at hand, so that every line
// of a request can be found by its id.
func Ctx(ctx context.Context, log hclog.Logger) hclog.Logger {
	if ctx == nil {
		return log
	}
	kv := CtxArgs(ctx)
	if len(kv) == 0 {
		return log
	}
	return log.With(kv...)
}

// CtxArgs returns the key-value pairs Ctx adds: request_id, trace_id and
// span_id, each when ctx has it (nil outside a request).
func CtxArgs(ctx context.Context) []any {
	if ctx == nil {
		return nil
	}
	var kv []any
	if id := RequestID(ctx); id != "" {
		kv = append(kv, "request_id", id)
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		kv = append(kv, "trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
	}
	return kv
}

// TraceID returns the trace id of ctx's span ("" when ctx is not traced).
func TraceID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}
