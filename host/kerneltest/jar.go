package kerneltest

import (
	"net/http"
	"sync"
)

// Jar is a browser's cookies in front of a test kernel: Send adds them to
// a request and applies the answer's Set-Cookie lines (a cookie set with a
// negative Max-Age or an empty value is dropped). LastSet keeps the last
// Set-Cookie line of each name with its attributes, for tests of the
// attributes. Safe for concurrent use.
type Jar struct {
	k   *Kernel
	mu  sync.Mutex
	jar map[string]string
	set map[string]*http.Cookie
}

// NewJar returns an empty jar for k.
func (k *Kernel) NewJar() *Jar {
	return &Jar{k: k, jar: map[string]string{}, set: map[string]*http.Cookie{}}
}

// Send sends req with the jar's cookies and applies the answer's cookies.
func (j *Jar) Send(req *http.Request) Reply {
	j.k.T.Helper()
	j.mu.Lock()
	for name, v := range j.jar {
		req.AddCookie(&http.Cookie{Name: name, Value: v}) //nolint:gosec // G124: a request Cookie header carries names and values only
	}
	j.mu.Unlock()
	r := j.k.Send(req)
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, line := range r.Header.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			j.k.T.Fatalf("Set-Cookie %q: %v", line, err)
		}
		j.set[c.Name] = c
		if c.MaxAge < 0 || c.Value == "" {
			delete(j.jar, c.Name)
		} else {
			j.jar[c.Name] = c.Value
		}
	}
	return r
}

// Cookie returns the value the jar holds for name ("" when none).
func (j *Jar) Cookie(name string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.jar[name]
}

// SetCookie stores a value for name as if a browser held it; "" removes it.
func (j *Jar) SetCookie(name, value string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if value == "" {
		delete(j.jar, name)
		return
	}
	j.jar[name] = value
}

// LastSet returns the last Set-Cookie line seen for name, nil when none.
func (j *Jar) LastSet(name string) *http.Cookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.set[name]
}

// SetCount is the number of cookie names any answer has set or cleared.
func (j *Jar) SetCount() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.set)
}
