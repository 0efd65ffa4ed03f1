// Package doctor checks the setup of one external login provider (issue 29
// item 6): its status in the provider registry, the shape of its settings,
// that the vendor hosts resolve and answer, that the vendor accepts the
// credentials where it offers a harmless check, and the exact redirect URI
// and trusted domain to register with the vendor. The kernel does the
// HTTP checks itself from what it knows of the bundled vendor plugins
// (their settings keys, host overrides and default hosts) and of the
// built-in OIDC providers (discovery, issuer, key set); a third-party
// plugin gets the status, settings-presence and redirect checks only
// (vendor checks would need a plugin RPC; docs/vendors/plugins.md).
//
// Results never carry a secret: messages are the kernel's own texts with
// host names, key names, vendor error codes and the redirect values; the
// vendors' free-text messages (which may echo what was sent) are left out,
// and every result is scrubbed of the settings' values as a last guard.
package doctor

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/idp"
)

// Result is the outcome of one check.
type Result string

// Outcomes, from best to worst.
const (
	OK   Result = "ok"
	Warn Result = "warn"
	Fail Result = "fail"
)

func worse(a, b Result) Result {
	rank := map[Result]int{OK: 0, Warn: 1, Fail: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// Check is one finding. MsgKey and HintKey are msgKeys of the kernel's
// language packs (host/errcode/locales) with Args interpolated; Message
// and Hint are the same texts in English.
type Check struct {
	Name    string            `json:"name"`
	Result  Result            `json:"result"`
	MsgKey  string            `json:"msgKey"`
	Message string            `json:"message"`
	Args    map[string]string `json:"args,omitempty"`
	HintKey string            `json:"hintKey,omitempty"`
	Hint    string            `json:"hint,omitempty"`
}

// Report is the doctor's answer for one provider.
type Report struct {
	Code string `json:"code"`
	// Source is builtin, plugin or compiled; Status the registry status.
	Source string `json:"source"`
	Status string `json:"status"`
	// RedirectURI and TrustedDomain are the values to register with the
	// vendor ("" when the callback base is unknown).
	RedirectURI   string `json:"redirectUri"`
	TrustedDomain string `json:"trustedDomain"`
	// Result is the worst result of the checks.
	Result Result  `json:"result"`
	Checks []Check `json:"checks"`
}

// Target is what the doctor checks.
type Target struct {
	Entry idp.Entry
	// Settings is the plugin's settings section (nil for OIDC).
	Settings map[string]string
	// Section names where Settings come from, for messages.
	Section string
	// OIDC is the built-in provider's settings (nil for plugins).
	OIDC *config.OIDCProvider
	// RedirectURI is the provider's callback URL; "" with RedirectProblem
	// saying why it is unknown.
	RedirectURI     string
	RedirectProblem string
}

// Doctor runs the checks. The zero value is usable.
type Doctor struct {
	// Client makes the vendor calls (default: a client with Timeout that
	// never follows redirects).
	Client *http.Client
	// Resolver resolves the vendor hosts (default net.DefaultResolver).
	Resolver *net.Resolver
	// Timeout bounds each vendor call (default 5 s).
	Timeout time.Duration
}

// DefaultTimeout bounds each call of a check.
const DefaultTimeout = 5 * time.Second

func (d *Doctor) client() *http.Client {
	if d.Client != nil {
		return d.Client
	}
	t := d.timeout()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	return &http.Client{Timeout: t, Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (d *Doctor) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return DefaultTimeout
}

func (d *Doctor) resolver() *net.Resolver {
	if d.Resolver != nil {
		return d.Resolver
	}
	return net.DefaultResolver
}

// run is one doctor run: the report being built.
type run struct {
	d      *Doctor
	client *http.Client
	rep    *Report
}

func (r *run) add(c Check) {
	r.rep.Checks = append(r.rep.Checks, c)
	r.rep.Result = worse(r.rep.Result, c.Result)
}

// check builds a Check from the text table.
func check(name string, res Result, key string, args map[string]string) Check {
	c := Check{Name: name, Result: res, MsgKey: key, Message: render(text(key), args), Args: args}
	if h, ok := hints[key]; ok {
		c.HintKey, c.Hint = h, render(text(h), args)
	}
	return c
}

func render(tmpl string, args map[string]string) string {
	for k, v := range args {
		tmpl = strings.ReplaceAll(tmpl, "{"+k+"}", v)
	}
	return tmpl
}

// Run checks t and returns the report. It never fails: every problem is a
// check.
func (d *Doctor) Run(ctx context.Context, t Target) Report {
	rep := Report{Code: t.Entry.Code, Source: string(t.Entry.Source.Kind), Status: string(t.Entry.Status), Result: OK, Checks: []Check{}}
	r := &run{d: d, client: d.client(), rep: &rep}
	r.status(t.Entry)
	v := vendors[strings.ToLower(t.Entry.Code)]
	switch {
	case t.OIDC != nil:
		r.oidc(ctx, t.OIDC)
	case v != nil && t.Entry.Source.Kind != idp.Builtin:
		r.vendor(ctx, v, t)
	default:
		r.unknownPlugin(t)
	}
	r.redirect(t, v)
	scrub(&rep, t)
	return rep
}

func (r *run) status(e idp.Entry) {
	args := map[string]string{"status": string(e.Status), "reason": e.Reason}
	if e.Status == idp.Ready {
		r.add(check("status", OK, "doctor.status.ready", args))
		return
	}
	res := Fail
	if e.Status == idp.Unconfigured {
		res = Warn
	}
	r.add(check("status", res, "doctor.status.problem", args))
}

func (r *run) unknownPlugin(t Target) {
	args := map[string]string{"section": t.Section, "code": t.Entry.Code}
	if !config.VendorSettings(t.Settings).Configured() {
		r.add(check("settings", Fail, "doctor.settings.empty", args))
		return
	}
	r.add(check("settings", Warn, "doctor.settings.pluginOnly", args))
}

// redirect reports the values to register with the vendor.
func (r *run) redirect(t Target, v *vendor) {
	if t.RedirectURI == "" {
		r.add(check("redirect", Warn, "doctor.redirect.unknown", map[string]string{"reason": t.RedirectProblem}))
		return
	}
	u, err := url.Parse(t.RedirectURI)
	if err != nil || u.Host == "" {
		r.add(check("redirect", Fail, "doctor.redirect.unknown", map[string]string{"reason": "the callback URL is not an absolute URL"}))
		return
	}
	r.rep.RedirectURI, r.rep.TrustedDomain = t.RedirectURI, u.Host
	args := map[string]string{"redirectUri": t.RedirectURI, "trustedDomain": u.Host, "domain": u.Hostname()}
	key := "doctor.redirect.register"
	if v != nil && t.OIDC == nil && v.registerKey != "" {
		key = v.registerKey
	}
	res := OK
	if v != nil && t.OIDC == nil && v.defaultPortOnly && !defaultPort(u) {
		key, res = "doctor.redirect.port", Warn
	}
	if res == OK && u.Scheme != "https" && !loopback(u.Hostname()) {
		r.add(check("redirect", Warn, "doctor.redirect.http", args))
		return
	}
	r.add(check("redirect", res, key, args))
}

// defaultPort reports whether u names no port or its scheme's default one.
func defaultPort(u *url.URL) bool {
	switch u.Port() {
	case "":
		return true
	case "443":
		return u.Scheme == "https"
	case "80":
		return u.Scheme == "http"
	}
	return false
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// probe is an HTTP answer of a vendor, or why there is none.
type probe struct {
	status int
	body   []byte
	err    string
}

// hostChecks resolves host and asks base for an answer; it reports
// whether base answered.
func (r *run) hostChecks(ctx context.Context, base string) bool {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	args := map[string]string{"host": u.Host}
	if net.ParseIP(host) == nil {
		rctx, cancel := context.WithTimeout(ctx, r.d.timeout())
		addrs, err := r.d.resolver().LookupHost(rctx, host)
		cancel()
		if err != nil {
			args["error"] = dnsReason(err)
			r.add(check("dns:"+u.Host, Fail, "doctor.dns.fail", args))
			return false
		}
		args["addrs"] = strings.Join(addrs[:min(len(addrs), 3)], ", ")
		r.add(check("dns:"+u.Host, OK, "doctor.dns.ok", args))
	}
	p := r.call(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/", nil, nil)
	if p.err != "" {
		args["error"] = p.err
		r.add(check("reach:"+u.Host, Fail, "doctor.reach.fail", args))
		return false
	}
	args["httpStatus"] = strconv.Itoa(p.status)
	r.add(check("reach:"+u.Host, OK, "doctor.reach.ok", args))
	return true
}

func dnsReason(err error) string {
	var de *net.DNSError
	if errors.As(err, &de) {
		switch {
		case de.IsNotFound:
			return "no such host"
		case de.IsTimeout:
			return "the lookup timed out"
		}
		return de.Err
	}
	return "the lookup failed"
}

// netReason describes a transport failure without its URL (a vendor URL
// may carry credentials in its query).
func netReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "no answer within the timeout"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer within the timeout"
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		var de *net.DNSError
		if errors.As(err, &de) {
			return "does not resolve: " + dnsReason(de)
		}
		if strings.Contains(oe.Err.Error(), "refused") {
			return "connection refused"
		}
		return oe.Op + ": " + oe.Err.Error()
	}
	msg := err.Error()
	if i := strings.Index(msg, "?"); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// scrub removes every settings value that is long enough to be a secret
// from the report's texts and arguments (a last guard: no check puts one
// there).
func scrub(rep *Report, t Target) {
	var secrets []string
	for k, v := range t.Settings {
		if config.SensitiveName(k) && len(strings.TrimSpace(v)) >= 4 {
			secrets = append(secrets, strings.TrimSpace(v))
		}
	}
	if t.OIDC != nil {
		if s := t.OIDC.ClientSecret.Reveal(); len(s) >= 4 {
			secrets = append(secrets, s)
		}
	}
	if len(secrets) == 0 {
		return
	}
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	clean := func(s string) string {
		for _, sec := range secrets {
			s = strings.ReplaceAll(s, sec, "***")
			s = strings.ReplaceAll(s, url.QueryEscape(sec), "***")
		}
		return s
	}
	for i := range rep.Checks {
		c := &rep.Checks[i]
		c.Message, c.Hint = clean(c.Message), clean(c.Hint)
		for k, v := range c.Args {
			c.Args[k] = clean(v)
		}
	}
}
