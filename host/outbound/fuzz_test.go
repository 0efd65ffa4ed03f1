package outbound_test

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/outbound"
)

// form builds an address from the fuzzer's input in one of the notations
// the guard must see through: plain IPv4, IPv4-mapped, IPv4-compatible,
// NAT64 (well-known and local-use), 6to4, Teredo, ISATAP, IPv4-translated
// or any 16 bytes; form/10 odd adds a zone to an IPv6 address.
func form(kind uint8, v4 uint32, raw []byte) netip.Addr {
	var b [16]byte
	copy(b[:], raw)
	var four [4]byte
	binary.BigEndian.PutUint32(four[:], v4)
	switch kind % 10 {
	case 0:
		return netip.AddrFrom4(four)
	case 1: // ::ffff:a.b.c.d
		b = [16]byte{10: 0xff, 11: 0xff}
		copy(b[12:], four[:])
	case 2: // ::a.b.c.d
		b = [16]byte{}
		copy(b[12:], four[:])
	case 3: // 64:ff9b::a.b.c.d
		b = [16]byte{1: 0x64, 2: 0xff, 3: 0x9b}
		copy(b[12:], four[:])
	case 4: // 64:ff9b:1:…
		b[0], b[1], b[2], b[3], b[4], b[5] = 0, 0x64, 0xff, 0x9b, 0, 1
		copy(b[12:], four[:])
	case 5: // 2002:a.b.c.d::
		b[0], b[1] = 0x20, 0x02
		copy(b[2:6], four[:])
	case 6: // Teredo 2001:0:server:flags:port:client^ffff
		b[0], b[1], b[2], b[3] = 0x20, 0x01, 0, 0
		copy(b[4:8], four[:])
		for i := range 4 {
			b[12+i] = ^four[i]
		}
	case 7: // ISATAP …:0:5efe:a.b.c.d or …:200:5efe:a.b.c.d
		b[8], b[9], b[10], b[11] = b[8]&0x03, 0, 0x5e, 0xfe
		copy(b[12:], four[:])
	case 8: // ::ffff:0:a.b.c.d
		b = [16]byte{8: 0xff, 9: 0xff}
		copy(b[12:], four[:])
	}
	a := netip.AddrFrom16(b)
	if kind/10%2 == 1 {
		a = a.WithZone("eth0")
	}
	return a
}

// refContains is netip.Prefix.Contains written out: same family, the
// first bits equal (zones ignored).
func refContains(p netip.Prefix, a netip.Addr) bool {
	if !p.IsValid() || p.Addr().Is4() != a.Is4() {
		return false
	}
	x, y := p.Addr().AsSlice(), a.WithZone("").AsSlice()
	bits := p.Bits()
	for i := 0; bits > 0; i++ {
		n := min(bits, 8)
		mask := byte(0xff << (8 - n))
		if x[i]&mask != y[i]&mask {
			return false
		}
		bits -= n
	}
	return true
}

