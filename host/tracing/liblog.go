package tracing

import (
	"fmt"
	"log"
	"os"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel"
	"google.golang.org/grpc/grpclog"
)

// libraryTarget is the logger OpenTelemetry's and gRPC's own lines go to
// (RouteLibraryLog).
var libraryTarget atomic.Pointer[hclog.Logger]

// RouteLibraryLog sends the lines of OpenTelemetry's global error handler
// (a collector that cannot be reached, a refused export) and of gRPC's
// logger (through InstallProcessLoggers) to log: the kernel calls it with
// its AdminKernel.Tracing logger, so a JSON log stays JSON. The libraries'
// loggers are process-wide: with several kernels in one process the last
// one started receives the lines.
func RouteLibraryLog(l hclog.Logger) {
	if l == nil {
		libraryTarget.Store(nil)
		return
	}
	libraryTarget.Store(&l)
}

// InstallProcessLoggers installs the process-wide OpenTelemetry error
// handler and gRPC logger that write through RouteLibraryLog's logger
// (before any, to standard error as the libraries would). Call it once,
// first thing in main: gRPC's logger must be set before any gRPC activity.
func InstallProcessLoggers() {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(handleOTelError))
	grpclog.SetLoggerV2(grpcLogger{})
}

var fallback = log.New(os.Stderr, "", log.LstdFlags)

func handleOTelError(err error) {
	if err == nil {
		return
	}
	if t := libraryTarget.Load(); t != nil {
		(*t).Warn("opentelemetry", "error", err.Error())
		return
	}
	fallback.Print("opentelemetry: ", err)
}

// grpcLogger is gRPC's logger: informational lines are dropped (gRPC's
// default keeps only errors too), warnings and errors go to the kernel's
// log.
type grpcLogger struct{}

func emit(level hclog.Level, args ...any) {
	msg := strings.TrimSpace(fmt.Sprint(args...))
	if t := libraryTarget.Load(); t != nil {
		(*t).Log(level, "grpc", "message", msg)
		return
	}
	fallback.Print("grpc: ", msg)
}

func (grpcLogger) Info(...any)                    {}
func (grpcLogger) Infoln(...any)                  {}
func (grpcLogger) Infof(string, ...any)           {}
func (grpcLogger) Warning(args ...any)            { emit(hclog.Warn, args...) }
func (grpcLogger) Warningln(args ...any)          { emit(hclog.Warn, args...) }
func (grpcLogger) Warningf(f string, args ...any) { emit(hclog.Warn, fmt.Sprintf(f, args...)) }
func (grpcLogger) Error(args ...any)              { emit(hclog.Error, args...) }
func (grpcLogger) Errorln(args ...any)            { emit(hclog.Error, args...) }
func (grpcLogger) Errorf(f string, args ...any)   { emit(hclog.Error, fmt.Sprintf(f, args...)) }
func (grpcLogger) Fatal(args ...any)              { emit(hclog.Error, args...); os.Exit(1) }
func (grpcLogger) Fatalln(args ...any)            { emit(hclog.Error, args...); os.Exit(1) }
func (grpcLogger) Fatalf(f string, args ...any) {
	emit(hclog.Error, fmt.Sprintf(f, args...))
	os.Exit(1)
}
func (grpcLogger) V(int) bool { return false }
