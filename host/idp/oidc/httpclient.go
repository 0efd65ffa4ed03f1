package oidc

import (
	"errors"
	"io"
	"net/http"
	"time"
)

// MaxResponseBytes caps every response body read from an OpenID provider
// (discovery document, key set, token response).
const MaxResponseBytes = 1 << 20

// DefaultTimeout bounds each outbound call (discovery, key set, token).
const DefaultTimeout = 10 * time.Second

// ErrResponseTooLarge is returned when a provider's response body exceeds
// MaxResponseBytes.
var ErrResponseTooLarge = errors.New("oidc: provider response exceeds the size limit")

// NewHTTPClient returns the client used to talk to a provider: a total
// timeout per call, redirects never followed (a redirect answer is returned
// as is and then fails as a non-2xx answer), and response bodies capped at
// MaxResponseBytes.
func NewHTTPClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = timeout
	return &http.Client{
		Timeout:   timeout,
		Transport: &capTransport{next: tr, limit: MaxResponseBytes},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// capTransport limits the size of response bodies.
type capTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t *capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.limit {
		resp.Body.Close()
		return nil, ErrResponseTooLarge
	}
	resp.Body = &cappedBody{rc: resp.Body, left: t.limit}
	return resp, nil
}

// cappedBody reads at most left bytes and fails beyond that, so a
// truncated document is never mistaken for a complete one.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Probe for one more byte: exactly limit bytes is fine.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, ErrResponseTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
