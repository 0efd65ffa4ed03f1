package job

import (
	"encoding/json"
	"testing"

	"github.com/adminkernel/kernel/ent"
)

func TestParseStatuses(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		pass []int
		fail []int
	}{
		{"", true, []int{200, 302, 399}, []int{400, 500}},
		{"200-299,304", true, []int{200, 299, 304}, []int{300, 301, 404}},
		{" 204 , 400-404 ", true, []int{204, 400, 404}, []int{200, 405}},
		{"ok", false, nil, nil},
		{"99", false, nil, nil},
		{"300-200", false, nil, nil},
		{"200-600", false, nil, nil},
		{"200-", false, nil, nil},
	} {
		r, err := parseStatuses(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("parseStatuses(%q) error %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		for _, c := range tc.pass {
			if !statusOK(r, c) {
				t.Errorf("%q: %d should succeed", tc.in, c)
			}
		}
		for _, c := range tc.fail {
			if statusOK(r, c) {
				t.Errorf("%q: %d should fail", tc.in, c)
			}
		}
	}
}

func TestReadProperties(t *testing.T) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(`{"a":"x","n":30,"b":true,"z":null}`), &raw); err != nil {
		t.Fatal(err)
	}
	p, err := readProperties(raw)
	if err != nil || len(p) != 3 || p["a"] != "x" || p["n"] != "30" || p["b"] != "true" {
		t.Fatalf("readProperties = %v, %v", p, err)
	}
	for _, bad := range []string{`{"a":{"b":1}}`, `{"a":[1]}`, `{"":"x"}`} {
		raw = nil
		if err := json.Unmarshal([]byte(bad), &raw); err != nil {
			t.Fatal(err)
		}
		if _, err := readProperties(raw); err == nil {
			t.Errorf("readProperties(%s) accepted", bad)
		}
	}
}

func TestMergeHeaders(t *testing.T) {
	stored := `{"Authorization":"Bearer x","x-key":"k","Gone":"g"}`
	next := `{"Authorization":"********","X-Key":"********","New":"n","Literal":"********"}`
	out, err := mergeHeaders(&next, &stored)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := parseHeaders(out)
	if len(h) != 4 || h["Authorization"] != "Bearer x" || h["X-Key"] != "k" || h["New"] != "n" || h["Literal"] != MaskedValue {
		t.Fatalf("merged = %v", h)
	}
	if m := maskHeaders(&stored); m == nil || *m != `{"Authorization":"********","Gone":"********","x-key":"********"}` {
		t.Fatalf("masked = %v", m)
	}
	if out, _ := mergeHeaders(nil, &stored); out != nil {
		t.Fatalf("no headers sent = %v, want none", *out)
	}
}

func TestPropsJSONOfOldRows(t *testing.T) {
	param := `{"days": 30, "name": "x", "skip": null}`
	got := propsJSON(&ent.SysJob{HandlerKind: HandlerCompiled, HandlerParam: &param})
	if got == nil || *got != `{"days":"30","name":"x"}` {
		t.Fatalf("propsJson of a numeric handlerParam = %v", got)
	}
	arr := `[1,2]`
	if got := propsJSON(&ent.SysJob{HandlerKind: HandlerCompiled, HandlerParam: &arr}); got != nil {
		t.Fatalf("propsJson of an array parameter = %s, want none", *got)
	}
	if builtinName(HandlerHTTP, "") != BuiltinHTTPHandler || builtinName(HandlerSQL, "") != BuiltinSQLHandler || builtinName(HandlerCompiled, "a") != "a" {
		t.Fatal("builtinName")
	}
}

func TestReadParamAcceptsStrings(t *testing.T) {
	for in, want := range map[string]int{`{"days": 30}`: 30, `{"days": "45"}`: 45, `{"days": " 7 "}`: 7} {
		p, err := readParam(in)
		if err != nil || p.Days == nil || *p.Days != want {
			t.Errorf("readParam(%s) = %v, %v", in, p.Days, err)
		}
	}
	for _, bad := range []string{`{"days": "x"}`, `{"days": "0"}`, `{"days": 1.5}`} {
		if _, err := readParam(bad); err == nil {
			t.Errorf("readParam(%s) accepted", bad)
		}
	}
}
