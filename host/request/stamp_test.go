package request_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/adminkernel/kernel/host/request"
)

func TestStampsOnTheWire(t *testing.T) {
	at := time.Date(2026, 7, 18, 10, 0, 0, 123456789, time.UTC)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"entity: server-local, no offset, whole seconds", request.EntityStamp{Time: at}, `"` + at.Local().Format("2006-01-02T15:04:05") + `"`},
		{"offset: server-local with its offset, whole seconds", request.OffsetStamp{Time: at}, `"` + at.Local().Format(time.RFC3339) + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != tt.want {
				t.Fatalf("JSON %s, want %s", raw, tt.want)
			}
			if strings.Contains(string(raw), ".123") {
				t.Fatalf("JSON %s carries fractions", raw)
			}
		})
	}
	t.Run("read back", func(t *testing.T) {
		var e request.EntityStamp
		if err := json.Unmarshal([]byte(`"`+at.Local().Format("2006-01-02T15:04:05")+`"`), &e); err != nil || !e.Equal(at.Truncate(time.Second)) {
			t.Fatalf("entity read back %v (%v), want %v", e.Time, err, at.Truncate(time.Second))
		}
		var o request.OffsetStamp
		if err := json.Unmarshal([]byte(`"2026-07-18T18:00:00+08:00"`), &o); err != nil || !o.Equal(at.Truncate(time.Second)) {
			t.Fatalf("offset read back %v (%v)", o.Time, err)
		}
		if err := json.Unmarshal([]byte(`"yesterday"`), &o); err == nil {
			t.Fatal("a malformed time was read")
		}
	})
}
