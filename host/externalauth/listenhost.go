package externalauth

import (
	"net"
	"strconv"
	"strings"
)

// hostAllowed reports whether a request's Host (host or host:port; the
// port defaults to the scheme's) may choose the redirect URI when
// CallbackBaseUrl is unset outside Production: it must name the address the
// kernel listens on, either the configured listen address (listen, a
// host:port from Service:Http:ListenAddress) or the local address of the
// connection the request arrived on (local). A loopback or wildcard address
// also accepts the loopback names (localhost, 127.0.0.1, ::1) on the same
// port. Any other name (Host: evil.example) is refused: a phishing page
// could otherwise have a developer's browser register a redirect URI on a
// host of its choosing.
func hostAllowed(scheme, host, listen string, local net.Addr) bool {
	name, port, ok := splitHost(scheme, host)
	if !ok {
		return false
	}
	if lh, lp, err := net.SplitHostPort(listen); err == nil && lp == port && sameHost(name, lh) {
		return true
	}
	if a, isTCP := local.(*net.TCPAddr); isTCP && a != nil && a.Port > 0 && strconv.Itoa(a.Port) == port {
		if ip := a.IP; ip != nil && !ip.IsUnspecified() && sameHost(name, ip.String()) {
			return true
		}
	}
	return false
}

// splitHost splits a Host value into a lower-case name (IPv6 without
// brackets) and a port, defaulting the port by scheme.
func splitHost(scheme, host string) (name, port string, ok bool) {
	if h, p, err := net.SplitHostPort(host); err == nil {
		name, port = h, p
	} else {
		name = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		switch scheme {
		case "https":
			port = "443"
		default:
			port = "80"
		}
	}
	name = strings.ToLower(name)
	return name, port, name != "" && port != ""
}

// sameHost compares a requested name with a listen host: equal (ignoring
// case, IP literals by value), or both loopback, or a wildcard listen host
// and a loopback name.
func sameHost(name, listenHost string) bool {
	listenHost = strings.ToLower(listenHost)
	if name == listenHost {
		return true
	}
	if a, b := net.ParseIP(name), net.ParseIP(listenHost); a != nil && b != nil && a.Equal(b) {
		return true
	}
	return isLoopback(name) && (isLoopback(listenHost) || isWildcard(listenHost))
}

func isLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func isWildcard(h string) bool {
	if h == "" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsUnspecified()
}
