package load

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestReadResponse(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		status    int
		keep      bool
	}{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, true},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\nTrailer: 1\r\n\r\n", 200, true},
		{"redirect", "HTTP/1.1 302 Found\r\nLocation: http://x/\r\ncontent-length: 0\r\n\r\n", 302, true},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", 204, true},
		{"close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", 200, false},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, false},
		{"until eof", "HTTP/1.1 200 OK\r\n\r\nbody until the end", 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Two answers back to back: the first must be consumed exactly.
			raw := tc.raw
			if tc.keep {
				raw += "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"
			}
			br := bufio.NewReader(strings.NewReader(raw))
			status, keep, err := readResponse(br)
			if err != nil || status != tc.status || keep != tc.keep {
				t.Fatalf("readResponse = %d, %v, %v; want %d, %v", status, keep, err, tc.status, tc.keep)
			}
			if tc.keep {
				if status, _, err := readResponse(br); err != nil || status != 201 {
					t.Fatalf("second answer = %d, %v", status, err)
				}
			}
		})
	}
	if _, _, err := readResponse(bufio.NewReader(strings.NewReader("garbage\r\n\r\n"))); err == nil {
		t.Fatal("a malformed status line was accepted")
	}
}

func TestRun(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"code":0}`)
	})
	mux.HandleFunc("GET /chunked", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprint(w, "part one ")
		w.(http.Flusher).Flush()
		_, _ = fmt.Fprint(w, "part two")
	})
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/json", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	auth := http.Header{"Authorization": {"Bearer t"}}
	for _, client := range []string{"raw", "nethttp"} {
		for _, tc := range []struct {
			name   string
			cfg    Config
			errors bool
		}{
			{"json", Config{URL: srv.URL + "/json", Header: auth}, false},
			{"chunked", Config{URL: srv.URL + "/chunked"}, false},
			{"post redirect", Config{URL: srv.URL + "/echo", Method: http.MethodPost, Body: []byte(`{"a":1}`), Expect: http.StatusFound}, false},
			{"unexpected status", Config{URL: srv.URL + "/json"}, true},
		} {
			t.Run(client+"/"+tc.name, func(t *testing.T) {
				cfg := tc.cfg
				cfg.Client, cfg.Connections, cfg.Duration, cfg.Warmup = client, 2, 200*time.Millisecond, -1
				measured := 0
				cfg.OnMeasure = func(bool) { measured++ }
				res, err := Run(context.Background(), cfg)
				if tc.errors {
					if err == nil || res.Errors == 0 || res.Statuses["401"] == 0 {
						t.Fatalf("Run = %+v, %v; want 401 errors", res, err)
					}
					return
				}
				if err != nil || res.Requests == 0 || res.Errors != 0 || res.P50Us <= 0 || res.P99Us < res.P50Us || res.RPS <= 0 {
					t.Fatalf("Run = %+v, %v", res, err)
				}
				if measured != 2 {
					t.Fatalf("OnMeasure called %d times, want 2", measured)
				}
			})
		}
	}
}

func TestPercentile(t *testing.T) {
	v := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for p, want := range map[float64]time.Duration{50: 5, 90: 9, 99: 10, 100: 10, 0: 1} {
		if got := Percentile(v, p); got != want {
			t.Errorf("Percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("Percentile(nil) != 0")
	}
}
