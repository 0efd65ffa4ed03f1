package telemetry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
)

// Path is where the metrics are served.
const Path = "/metrics"

// tokenOK compares the Authorization header with "Bearer <token>" in
// constant time (hashes of equal length, so the length leaks nothing
// either). An empty token accepts everything.
func tokenOK(header, token string) bool {
	if token == "" {
		return true
	}
	want := sha256.Sum256([]byte("Bearer " + token))
	got := sha256.Sum256([]byte(header))
	return subtle.ConstantTimeCompare(want[:], got[:]) == 1
}

// Handler is the net/http handler of the separate metrics listener: GET
// /metrics in the Prometheus exposition format (OpenMetrics when asked),
// with the bearer token when one is set; 404 for any other path.
func (m *Metrics) Handler(token string) http.Handler {
	inner := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	mux := http.NewServeMux()
	mux.HandleFunc(Path, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if !tokenOK(r.Header.Get("Authorization"), token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	})
	return mux
}

// ErrUnauthorized is returned by the main-address handler for a missing or
// wrong token; the kernel's error handler answers it 401.
var ErrUnauthorized = errors.New("telemetry: metrics token missing or wrong")

// FiberHandler serves the metrics on the main address (text format), with
// the bearer token (required there; the settings refuse an empty one).
// refuse builds the error answered to a caller without the token.
func (m *Metrics) FiberHandler(token string, refuse func() error) fiber.Handler {
	return func(c fiber.Ctx) error {
		if token == "" || !tokenOK(c.Get(fiber.HeaderAuthorization), token) {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="metrics"`)
			return refuse()
		}
		families, err := m.reg.Gather()
		if err != nil && len(families) == 0 {
			return fmt.Errorf("telemetry: gathering metrics: %w", err)
		}
		var buf bytes.Buffer
		enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, f := range families {
			if err := enc.Encode(f); err != nil {
				return fmt.Errorf("telemetry: encoding metrics: %w", err)
			}
		}
		c.Set(fiber.HeaderContentType, string(expfmt.NewFormat(expfmt.TypeTextPlain)))
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.Send(buf.Bytes())
	}
}

// Server is the separate metrics listener.
type Server struct {
	srv *http.Server
	ln  net.Listener
	log hclog.Logger
}

// Listen opens the separate metrics listener on addr (host:port).
func (m *Metrics) Listen(ctx context.Context, addr, token string, log hclog.Logger) (*Server, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listening on %s: %w", addr, err)
	}
	return &Server{ln: ln, log: log, srv: &http.Server{
		Handler:           m.Handler(token),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}}, nil
}

// Addr is the listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves until Close; a close is not an error.
func (s *Server) Serve() error {
	s.log.Info("metrics listening", "address", "http://"+s.ln.Addr().String()+Path)
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops the listener within ctx.
func (s *Server) Close(ctx context.Context) error { return s.srv.Shutdown(ctx) }
