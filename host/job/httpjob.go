package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/outbound"
)

// HTTP job limits.
const (
	// maxHTTPResponse is how much of a response body is read (the rest is
	// discarded and the output says so).
	maxHTTPResponse = 64 << 10
	// defaultHTTPTimeout bounds a request when the job has no timeout.
	defaultHTTPTimeout = 60 * time.Second
	maxRedirects       = 5
)

// ErrBlocked is the cause of every refusal of the HTTP guard (47009 at
// save time; a Failed run at run time). It is outbound.ErrBlocked.
var ErrBlocked = outbound.ErrBlocked

// HTTPGuard decides where Http jobs may go: a host allow-list
// (Service:Job:HttpAllowedHosts), and every address judged by an
// outbound.Policy — no loopback, private, link-local or otherwise
// non-public address, in any IPv4 or IPv6 form, unless
// Service:Outbound:AllowedRanges allows it (or HttpAllowPrivate allows
// them all). Addresses are checked on the address actually dialled, after
// name resolution (a name that resolves to 127.0.0.1, or changes its
// answer between check and use, is refused the same), on every redirect
// hop too.
type HTTPGuard struct {
	// Allowed are host patterns: "api.example.com", "*.example.com" (any
	// subdomain, not the apex), optionally with ":port" (then only that
	// port). Empty: nothing is allowed.
	Allowed []string
	// Policy judges the addresses (outbound.FromConfig; AllowAll is
	// Service:Job:HttpAllowPrivate).
	Policy outbound.Policy
}

// NewHTTPGuard returns the guard of the settings: the hosts and
// HttpAllowPrivate of Service:Job, the ranges of Service:Outbound.
func NewHTTPGuard(job config.Job, out config.Outbound) HTTPGuard {
	p := outbound.FromConfig(out)
	p.AllowAll = job.HTTPAllowPrivate
	return HTTPGuard{Allowed: job.HTTPAllowedHosts, Policy: p}
}

// CheckURL validates a job's URL: http or https, no user info, an
// allowed host and, for an IP literal (or a numeric host that is not a
// canonical IPv4 address), an allowed address.
func (g HTTPGuard) CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: not an absolute URL", ErrBlocked)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: scheme %q (http or https only)", ErrBlocked, u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: user info in the URL", ErrBlocked)
	}
	if !g.hostAllowed(u) {
		return nil, fmt.Errorf("%w: host %q is not in Service:Job:HttpAllowedHosts", ErrBlocked, u.Host)
	}
	if err := g.Policy.CheckHost(u.Hostname()); err != nil {
		return nil, err
	}
	return u, nil
}

func defaultPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func (g HTTPGuard) hostAllowed(u *url.URL) bool {
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	port := defaultPort(u)
	for _, p := range g.Allowed {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		pp := ""
		if h, po, err := net.SplitHostPort(p); err == nil {
			p, pp = h, po
		}
		p = strings.Trim(p, "[]")
		if pp != "" && pp != port {
			continue
		}
		if rest, ok := strings.CutPrefix(p, "*."); ok {
			if strings.HasSuffix(host, "."+rest) {
				return true
			}
			continue
		}
		if host == p {
			return true
		}
	}
	return false
}

// Client returns an HTTP client that dials only allowed addresses
// (outbound.Policy.Transport: the check runs on every socket, after name
// resolution), uses no proxy from the environment and follows redirects
// only to the same scheme and host, each passing CheckURL again (at most
// maxRedirects).
func (g HTTPGuard) Client() *http.Client {
	tr := g.Policy.Transport()
	tr.ResponseHeaderTimeout = defaultHTTPTimeout
	tr.DisableKeepAlives = true
	return &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("%w: more than %d redirects", ErrBlocked, maxRedirects)
		}
		if !strings.EqualFold(req.URL.Host, via[0].URL.Host) || req.URL.Scheme != via[0].URL.Scheme {
			return fmt.Errorf("%w: redirect to another host (%s)", ErrBlocked, req.URL.Host)
		}
		if _, err := g.CheckURL(req.URL.String()); err != nil {
			return err
		}
		return nil
	}}
}

// HTTPSpec is what an Http job sends.
type HTTPSpec struct {
	URL, Method, Body string
	Headers           map[string]string
	// SuccessStatuses are the statuses that succeed ("200-299,304";
	// empty: every status below 400).
	SuccessStatuses string
}

// parseHeaders reads httpHeaders: a JSON object of strings.
func parseHeaders(s *string) (map[string]string, error) {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil, nil
	}
	var h map[string]string
	if err := json.Unmarshal([]byte(*s), &h); err != nil {
		return nil, errors.New("httpHeaders is not a JSON object of strings")
	}
	for k, v := range h {
		if k == "" || strings.ContainsAny(k, "\r\n:") || strings.ContainsAny(v, "\r\n") {
			return nil, errors.New("httpHeaders has an invalid header")
		}
		if strings.EqualFold(k, "Host") {
			return nil, errors.New("httpHeaders may not set Host")
		}
	}
	return h, nil
}

var httpMethods = map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "HEAD": true}

// Do sends spec through the guard's client and returns the status line
// and the start of the body. A status outside SuccessStatuses (without
// them: 400 and up) is an error.
func (g HTTPGuard) Do(ctx context.Context, client *http.Client, spec HTTPSpec) (string, error) {
	u, err := g.CheckURL(spec.URL)
	if err != nil {
		return "", err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultHTTPTimeout)
		defer cancel()
	}
	method := strings.ToUpper(spec.Method)
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if spec.Body != "" {
		body = strings.NewReader(spec.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return "", err
	}
	for k, v := range spec.Headers {
		req.Header.Set(k, v)
	}
	if spec.Body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "adminkernel-job")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	buf, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPResponse+1))
	if err != nil {
		return "", err
	}
	out := resp.Status
	if len(buf) > maxHTTPResponse {
		buf = buf[:maxHTTPResponse]
		out += " (body truncated)"
	}
	if len(buf) > 0 {
		out += "\n" + string(buf)
	}
	ranges, err := parseStatuses(spec.SuccessStatuses)
	if err != nil {
		return out, fmt.Errorf("successStatuses: %w", err)
	}
	if !statusOK(ranges, resp.StatusCode) {
		if spec.SuccessStatuses != "" {
			return out, fmt.Errorf("HTTP %s (not in %s)", resp.Status, spec.SuccessStatuses)
		}
		return out, fmt.Errorf("HTTP %s", resp.Status)
	}
	return out, nil
}
