package request

import (
	"bytes"
	"fmt"
	"net"
	"strings"

	"github.com/gofiber/fiber/v3"
)

// ClientIP returns the client address of a request: the TCP peer, or, when
// the peer is one of the trusted proxies, the right-most address of
// X-Forwarded-For that is not itself trusted (several X-Forwarded-For
// headers are read as one list). It returns "" when the peer is unknown.
func ClientIP(c fiber.Ctx, trusted []*net.IPNet) string {
	rc := c.RequestCtx()
	var xff string
	if len(trusted) > 0 {
		if vals := rc.Request.Header.PeekAll(fiber.HeaderXForwardedFor); len(vals) > 0 {
			xff = string(bytes.Join(vals, []byte{','}))
		}
	}
	return clientIP(rc.RemoteIP(), xff, trusted)
}

// clientIP is ClientIP on plain values.
func clientIP(peer net.IP, xff string, trusted []*net.IPNet) string {
	if peer == nil {
		return ""
	}
	if xff == "" || !isTrusted(peer, trusted) {
		return peer.String()
	}
	// Walk from the right: each hop was appended by the proxy to its right,
	// starting with our trusted peer.
	client := peer
	hops := strings.Split(xff, ",")
	for i := len(hops) - 1; i >= 0; i-- {
		ip := parseHop(hops[i])
		if ip == nil {
			// Not written by a proxy we trust: stop at the last hop we
			// could vouch for.
			break
		}
		client = ip
		if !isTrusted(ip, trusted) {
			break
		}
	}
	return client.String()
}

// parseHop parses one X-Forwarded-For element: an address, optionally with
// a port ("1.2.3.4:5", "[::1]:5") or brackets.
func parseHop(s string) net.IP {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if ip := net.ParseIP(s); ip != nil {
		return ip
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		return net.ParseIP(host)
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		return net.ParseIP(s[1 : len(s)-1])
	}
	return nil
}

func isTrusted(ip net.IP, trusted []*net.IPNet) bool {
	for _, n := range trusted {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// ParseTrusted parses Service:Http:TrustedProxies: IP addresses (a single
// host) and CIDR blocks. Blank entries are skipped.
func ParseTrusted(entries []string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			_, n, err := net.ParseCIDR(e)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: not an IP address or CIDR block", e)
			}
			out = append(out, n)
			continue
		}
		ip := net.ParseIP(e)
		if ip == nil {
			return nil, fmt.Errorf("trusted proxy %q: not an IP address or CIDR block", e)
		}
		if v4 := ip.To4(); v4 != nil {
			out = append(out, &net.IPNet{IP: v4, Mask: net.CIDRMask(32, 32)})
		} else {
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(128, 128)})
		}
	}
	return out, nil
}
