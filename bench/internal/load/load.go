// Package load is a closed-loop HTTP/1.1 load generator for loopback
// benchmarks: N keep-alive connections, each sending its next request as
// soon as the previous answer is read, for a fixed duration after a warm-up.
//
// The default client writes a pre-serialised request and parses the answer
// by hand (status line, Content-Length or chunked body). On a 2-core machine
// the generator shares the CPUs with the server under test, so the cheaper
// the client, the more of the machine the server gets and the less the
// generator flattens the difference between a fast and a slow server. The
// net/http client (Client "nethttp") is there to cross-check the numbers.
package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Config describes one load run.
type Config struct {
	// URL is an absolute http URL (https is not supported).
	URL    string
	Method string // default GET
	Body   []byte
	// Header holds extra request headers (Authorization, Content-Type...).
	Header http.Header
	// Connections is the number of concurrent keep-alive connections
	// (default 16).
	Connections int
	// Duration is the measured time (default 5 s), after Warmup (default
	// 1 s, negative for none) during which requests are sent but not
	// recorded.
	Duration, Warmup time.Duration
	// Expect is the status that counts as a success (default 200); any
	// other status is counted as an error.
	Expect int
	// Client is "raw" (default) or "nethttp".
	Client string
	// OnMeasure, when set, is called when the measured window starts and
	// when it ends (start true/false); the compare runner samples the
	// server's CPU time there.
	OnMeasure func(start bool)
}

// Result is the outcome of a run. Latencies are in microseconds.
type Result struct {
	Name        string           `json:"name,omitempty"`
	Method      string           `json:"method"`
	URL         string           `json:"url"`
	Client      string           `json:"client"`
	Connections int              `json:"connections"`
	Seconds     float64          `json:"seconds"`
	Requests    int64            `json:"requests"`
	Errors      int64            `json:"errors"`
	Statuses    map[string]int64 `json:"statuses,omitempty"`
	FirstError  string           `json:"firstError,omitempty"`
	RPS         float64          `json:"rps"`
	MeanUs      float64          `json:"meanUs"`
	P50Us       float64          `json:"p50Us"`
	P90Us       float64          `json:"p90Us"`
	P99Us       float64          `json:"p99Us"`
	MaxUs       float64          `json:"maxUs"`
	// ClientCPUSeconds is the generator process's user+system CPU time
	// during the measured window.
	ClientCPUSeconds float64 `json:"clientCpuSeconds"`
}

// worker state shared with Run.
type worker struct {
	lat      []time.Duration
	errors   int64
	statuses map[int]int64
	firstErr error
}

