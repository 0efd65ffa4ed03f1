package outbound

import "net/netip"

// block is a refused range and why.
type block struct {
	prefix netip.Prefix
	reason string
}

func blocks(pairs ...string) []block {
	out := make([]block, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, block{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// blocked4 are the refused IPv4 ranges (IANA special-purpose registry,
// RFC 6890 and successors, less the globally reachable AS112 and AMT
// blocks), the more specific first.
var blocked4 = blocks(
	"0.0.0.0/32", "unspecified",
	"0.0.0.0/8", "this network",
	"10.0.0.0/8", "private",
	"100.64.0.0/10", "carrier-grade NAT",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local",
	"172.16.0.0/12", "private",
	"192.0.0.0/24", "IETF protocol assignments",
	"192.0.2.0/24", "documentation",
	"192.88.99.0/24", "6to4 relay anycast",
	"192.168.0.0/16", "private",
	"198.18.0.0/15", "benchmarking",
	"198.51.100.0/24", "documentation",
	"203.0.113.0/24", "documentation",
	"224.0.0.0/4", "multicast",
	"255.255.255.255/32", "broadcast",
	"240.0.0.0/4", "reserved",
)

// blocked6 are the refused IPv6 ranges inside and outside 2000::/3 that
// get a reason of their own (everything else outside 2000::/3 is refused
// as reserved), the more specific first. The IPv4-mapped range and the
// well-known NAT64 prefix are decoded before (Embedded).
var blocked6 = blocks(
	"::/128", "unspecified",
	"::1/128", "loopback",
	"::/96", "IPv4-compatible (deprecated)",
	"::ffff:0:0:0/96", "IPv4-translated",
	"64:ff9b:1::/48", "local-use NAT64",
	"100::/64", "discard-only",
	"2001::/32", "Teredo",
	"2001::/23", "IETF protocol assignments",
	"2001:db8::/32", "documentation",
	"2002::/16", "6to4",
	"3fff::/20", "documentation",
	"5f00::/16", "SRv6 segment identifiers",
	"fc00::/7", "unique local (private)",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local (deprecated)",
	"ff00::/8", "multicast",
)

var (
	globalUnicast = netip.MustParsePrefix("2000::/3")
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
)

// Embedded returns the IPv4 address an IPv6 address carries in one of the
// forms this package decodes: IPv4-mapped (::ffff:a.b.c.d), the well-known
// NAT64 prefix (64:ff9b::a.b.c.d) and ISATAP interface identifiers
// (…:0:5efe:a.b.c.d, with the u and g bits either way). ok is false for
// every other address (IPv4 ones included).
func Embedded(ip netip.Addr) (v4 netip.Addr, ok bool) {
	ip = ip.WithZone("")
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	if ip.Is4In6() {
		return ip.Unmap(), true
	}
	b := ip.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	if nat64.Contains(ip) {
		return last, true
	}
	if b[8]&^0x03 == 0 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe {
		return last, true
	}
	return netip.Addr{}, false
}

// Classify returns why ip is refused, or "" for a public unicast address
// (zones are ignored).
func Classify(ip netip.Addr) string {
	r, _ := judge(ip)
	return r
}

// judge returns why ip is refused ("" when it is not) and the address
// that was judged: the IPv4 address carried by a decoded form (mapped,
// NAT64, ISATAP in global unicast space), ip itself otherwise.
func judge(ip netip.Addr) (string, netip.Addr) {
	ip = ip.WithZone("")
	switch {
	case !ip.IsValid():
		return "invalid", ip
	case ip.Is4():
		return classify4(ip), ip
	case ip.Is4In6():
		v4 := ip.Unmap()
		return prefixed("IPv4-mapped ", classify4(v4)), v4
	case nat64.Contains(ip):
		v4, _ := Embedded(ip)
		return prefixed("NAT64 of ", classify4(v4)), v4
	}
	for _, b := range blocked6 {
		if b.prefix.Contains(ip) {
			return b.reason, ip
		}
	}
	if !globalUnicast.Contains(ip) {
		return "reserved (not global unicast)", ip
	}
	if v4, ok := Embedded(ip); ok {
		return prefixed("ISATAP of ", classify4(v4)), v4
	}
	return "", ip
}

func prefixed(p, reason string) string {
	if reason == "" {
		return ""
	}
	return p + reason
}

func classify4(ip netip.Addr) string {
	for _, b := range blocked4 {
		if b.prefix.Contains(ip) {
			return b.reason
		}
	}
	return ""
}
