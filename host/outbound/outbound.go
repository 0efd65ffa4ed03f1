// Package outbound guards the connections the kernel opens on an
// administrator's behalf (Http jobs today, webhooks next): every address is
// judged when the socket is about to connect — after name resolution, on
// the very address handed to connect(2) — so a name resolving to a private
// address, a name re-resolving differently between a check and the use
// (DNS rebinding) and every redirect hop are covered by the same check.
//
// What is refused (unless the operator allows a range: Policy.Allowed,
// Service:Outbound:AllowedRanges): every address that is not public
// unicast — loopback, private (RFC 1918, fc00::/7), link-local
// (169.254/16 with the cloud metadata endpoints, fe80::/10), CGNAT
// 100.64/10, "this network" 0/8, the IETF, documentation, benchmarking,
// 6to4-relay and reserved IPv4 blocks, broadcast, multicast, the
// unspecified addresses, the IPv6 discard, documentation, SRv6, site-local
// and IETF-assignment blocks and everything outside 2000::/3.
//
// IPv6 forms that carry an IPv4 address are handled in one of two ways:
//
//   - decoded and judged as that IPv4 address, where the translation is
//     standard and in use: IPv4-mapped ::ffff:a.b.c.d (a dual-stack socket
//     connects to the IPv4 address), the well-known NAT64 prefix
//     64:ff9b::/96 (RFC 6052; the translator connects to the IPv4 address,
//     so a public one stays reachable from IPv6-only hosts) and ISATAP
//     interface identifiers (…:0:5efe:a.b.c.d, RFC 5214);
//   - refused as a whole, where the form is deprecated or its IPv4 address
//     cannot be located reliably: IPv4-compatible ::a.b.c.d (::/96,
//     RFC 4291 §2.5.5.1, with :: and ::1), IPv4-translated
//     ::ffff:0:a.b.c.d (::ffff:0:0:0/96), the local-use NAT64 prefix
//     64:ff9b:1::/48 (RFC 8215: the operator chooses where the IPv4 address
//     sits), 6to4 2002::/16 (RFC 7526) and Teredo 2001::/32 (inside the IETF
//     protocol assignments 2001::/23, all refused).
//
// Guarded HTTP clients never use a proxy: a proxy from the environment
// (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) would connect on the kernel's behalf
// to an address this package never sees.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/adminkernel/kernel/config"
)

// ErrBlocked is the cause of every refusal (errors.Is).
var ErrBlocked = errors.New("blocked")

// BlockedError is a refused address and why.
type BlockedError struct {
	Addr   netip.Addr
	Reason string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("blocked: address %s is not public (%s)", e.Addr, e.Reason)
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Policy decides which addresses guarded connections may reach. The zero
// value refuses every non-public address.
type Policy struct {
	// Allowed are the ranges the operator allows despite the rules (a
	// private API network, say). An address is allowed when it is in one
	// of them, or when the IPv4 address it was judged by (the decoded
	// forms: mapped, NAT64, ISATAP) is.
	Allowed []netip.Prefix
	// AllowAll switches the address check off (Service:Job:HttpAllowPrivate,
	// kept for compatibility: prefer Allowed).
	AllowAll bool
	// Resolver resolves names for the dialers built here (nil: the
	// default resolver). The resolver's own connections (to the DNS
	// servers) are not guarded.
	Resolver *net.Resolver
}

// FromConfig returns the policy of Service:Outbound (the allowed ranges;
// config.Validate has refused malformed entries).
func FromConfig(o config.Outbound) Policy {
	return Policy{Allowed: o.Prefixes()}
}

// Check returns nil when ip may be connected to, a *BlockedError otherwise.
func (p Policy) Check(ip netip.Addr) error {
	if p.AllowAll {
		return nil
	}
	ip = ip.WithZone("")
	reason, judged := judge(ip)
	if reason == "" || p.allowed(ip) || judged != ip && p.allowed(judged) {
		return nil
	}
	return &BlockedError{Addr: ip, Reason: reason}
}

func (p Policy) allowed(ip netip.Addr) bool {
	for _, r := range p.Allowed {
		if r.Contains(ip) {
			return true
		}
	}
	return false
}

// CheckHost judges the host of a URL before anything is resolved: an IP
// literal is checked like a dialled address, and a name that ends in a
// number but is not a canonical dotted-quad ("0x7f.1", "2130706433",
// "127.1", "0177.0.0.1": forms that some resolvers and every browser read
// as IPv4) is refused. Other names pass; their addresses are checked when
// they are dialled.
func (p Policy) CheckHost(host string) error {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := netip.ParseAddr(h); err == nil {
		return p.Check(ip)
	}
	if EndsInNumber(h) {
		return fmt.Errorf("%w: host %q is a numeric form that is not a canonical IPv4 address", ErrBlocked, host)
	}
	return nil
}

// EndsInNumber is the WHATWG URL standard's "ends in a number" test: the
// last label (a trailing dot ignored) is decimal digits or a 0x-prefixed
// hexadecimal number, so a browser would parse the host as IPv4.
func EndsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	last := labels[len(labels)-1]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return false
}

// Control is a net.Dialer Control function: it refuses the socket unless
// its address may be reached. It runs after name resolution and before
// connect(2), once for every address the dialer tries.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	switch network {
	case "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6":
	default:
		return fmt.Errorf("%w: network %q", ErrBlocked, network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: address %q", ErrBlocked, address)
	}
	return p.Check(ap.Addr())
}

// Dialer returns a copy of base (nil: a dialer with a 10 s timeout) that
// checks every address before it connects, then runs base's own Control
// or ControlContext. Its Resolver is p.Resolver when set.
func (p Policy) Dialer(base *net.Dialer) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if base != nil {
		c := *base
		d = &c
	}
	ctlCtx, ctl := d.ControlContext, d.Control
	d.Control = nil
	d.ControlContext = func(ctx context.Context, network, address string, c syscall.RawConn) error {
		if err := p.Control(network, address, c); err != nil {
			return err
		}
		if ctlCtx != nil {
			return ctlCtx(ctx, network, address, c)
		}
		if ctl != nil {
			return ctl(network, address, c)
		}
		return nil
	}
	if p.Resolver != nil {
		d.Resolver = p.Resolver
	}
	return d
}

// DialContext returns a dial function through Dialer(base), for transports
// and clients that take one.
func (p Policy) DialContext(base *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	return p.Dialer(base).DialContext
}

// Transport returns an HTTP transport whose every connection goes through
// the policy's dialer and which never uses a proxy. Callers set their own
// timeouts and limits on it as needed.
func (p Policy) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            p.DialContext(nil),
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  60 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		IdleConnTimeout:        90 * time.Second,
		MaxIdleConns:           16,
	}
}