// Run executes the load described by cfg. It returns an error only when
// the configuration is unusable or no request at all succeeded.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Method == "" {
		cfg.Method = http.MethodGet
	}
	if cfg.Connections <= 0 {
		cfg.Connections = 16
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 5 * time.Second
	}
	if cfg.Warmup < 0 {
		cfg.Warmup = 0
	} else if cfg.Warmup == 0 {
		cfg.Warmup = time.Second
	}
	if cfg.Expect == 0 {
		cfg.Expect = http.StatusOK
	}
	if cfg.Client == "" {
		cfg.Client = "raw"
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return Result{}, fmt.Errorf("load: %q is not an absolute http URL", cfg.URL)
	}

	var do func(w *worker, start, measure, end time.Time)
	switch cfg.Client {
	case "raw":
		req := serialise(cfg, u)
		do = func(w *worker, start, measure, end time.Time) { runRaw(ctx, w, u.Host, req, cfg.Expect, measure, end) }
	case "nethttp":
		tr := &http.Transport{
			MaxIdleConns:        cfg.Connections,
			MaxIdleConnsPerHost: cfg.Connections,
			MaxConnsPerHost:     cfg.Connections,
			DisableCompression:  true,
			IdleConnTimeout:     time.Minute,
		}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr, Timeout: 30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		do = func(w *worker, start, measure, end time.Time) { runNetHTTP(ctx, w, client, cfg, measure, end) }
	default:
		return Result{}, fmt.Errorf("load: unknown client %q (raw, nethttp)", cfg.Client)
	}

	start := time.Now()
	measure := start.Add(cfg.Warmup)
	end := measure.Add(cfg.Duration)
	workers := make([]*worker, cfg.Connections)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{statuses: map[int]int64{}, lat: make([]time.Duration, 0, 4096)}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			do(w, start, measure, end)
		}()
	}
	// Sample the generator's own CPU time at the window's edges.
	var cpu0, cpu1 float64
	marks := make(chan struct{})
	go func() {
		defer close(marks)
		sleepUntil(ctx, measure)
		cpu0 = selfCPU()
		if cfg.OnMeasure != nil {
			cfg.OnMeasure(true)
		}
		sleepUntil(ctx, end)
		cpu1 = selfCPU()
		if cfg.OnMeasure != nil {
			cfg.OnMeasure(false)
		}
	}()
	wg.Wait()
	<-marks

	res := Result{Method: cfg.Method, URL: cfg.URL, Client: cfg.Client, Connections: cfg.Connections,
		Seconds: cfg.Duration.Seconds(), ClientCPUSeconds: cpu1 - cpu0}
	var all []time.Duration
	statuses := map[int]int64{}
	var firstErr error
	for _, w := range workers {
		all = append(all, w.lat...)
		res.Errors += w.errors
		for k, v := range w.statuses {
			statuses[k] += v
		}
		if firstErr == nil {
			firstErr = w.firstErr
		}
	}
	if len(statuses) > 0 {
		res.Statuses = map[string]int64{}
		for k, v := range statuses {
			res.Statuses[strconv.Itoa(k)] = v
		}
	}
	if firstErr != nil {
		res.FirstError = firstErr.Error()
	}
	res.Requests = int64(len(all))
	if len(all) == 0 {
		if firstErr == nil {
			return res, fmt.Errorf("load: no successful request to %s %s (errors %d)", cfg.Method, cfg.URL, res.Errors)
		}
		return res, fmt.Errorf("load: no successful request to %s %s (errors %d, first: %w)", cfg.Method, cfg.URL, res.Errors, firstErr)
	}
	slices.Sort(all)
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	res.RPS = float64(len(all)) / cfg.Duration.Seconds()
	res.MeanUs = us(sum / time.Duration(len(all)))
	res.P50Us = us(Percentile(all, 50))
	res.P90Us = us(Percentile(all, 90))
	res.P99Us = us(Percentile(all, 99))
	res.MaxUs = us(all[len(all)-1])
	return res, nil
}

// Percentile returns the p-th percentile (nearest rank) of sorted values.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100+0.5) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func sleepUntil(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

// selfCPU returns the process's user+system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func (w *worker) fail(err error) {
	w.errors++
	if w.firstErr == nil {
		w.firstErr = err
	}
}

func (w *worker) record(status, expect int, t0, t1, measure time.Time) {
	if t0.Before(measure) {
		return // warm-up
	}
	if status != expect {
		w.statuses[status]++
		w.fail(fmt.Errorf("HTTP %d, want %d", status, expect))
		return
	}
	w.lat = append(w.lat, t1.Sub(t0))
}

// serialise builds the raw request bytes once.
func serialise(cfg Config, u *url.URL) []byte {
	var b bytes.Buffer
	path := u.RequestURI()
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: adminkernel-bench/1\r\n", cfg.Method, path, u.Host)
	for k, vs := range cfg.Header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	if len(cfg.Body) > 0 || (cfg.Method != http.MethodGet && cfg.Method != http.MethodHead) {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(cfg.Body))
	}
	b.WriteString("\r\n")
	b.Write(cfg.Body)
	return b.Bytes()
}

