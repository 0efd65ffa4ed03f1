package outbound_test

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"strings"
)

// The reference classification: written apart from the package (integer
// masks over the address's bits, no netip.Prefix, no shared table) so that
// the tests and the fuzz targets compare two implementations.

// ref4 reports whether the IPv4 address v is refused.
func ref4(v uint32) bool {
	in := func(base uint32, bits uint) bool { return v>>(32-bits) == base>>(32-bits) }
	return in(0x00000000, 8) || // this network, unspecified
		in(0x0a000000, 8) || // 10/8
		in(0x64400000, 10) || // 100.64/10
		in(0x7f000000, 8) || // 127/8
		in(0xa9fe0000, 16) || // 169.254/16
		in(0xac100000, 12) || // 172.16/12
		in(0xc0000000, 24) || // 192.0.0/24
		in(0xc0000200, 24) || // 192.0.2/24
		in(0xc0586300, 24) || // 192.88.99/24
		in(0xc0a80000, 16) || // 192.168/16
		in(0xc6120000, 15) || // 198.18/15
		in(0xc6336400, 24) || // 198.51.100/24
		in(0xcb007100, 24) || // 203.0.113/24
		in(0xe0000000, 4) || // multicast
		in(0xf0000000, 4) // reserved, broadcast
}

// refCarried returns the IPv4 address a decoded IPv6 form carries
// (mapped, well-known NAT64, ISATAP inside the unblocked global unicast
// space) and whether ref judges the address by it.
func refCarried(b [16]byte) (uint32, bool) {
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	v4 := uint32(lo) //nolint:gosec // the low 32 bits on purpose
	switch {
	case hi == 0 && lo>>32 == 0xffff:
		return v4, true
	case hi == 0x0064ff9b00000000 && lo>>32 == 0:
		return v4, true
	case ref6Prefix(hi) == "" && (lo>>32)&^0x0300_0000 == 0x5efe:
		return v4, true
	}
	return 0, false
}

// ref6Prefix judges the upper half of an IPv6 address that is not a
// decoded form: "" when the prefix is unicast global space not refused.
func ref6Prefix(hi uint64) string {
	switch {
	case hi>>61 != 1: // outside 2000::/3
		return "outside 2000::/3"
	case hi>>41 == 0x2001_0000_0000_0000>>41: // 2001::/23
		return "2001::/23"
	case hi>>32 == 0x2001_0db8: // documentation
		return "2001:db8::/32"
	case hi>>48 == 0x2002: // 6to4
		return "2002::/16"
	case hi>>44 == 0x3fff0: // documentation
		return "3fff::/20"
	}
	return ""
}

// refBlocked reports whether ref refuses a (zones ignored).
func refBlocked(a netip.Addr) bool {
	if a.Is4() {
		return ref4(binary.BigEndian.Uint32(a.AsSlice()))
	}
	b := a.As16()
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	if hi == 0 && lo>>32 == 0xffff || hi == 0x0064ff9b00000000 && lo>>32 == 0 {
		return ref4(uint32(lo)) //nolint:gosec // the low 32 bits on purpose
	}
	if ref6Prefix(hi) != "" {
		return true
	}
	if v4, ok := refCarried(b); ok {
		return ref4(v4)
	}
	return false
}

// refInet parses host the way inet_aton (and the WHATWG URL parser) reads
// IPv4: one to four dot-separated parts (one trailing dot allowed), each
// decimal, octal (leading 0) or hexadecimal (0x), the last part filling
// the remaining bytes. ok is false for anything else.
func refInet(host string) (uint32, bool) {
	host = strings.TrimSuffix(host, ".")
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return 0, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
			p, base = p[2:], 16
			if p == "" {
				p = "0"
			}
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		if p == "" || strings.ContainsAny(p, "+-_") {
			return 0, false
		}
		v, err := strconv.ParseUint(p, base, 64)
		if err != nil {
			return 0, false
		}
		vals[i] = v
	}
	var out uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return 0, false
		}
		out |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return 0, false
	}
	return uint32(out | last), true //nolint:gosec // bounded above
}
