package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseRange reads one entry of Service:Outbound:AllowedRanges: a CIDR
// range ("10.20.0.0/16", "fd00:1::/64") without host bits, or a single
// address ("10.0.0.5", "::1"; no zone). An IPv4-mapped range
// (::ffff:10.0.0.0/104) is returned as the IPv4 range it means.
func ParseRange(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR range or an IP address", s)
		}
		if p.Masked() != p {
			return netip.Prefix{}, fmt.Errorf("%q has host bits set (the range is %s)", s, p.Masked())
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR range or an IP address", s)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p, nil
}

// Prefixes returns AllowedRanges parsed (entries that do not parse, which
// Validate refuses, are left out).
func (o Outbound) Prefixes() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(o.AllowedRanges))
	for _, s := range o.AllowedRanges {
		if p, err := ParseRange(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// validateOutbound checks Service:Outbound:AllowedRanges.
func (c *Config) validateOutbound(p *problems) {
	for i, s := range c.Service.Outbound.AllowedRanges {
		if _, err := ParseRange(s); err != nil {
			p.add("Service:Outbound:AllowedRanges:%d: %v (for example 10.20.0.0/16, fd00:1::/64 or 192.168.1.5)", i, err)
		}
	}
}
