package tracing_test

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/kerneltest/poll"
	"github.com/adminkernel/kernel/internal/vendorfake"
	"github.com/adminkernel/kernel/internal/vendortest"
)

// span is one exported span with the service that exported it.
type span struct {
	service string
	*tracepb.Span
}

func (s span) traceID() string  { return hex.EncodeToString(s.TraceId) }
func (s span) id() string       { return hex.EncodeToString(s.SpanId) }
func (s span) parentID() string { return hex.EncodeToString(s.ParentSpanId) }

// receiver is an OTLP/HTTP collector: it decodes the protobuf export
// requests posted to /v1/traces and keeps their spans.
type receiver struct {
	URL   string
	mu    sync.Mutex
	spans []span
	bad   []string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err == nil && req.Header.Get("Content-Encoding") == "gzip" {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(body)); err == nil {
			body, err = io.ReadAll(zr)
		}
	}
	var in coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &in)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
		r.bad = append(r.bad, req.Method+" "+req.URL.Path+" "+req.Header.Get("Content-Type")+" "+errString(err))
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	for _, rs := range in.GetResourceSpans() {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, span{service: service, Span: s})
			}
		}
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (r *receiver) all() []span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]span(nil), r.spans...)
}

func (r *receiver) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bad) > 0 {
		t.Errorf("the receiver refused exports: %q", r.bad)
	}
}

func (r *receiver) dump() string {
	var b strings.Builder
	for _, s := range r.all() {
		b.WriteString(s.service + " " + s.GetName() + " trace=" + s.traceID() + " span=" + s.id() + " parent=" + s.parentID() + "\n")
	}
	return b.String()
}

func attr(s span, key string) string {
	for _, a := range s.GetAttributes() {
		if a.GetKey() != key {
			continue
		}
		switch v := a.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue
		case *commonpb.AnyValue_IntValue:
			return strconv.FormatInt(v.IntValue, 10)
		}
	}
	return ""
}

const filePrefix = "adminkernel-provider-"

// buildCodeHost builds the code_host vendor plugin into a fresh folder.
func buildCodeHost(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, filePrefix+"code_host"),
		"github.com/adminkernel/kernel/plugins/codehost/cmd/"+filePrefix+"code_host")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the code_host plugin: %v\n%s", err, out)
	}
	return dir
}

func tracingEnv(endpoint, ratio string) []string {
	return []string{
		"Service__Telemetry__Tracing__Endpoint=" + endpoint,
		"Service__Telemetry__Tracing__SampleRatio=" + ratio,
		"Logging__Format=json",
	}
}

const desktopUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0 Safari/537.36"

func get(t *testing.T, j *kerneltest.Jar, target string, header ...string) kerneltest.Reply {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("User-Agent", desktopUA)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return j.Send(req)
}

// One SSO login through the real code_host plugin is ONE trace: the
// kernel's span of the callback request, its plugin RPC span, the plugin's
// own server span and the plugin's vendor HTTP spans, each the child of
// the one before.
func TestSSOLoginIsOneTraceIntoThePlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin and starts a kernel")
	}
	rcv := newReceiver(t)
	dir := buildCodeHost(t)
	gh := vendorfake.NewGitHub(t)
	const ea = "Service__ExternalAuth__"
	k := kerneltest.Start(t, append(tracingEnv(rcv.URL, "1"),
		ea+"PluginDir="+dir,
		ea+"CallbackBaseUrl=https://kernel.example.com",
		ea+"CodeHost__ClientId="+gh.ClientID,
		ea+"CodeHost__ClientSecret="+gh.Secret,
		ea+"CodeHost__WebBase="+gh.URL(),
		ea+"CodeHost__ApiBase="+gh.URL(),
	))
	j := k.NewJar()
	auth := get(t, j, "/api/v1/auth/external/code_host/authorize")
	if auth.Status != http.StatusFound {
		t.Fatalf("authorize = HTTP %d %s\n%s", auth.Status, auth.Raw, k.Log())
	}
	cb := vendortest.Follow(t, auth.Header.Get("Location"))
	res := get(t, j, cb.Path+"?"+cb.RawQuery)
	if res.Status != http.StatusFound || !strings.Contains(res.Header.Get("Location"), "/oauth/callback") {
		t.Fatalf("callback = HTTP %d %s %s", res.Status, res.Header.Get("Location"), res.Raw)
	}
	tp := res.Header.Get("traceparent")
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || len(parts[1]) != 32 {
		t.Fatalf("the callback's answer carries traceparent %q, want a W3C trace context", tp)
	}
	traceID := parts[1]
	// Closing the kernel ends the plugin (which flushes its spans) and
	// flushes the kernel's.
	if err := k.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	var server, rpc, pluginSrv span
	var vendor []span
	poll.Until(t, 15*time.Second, "the kernel's and the plugin's spans of the callback", func() bool {
		server, rpc, pluginSrv, vendor = span{}, span{}, span{}, nil
		for _, s := range rcv.all() {
			if s.traceID() != traceID {
				continue
			}
			switch {
			case s.service == "adminkernel" && s.GetName() == "GET /api/v1/auth/external/:provider/callback":
				server = s
			case s.service == "adminkernel" && strings.HasSuffix(s.GetName(), "ProviderService/Exchange"):
				rpc = s
			case s.service == "adminkernel-provider-code_host" && strings.HasSuffix(s.GetName(), "ProviderService/Exchange"):
				pluginSrv = s
			case s.service == "adminkernel-provider-code_host" && s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT:
				vendor = append(vendor, s)
			}
		}
		return server.Span != nil && rpc.Span != nil && pluginSrv.Span != nil && len(vendor) >= 2
	})
	if t.Failed() {
		t.Fatalf("spans received:\n%s", rcv.dump())
	}
	rcv.check(t)
	if server.GetKind() != tracepb.Span_SPAN_KIND_SERVER || attr(server, "http.route") != "/api/v1/auth/external/:provider/callback" ||
		attr(server, "http.response.status_code") != "302" || attr(server, "http.request.method") != "GET" {
		t.Errorf("HTTP span %s: kind %v, attributes %v", server.GetName(), server.GetKind(), server.GetAttributes())
	}
	for _, a := range server.GetAttributes() {
		if strings.Contains(a.GetValue().GetStringValue(), "code=") || strings.Contains(a.GetValue().GetStringValue(), "state=") {
			t.Errorf("the HTTP span carries the raw URL: %v", a)
		}
	}
	if rpc.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || !isDescendant(rcv.all(), rpc, server) {
		t.Errorf("plugin RPC span (kind %v, parent %s) is not under the HTTP span %s\n%s", rpc.GetKind(), rpc.parentID(), server.id(), rcv.dump())
	}
	if pluginSrv.parentID() != rpc.id() || pluginSrv.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("the plugin's server span has parent %s, want the kernel's RPC span %s", pluginSrv.parentID(), rpc.id())
	}
	for _, v := range vendor {
		host := strings.TrimPrefix(gh.URL(), "http://")
		if v.parentID() != pluginSrv.id() || !strings.HasPrefix(v.GetName(), "POST ") && !strings.HasPrefix(v.GetName(), "GET ") ||
			!strings.HasPrefix(host, attr(v, "server.address")) || attr(v, "http.response.status_code") != "200" {
			t.Errorf("vendor span %s (parent %s, attributes %v): want a child of the plugin's server span %s answered 200 by %s",
				v.GetName(), v.parentID(), v.GetAttributes(), pluginSrv.id(), host)
		}
	}
}

