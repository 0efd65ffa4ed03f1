// Package outboundtest gives tests of guarded outbound connections a
// resolver whose answers they choose: a DNS server on the loopback,
// answering A and AAAA questions from a function, and a *net.Resolver
// that asks only it.
package outboundtest

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Answer returns the addresses of name (lower case, without the trailing
// dot) for the n-th question about it (n counts from 1, A and AAAA
// questions separately), so a test can change the answer between two
// resolutions (DNS rebinding). IPv4 addresses answer A questions, the
// others AAAA questions.
type Answer func(name string, n int) []netip.Addr

// Resolver starts a DNS server answering from answer and returns a
// resolver that uses only it (the pure-Go resolver; /etc/hosts still
// applies first). The server stops when the test ends.
func Resolver(t testing.TB, answer Answer) *net.Resolver {
	t.Helper()
	var lc net.ListenConfig
	pc, err := lc.ListenPacket(context.Background(), "udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	s := &server{answer: answer, asked: map[string]int{}}
	go s.serve(pc)
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// Static answers every question about a name with the same addresses.
func Static(names map[string][]string) Answer {
	return func(name string, _ int) []netip.Addr {
		var out []netip.Addr
		for _, s := range names[name] {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
}

type server struct {
	answer Answer
	mu     sync.Mutex
	asked  map[string]int
}

const (
	typeA    = 1
	typeAAAA = 28
)

func (s *server) serve(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if out := s.reply(buf[:n]); out != nil {
			_, _ = pc.WriteTo(out, from)
		}
	}
}

// reply answers one query: the header and question copied, then one
// record per address of the asked type (NOERROR with no record for a name
// without addresses of that type).
func (s *server) reply(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	var labels []string
	i := 12
	for {
		if i >= len(q) {
			return nil
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > 63 || i+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i:i+l]))
		i += l
	}
	if i+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i : i+2])
	question := q[12 : i+4]
	name := strings.ToLower(strings.Join(labels, "."))

	s.mu.Lock()
	key := name + "/" + strconv.Itoa(int(qtype))
	s.asked[key]++
	n := s.asked[key]
	s.mu.Unlock()

	var records [][]byte
	for _, a := range s.answer(name, n) {
		switch {
		case qtype == typeA && a.Is4():
			b := a.As4()
			records = append(records, b[:])
		case qtype == typeAAAA && !a.Is4():
			b := a.As16()
			records = append(records, b[:])
		}
	}
	out := make([]byte, 12, 12+len(question)+len(records)*28)
	copy(out, q[:2])                                          // id
	binary.BigEndian.PutUint16(out[2:], 0x8180)               // response, recursion desired and available, NOERROR
	binary.BigEndian.PutUint16(out[4:], 1)                    // questions
	binary.BigEndian.PutUint16(out[6:], uint16(len(records))) //nolint:gosec // a handful of records
	out = append(out, question...)
	for _, rd := range records {
		out = append(out, 0xc0, 12) // the name: a pointer to the question's
		out = binary.BigEndian.AppendUint16(out, qtype)
		out = binary.BigEndian.AppendUint16(out, 1)               // IN
		out = binary.BigEndian.AppendUint32(out, 0)               // TTL 0: never cached
		out = binary.BigEndian.AppendUint16(out, uint16(len(rd))) //nolint:gosec // 4 or 16
		out = append(out, rd...)
	}
	return out
}
