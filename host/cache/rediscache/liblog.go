package rediscache

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// dialFailure marks go-redis' line per failed dial (dropped: see
// ProcessLogger).
const dialFailure = "failed to dial after"

// libraryTarget is the logger go-redis' lines go to (RouteLibraryLog).
var libraryTarget atomic.Pointer[hclog.Logger]

// RouteLibraryLog sends go-redis' own log lines (through ProcessLogger) to
// log, at WARN: the kernel calls it with its AdminKernel.Redis logger when
// it opens Redis. The library's logger is process-wide: with several
// kernels in one process the last one opened receives the lines.
func RouteLibraryLog(log hclog.Logger) {
	if log == nil {
		libraryTarget.Store(nil)
		return
	}
	libraryTarget.Store(&log)
}

// libraryLog is the process-wide go-redis logger.
type libraryLog struct {
	fallback interface {
		Printf(ctx context.Context, format string, v ...any)
	}
}

func (l libraryLog) Printf(ctx context.Context, format string, v ...any) {
	target := libraryTarget.Load()
	if target == nil {
		l.fallback.Printf(ctx, format, v...)
		return
	}
	msg := fmt.Sprintf(format, v...)
	if strings.Contains(msg, dialFailure) {
		return
	}
	(*target).Warn("redis client", "message", strings.TrimSpace(msg))
}