// isDescendant reports whether s is under ancestor in spans.
func isDescendant(spans []span, s, ancestor span) bool {
	byID := map[string]span{}
	for _, x := range spans {
		byID[x.id()] = x
	}
	for i := 0; i < 32; i++ {
		if s.parentID() == ancestor.id() {
			return true
		}
		p, ok := byID[s.parentID()]
		if !ok {
			return false
		}
		s = p
	}
	return false
}

// A caller's traceparent is the parent of the request's span: the answer
// carries the same trace id, and the exported span names the caller's span
// as its parent. A malformed traceparent starts a new trace.
func TestTraceparentInSameTraceOut(t *testing.T) {
	rcv := newReceiver(t)
	// Ratio 0: only the caller's sampled decision records the request.
	k := kerneltest.Start(t, tracingEnv(rcv.URL, "0"))
	j := k.NewJar()
	const traceID, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	r := get(t, j, "/api/v1/ping", "traceparent", "00-"+traceID+"-"+parent+"-01")
	out := r.Header.Get("traceparent")
	if !strings.HasPrefix(out, "00-"+traceID+"-") || strings.Contains(out, parent) || !strings.HasSuffix(out, "-01") {
		t.Fatalf("answer traceparent %q, want trace %s with the request's own span id, sampled", out, traceID)
	}
	bad := get(t, j, "/api/v1/ping", "traceparent", "00-zz-"+parent+"-01")
	if tp := bad.Header.Get("traceparent"); tp == "" || strings.Contains(tp, "zz") {
		t.Errorf("a malformed traceparent answered %q, want a new trace context", tp)
	}
	if err := k.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	rcv.check(t)
	var got []span
	for _, s := range rcv.all() {
		if s.GetKind() == tracepb.Span_SPAN_KIND_SERVER {
			got = append(got, s)
		}
	}
	if len(got) != 1 || got[0].traceID() != traceID || got[0].parentID() != parent || got[0].GetName() != "GET /api/v1/ping" ||
		"00-"+traceID+"-"+got[0].id()+"-01" != out {
		t.Fatalf("server spans exported:\n%s\nwant exactly the ping of trace %s under %s", rcv.dump(), traceID, parent)
	}
}

// SampleRatio 0 and no caller's trace context: nothing is exported, and
// the answer still names its (unsampled) trace.
func TestSampleRatioZeroExportsNothing(t *testing.T) {
	rcv := newReceiver(t)
	k := kerneltest.Start(t, tracingEnv(rcv.URL, "0"))
	tok := k.Admin()
	for range 3 {
		r := k.Do(http.MethodGet, "/api/v1/sys/user/page?pageNum=1&pageSize=10", tok, nil)
		if tp := r.Header.Get("traceparent"); !strings.HasSuffix(tp, "-00") {
			t.Errorf("unsampled request answered traceparent %q, want the flag 00", tp)
		}
	}
	if err := k.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	rcv.check(t)
	if n := len(rcv.all()); n != 0 {
		t.Fatalf("%d spans exported with SampleRatio 0:\n%s", n, rcv.dump())
	}
}