// FuzzPolicy: the policy accepts an address exactly when the reference
// classification does (no accepted address in a refused range, no refused
// public one), through Check, Control (the dialer's textual form) and
// CheckHost; with an allowed range, exactly the refused addresses in it
// (or carrying an IPv4 address in it, for the decoded forms) are added.
func FuzzPolicy(f *testing.F) {
	f.Add(uint8(0), uint32(0x7f000001), []byte{}, []byte{})
	f.Add(uint8(2), uint32(0x7f000001), []byte{}, []byte{})
	f.Add(uint8(1), uint32(0x0a000001), []byte{}, []byte{8, 10, 0, 0, 0})
	f.Add(uint8(3), uint32(0xa9fea9fe), []byte{}, []byte{16, 169, 254, 0, 0})
	f.Add(uint8(4), uint32(0x08080808), []byte{0x20, 0x01}, []byte{})
	f.Add(uint8(5), uint32(0x7f000001), []byte{}, []byte{})
	f.Add(uint8(6), uint32(0x7f000001), []byte{}, []byte{})
	f.Add(uint8(7), uint32(0x7f000001), []byte{0x26, 0x06, 0x47, 0, 0, 0, 0, 0, 2}, []byte{})
	f.Add(uint8(7), uint32(0x08080808), []byte{0x26, 0x06, 0x47}, []byte{})
	f.Add(uint8(8), uint32(0x08080808), []byte{}, []byte{})
	f.Add(uint8(19), uint32(0), []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, []byte{})
	f.Add(uint8(9), uint32(0), []byte{0x26, 0x06, 0x47, 0x00, 0x47, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x11, 0x11}, []byte{})
	f.Add(uint8(9), uint32(0), []byte{0x20, 0x01, 0x0d, 0xb8}, []byte{})
	f.Add(uint8(9), uint32(0), []byte{0x3f, 0xff, 0x0f}, []byte{})
	f.Fuzz(func(t *testing.T, kind uint8, v4 uint32, raw, allow []byte) {
		a := form(kind, v4, raw)
		blocked := refBlocked(a.WithZone(""))
		var p outbound.Policy
		if err := p.Check(a); (err != nil) != blocked {
			t.Fatalf("Check(%s) = %v, reference blocked %v", a, err, blocked)
		}
		if err := p.Control("tcp", netip.AddrPortFrom(a, 443).String(), nil); (err != nil) != blocked {
			t.Fatalf("Control(%s) = %v, reference blocked %v", a, err, blocked)
		}
		host := a.String()
		if a.Is6() {
			host = "[" + host + "]"
		}
		if err := p.CheckHost(host); (err != nil) != blocked {
			t.Fatalf("CheckHost(%s) = %v, reference blocked %v", host, err, blocked)
		}
		if len(allow) < 5 {
			return
		}
		var pa netip.Addr
		if len(allow) >= 17 {
			pa = netip.AddrFrom16([16]byte(allow[1:17]))
		} else {
			pa = netip.AddrFrom4([4]byte(allow[1:5]))
		}
		pr, err := pa.Prefix(int(allow[0]) % (pa.BitLen() + 1))
		if err != nil {
			t.Fatal(err)
		}
		p.Allowed = []netip.Prefix{pr}
		want := !blocked || refContains(pr, a)
		if c, ok := refCarried(a.WithZone("").As16()); ok && a.Is6() {
			var four [4]byte
			binary.BigEndian.PutUint32(four[:], c)
			want = want || refContains(pr, netip.AddrFrom4(four))
		}
		if err := p.Check(a); (err == nil) != want {
			t.Fatalf("Check(%s) with %s allowed = %v, reference allowed %v", a, pr, err, want)
		}
	})
}

// FuzzCheckHost: a host CheckHost accepts never denotes a refused address
// in a lenient reading (inet_aton, the WHATWG URL parser: decimal, octal,
// hexadecimal, one to four parts), and a host ending in a number is
// accepted only as a canonical dotted-quad.
func FuzzCheckHost(f *testing.F) {
	for _, s := range []string{"0x7f.1", "2130706433", "0177.0.0.1", "127.1", "127.0.0.1.", "example.com", "8.8.8.8",
		"[::127.0.0.1]", "[::ffff:7f00:1]", "0x08.8.8.8", "1.2.3.4.5", "a.0x", "0X7F000001", "[fe80::1%25lo]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		var p outbound.Policy
		if p.CheckHost(host) != nil {
			return
		}
		if v, ok := refInet(host); ok && ref4(v) {
			t.Fatalf("CheckHost(%q) accepted a host that reads as a refused IPv4 address (%08x)", host, v)
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if a, err := netip.ParseAddr(inner); err == nil && refBlocked(a.WithZone("")) {
			t.Fatalf("CheckHost(%q) accepted a refused address", host)
		}
		if outbound.EndsInNumber(host) {
			a, err := netip.ParseAddr(host)
			if err != nil || !a.Is4() || a.String() != host {
				t.Fatalf("CheckHost(%q) accepted a numeric host that is not a canonical IPv4 address", host)
			}
		}
	})
}