// runRaw is one connection of the raw client.
func runRaw(ctx context.Context, w *worker, host string, req []byte, expect int, measure, end time.Time) {
	var conn net.Conn
	var br *bufio.Reader
	closeConn := func() {
		if conn != nil {
			_ = conn.Close()
			conn = nil
		}
	}
	defer closeConn()
	dialer := net.Dialer{Timeout: 5 * time.Second}
	for ctx.Err() == nil {
		t0 := time.Now()
		if !t0.Before(end) {
			return
		}
		if conn == nil {
			c, err := dialer.DialContext(ctx, "tcp", host)
			if err != nil {
				w.fail(err)
				time.Sleep(10 * time.Millisecond)
				continue
			}
			// Bound every request of the run: no request may hang past
			// the end by more than 10 s.
			_ = c.SetDeadline(end.Add(10 * time.Second))
			conn = c
			if br == nil {
				br = bufio.NewReaderSize(c, 32<<10)
			} else {
				br.Reset(c)
			}
			t0 = time.Now()
		}
		if _, err := conn.Write(req); err != nil {
			w.fail(err)
			closeConn()
			continue
		}
		status, keep, err := readResponse(br)
		t1 := time.Now()
		if err != nil {
			w.fail(err)
			closeConn()
			continue
		}
		w.record(status, expect, t0, t1, measure)
		if !keep {
			closeConn()
		}
	}
}

var errMalformed = errors.New("load: malformed HTTP response")

// readResponse reads one response and discards its body. keep is false when
// the server asked to close the connection.
func readResponse(br *bufio.Reader) (status int, keep bool, err error) {
	line, err := readLine(br)
	if err != nil {
		return 0, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, errMalformed
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, errMalformed
	}
	keep = line[7] == '1'
	length, chunked := int64(-1), false
	for {
		h, err := readLine(br)
		if err != nil {
			return 0, false, err
		}
		if len(h) == 0 {
			break
		}
		colon := bytes.IndexByte(h, ':')
		if colon < 0 {
			continue
		}
		name, val := h[:colon], bytes.TrimSpace(h[colon+1:])
		switch {
		case asciiEqualFold(name, "content-length"):
			n, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil || n < 0 {
				return 0, false, errMalformed
			}
			length = n
		case asciiEqualFold(name, "transfer-encoding"):
			chunked = bytes.Contains(bytes.ToLower(val), []byte("chunked"))
		case asciiEqualFold(name, "connection"):
			v := bytes.ToLower(val)
			if bytes.Contains(v, []byte("close")) {
				keep = false
			} else if bytes.Contains(v, []byte("keep-alive")) {
				keep = true
			}
		}
	}
	switch {
	case status < 200 || status == http.StatusNoContent || status == http.StatusNotModified:
	case chunked:
		if err := discardChunked(br); err != nil {
			return 0, false, err
		}
	case length >= 0:
		if _, err := br.Discard(int(length)); err != nil {
			return 0, false, err
		}
	default:
		// Body delimited by the end of the connection.
		if _, err := io.Copy(io.Discard, br); err != nil {
			return 0, false, err
		}
		keep = false
	}
	return status, keep, nil
}

// readLine returns a line without its CRLF; lines longer than the buffer
// are read whole but only their start is returned.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		head := bytes.Clone(line)
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n')
		}
		line = head
	}
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

func discardChunked(br *bufio.Reader) error {
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || n < 0 {
			return errMalformed
		}
		if n == 0 {
			for { // trailers up to the empty line
				t, err := readLine(br)
				if err != nil {
					return err
				}
				if len(t) == 0 {
					return nil
				}
			}
		}
		if _, err := br.Discard(int(n) + 2); err != nil {
			return err
		}
	}
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// runNetHTTP is one connection's worth of requests through net/http.
func runNetHTTP(ctx context.Context, w *worker, client *http.Client, cfg Config, measure, end time.Time) {
	rctx, cancel := context.WithDeadline(ctx, end.Add(10*time.Second))
	defer cancel()
	for ctx.Err() == nil {
		t0 := time.Now()
		if !t0.Before(end) {
			return
		}
		var body io.Reader
		if len(cfg.Body) > 0 {
			body = bytes.NewReader(cfg.Body)
		}
		req, err := http.NewRequestWithContext(rctx, cfg.Method, cfg.URL, body)
		if err != nil {
			w.fail(err)
			return
		}
		for k, vs := range cfg.Header {
			req.Header[k] = vs
		}
		resp, err := client.Do(req)
		if err != nil {
			w.fail(err)
			continue
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t1 := time.Now()
		if err != nil {
			w.fail(err)
			continue
		}
		w.record(resp.StatusCode, cfg.Expect, t0, t1, measure)
	}
}
