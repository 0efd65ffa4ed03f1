//go:build !unit

package job_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/job"
)

// connCounter is an HTTP server on 127.0.0.1 that counts the connections
// it accepts (ConnState new), whatever happens to them afterwards.
type connCounter struct {
	port  string
	conns atomic.Int32
}

func countingServer(t *testing.T, h http.HandlerFunc) *connCounter {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &connCounter{}
	_, c.port, _ = net.SplitHostPort(l.Addr().String())
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: h, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return c
}

// guardForms are hosts in every refused form; the ones that are the
// loopback in disguise point at the counting server through its port.
var guardForms = []string{
	"127.0.0.1", "[::1]", "0.0.0.0",
	"[::127.0.0.1]",                         // IPv4-compatible
	"[::ffff:7f00:1]", "[::ffff:127.0.0.1]", // IPv4-mapped
	"0x7f.1", "2130706433", "0177.0.0.1", "127.1", "0x7f000001", // inet_aton forms
	"[64:ff9b::7f00:1]", "[64:ff9b:1::7f00:1]", // NAT64
	"[2002:7f00:1::1]",         // 6to4
	"[2001:0:7f00:1::1]",       // Teredo
	"[2001:4860::5efe:7f00:1]", // ISATAP
	"[fe80::1%25lo]", "169.254.169.254", "[fd00::1]", "10.0.0.1", "172.16.0.1", "192.168.0.1",
	"100.64.0.1", "192.0.0.170", "192.0.2.1", "198.18.0.1", "198.51.100.1", "203.0.113.1",
	"224.0.0.1", "[ff02::1]", "240.0.0.1", "255.255.255.255",
	"[2001:db8::1]", "[100::1]", "[fec0::1]",
}

func allowHosts(hosts ...string) []string {
	env := make([]string, 0, len(hosts))
	for i, h := range hosts {
		env = append(env, fmt.Sprintf("Service__Job__HttpAllowedHosts__%d=%s", i, strings.ReplaceAll(h, "%25", "%")))
	}
	return env
}

// TestHTTPJobOutboundGuard: an Http job pointed at a refused address in
// any form is refused with 47009 when saved; one whose stored URL names
// such an address (saved before the rules changed, written around the
// API) or a name resolving to loopback fails its run with the guard's
// refusal; none of them ever connects (the counting server on 127.0.0.1
// accepts nothing), while the same server is reached once the operator
// allows 127.0.0.1 in Service:Outbound:AllowedRanges.
func TestHTTPJobOutboundGuard(t *testing.T) {
	srv := countingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("reached")) })
	k, tok := startKernel(t, allowHosts(append([]string{"localhost"}, guardForms...)...)...)
	httpJob := func(code, url string) map[string]any {
		return with(echoJob(code), "handlerKind", job.HandlerHTTP, "handlerName", "", "httpUrl", url)
	}
	for i, h := range guardForms {
		url := "http://" + h + ":" + srv.port + "/"
		if r := k.Do("POST", base, tok, httpJob(fmt.Sprintf("g%d", i), url)); r.Code != int(errcode.JobHttpUrlBlocked) {
			t.Errorf("save %s = HTTP %d code %d, want 47009", url, r.Status, r.Code)
		}
	}

	// A name: accepted when saved, refused when its address is dialled.
	var id, runID int64
	k.Do("POST", base, tok, httpJob("byname", "http://localhost:"+srv.port+"/")).Expect(t, "save a name", 200, 0).Decode(t, &id)
	runID = runNow(t, k, tok, fmt.Sprintf("%s/%d/run", base, id), "run")
	l := waitRun(t, k, tok, runID, job.RunFailed, 10*time.Second)
	if l.ErrorMessage == nil || !strings.Contains(*l.ErrorMessage, "blocked") {
		t.Fatalf("run of a name resolving to loopback: %+v", l)
	}

	// Every form stored around the API: the run refuses it too.
	for _, h := range guardForms {
		url := "http://" + h + ":" + srv.port + "/"
		k.Ent().SysJob.UpdateOneID(id).SetHTTPURL(url).ExecX(context.Background())
		runID = runNow(t, k, tok, fmt.Sprintf("%s/%d/run", base, id), "run "+url)
		l := waitRun(t, k, tok, runID, job.RunFailed, 10*time.Second)
		if l.ErrorMessage == nil || !strings.Contains(*l.ErrorMessage, "blocked") {
			t.Errorf("run of %s: %+v", url, l)
		}
	}
	if n := srv.conns.Load(); n != 0 {
		t.Fatalf("the loopback server accepted %d connections", n)
	}

	// The operator's range opens exactly 127.0.0.1: the same name is
	// reached, the disguised forms of other ranges stay refused.
	k2, tok2 := startKernel(t, append(allowHosts("localhost", "[::127.0.0.1]", "[2002:7f00:1::1]", "127.0.0.2"),
		"Service__Outbound__AllowedRanges__0=127.0.0.1/32")...)
	k2.Do("POST", base, tok2, httpJob("byname", "http://localhost:"+srv.port+"/")).Expect(t, "save", 200, 0).Decode(t, &id)
	runID = runNow(t, k2, tok2, fmt.Sprintf("%s/%d/run", base, id), "run")
	if l := waitRun(t, k2, tok2, runID, job.RunSuccess, 10*time.Second); l.Output == nil || !strings.Contains(*l.Output, "reached") {
		t.Fatalf("an allowed range: %+v", l)
	}
	if srv.conns.Load() == 0 {
		t.Fatal("the allowed run did not reach the server")
	}
	for _, h := range []string{"[::127.0.0.1]", "[2002:7f00:1::1]", "127.0.0.2"} {
		k2.Do("POST", base, tok2, httpJob("still", "http://"+h+":"+srv.port+"/")).ExpectCode(t, h+" with 127.0.0.1 allowed", errcode.JobHttpUrlBlocked)
	}
}

// TestHTTPJobRedirectToPrivate: an allowed server (its address opened by
// the operator's range) redirecting to the cloud metadata address or to
// another loopback address: the run fails and the target is never
// connected to.
func TestHTTPJobRedirectToPrivate(t *testing.T) {
	target := countingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("secret")) })
	for _, to := range []string{"http://169.254.169.254/latest/meta-data/", "http://127.0.0.2:" + target.port + "/", "http://[::127.0.0.1]:" + target.port + "/"} {
		t.Run(to, func(t *testing.T) {
			redirector := countingServer(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) })
			k, tok := startKernel(t, append(allowHosts("127.0.0.1", "127.0.0.2", "169.254.169.254", "[::127.0.0.1]"),
				"Service__Outbound__AllowedRanges__0=127.0.0.1/32")...)
			var id, runID int64
			body := with(echoJob("redir"), "handlerKind", job.HandlerHTTP, "handlerName", "", "httpUrl", "http://127.0.0.1:"+redirector.port+"/")
			k.Do("POST", base, tok, body).Expect(t, "save", 200, 0).Decode(t, &id)
			runID = runNow(t, k, tok, fmt.Sprintf("%s/%d/run", base, id), "run")
			l := waitRun(t, k, tok, runID, job.RunFailed, 10*time.Second)
			if l.ErrorMessage == nil || !strings.Contains(*l.ErrorMessage, "blocked") {
				t.Fatalf("redirect run: %+v", l)
			}
			if redirector.conns.Load() == 0 {
				t.Fatal("the allowed redirector was not reached")
			}
		})
	}
	if n := target.conns.Load(); n != 0 {
		t.Fatalf("the redirect target accepted %d connections", n)
	}
}
