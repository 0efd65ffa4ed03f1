package monitor_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/adminkernel/kernel/ent/sysmenu"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/kerneltest"
	"github.com/adminkernel/kernel/host/monitor"
)

func checkSane(t *testing.T, info monitor.ServerInfo) {
	t.Helper()
	if info.ProcessCPUPercent < 0 || info.ProcessCPUPercent > 100 {
		t.Errorf("processCpuPercent = %v, want 0-100", info.ProcessCPUPercent)
	}
	if info.ProcessorCount != runtime.NumCPU() {
		t.Errorf("processorCount = %d, want %d", info.ProcessorCount, runtime.NumCPU())
	}
	if info.MachineName == "" || info.OSDescription == "" {
		t.Errorf("machineName %q osDescription %q", info.MachineName, info.OSDescription)
	}
	if !strings.HasPrefix(info.FrameworkDescription, "Go 1.") {
		t.Errorf("frameworkDescription = %q", info.FrameworkDescription)
	}
	if info.ProcessArchitecture == "" || info.ProcessArchitecture == "amd64" {
		t.Errorf("processArchitecture = %q", info.ProcessArchitecture)
	}
	if info.ProcessUptimeSeconds < 0 {
		t.Errorf("processUptimeSeconds = %d", info.ProcessUptimeSeconds)
	}
	if info.GCHeapBytes <= 0 || info.TotalAvailableMemoryBytes <= 0 {
		t.Errorf("gcHeapBytes %d totalAvailableMemoryBytes %d", info.GCHeapBytes, info.TotalAvailableMemoryBytes)
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		if info.ProcessWorkingSetBytes <= 0 || info.ThreadCount <= 0 {
			t.Errorf("processWorkingSetBytes %d threadCount %d", info.ProcessWorkingSetBytes, info.ThreadCount)
		}
		if len(info.Disks) == 0 {
			t.Error("no disks listed")
		}
	}
	for _, d := range info.Disks {
		if d.Name == "" || d.TotalBytes <= 0 || d.FreeBytes < 0 || d.FreeBytes > d.TotalBytes {
			t.Errorf("disk %+v", d)
		}
	}
}

func TestSnapshotSamplesOverTheWindow(t *testing.T) {
	// Keep one core busy so the measured CPU is not zero.
	var stop atomic.Bool
	go func() {
		for !stop.Load() {
		}
	}()
	defer stop.Store(true)

	start := time.Now()
	info, err := monitor.Snapshot(context.Background())
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took < monitor.CPUWindow || took > 3*time.Second {
		t.Errorf("Snapshot took %v, want the %v window (and under 3 s)", took, monitor.CPUWindow)
	}
	checkSane(t, info)
	if info.ProcessCPUPercent <= 0 {
		t.Errorf("processCpuPercent = %v while a core is busy", info.ProcessCPUPercent)
	}
}

func TestSnapshotRespectsCancellation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := monitor.Snapshot(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	if took := time.Since(start); took >= monitor.CPUWindow {
		t.Errorf("cancelled Snapshot still waited %v", took)
	}
}

func TestCPUPercentAndArchitecture(t *testing.T) {
	tests := []struct {
		cpu, wall float64
		cores     int
		want      float64
	}{
		{0.5, 0.5, 1, 100},
		{0.5, 0.5, 4, 25},
		{4, 0.5, 2, 100}, // clamped
		{-1, 0.5, 2, 0},  // clamped
		{1, 0, 2, 0},     // no wall time
		{1, 1, 0, 0},     // no cores
		{0.123456, 1, 1, 12.35},
	}
	for _, tt := range tests {
		if got := monitor.CPUPercent(tt.cpu, tt.wall, tt.cores); got != tt.want {
			t.Errorf("CPUPercent(%v, %v, %d) = %v, want %v", tt.cpu, tt.wall, tt.cores, got, tt.want)
		}
	}
	for goarch, want := range map[string]string{"amd64": "X64", "arm64": "Arm64", "386": "X86", "arm": "Arm", "mips": "mips"} {
		if got := monitor.Architecture(goarch); got != want {
			t.Errorf("Architecture(%s) = %s, want %s", goarch, got, want)
		}
	}
}

func TestServerEndpoint(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	start := time.Now()
	r := k.Do("GET", "/api/v1/sys/monitor/server", admin, nil).Expect(t, "snapshot", 200, 0)
	took := time.Since(start)
	if took < monitor.CPUWindow || took > 3*time.Second {
		t.Errorf("the call took %v, want about %v", took, monitor.CPUWindow)
	}
	var info monitor.ServerInfo
	r.Decode(t, &info)
	checkSane(t, info)
	t.Logf("snapshot in %v: %s", took, r.Data)
	for _, field := range []string{"machineName", "osDescription", "frameworkDescription", "processArchitecture",
		"processorCount", "processUptimeSeconds", "processCpuPercent", "processWorkingSetBytes", "gcHeapBytes",
		"totalAvailableMemoryBytes", "threadCount", "disks"} {
		if !strings.Contains(string(r.Data), `"`+field+`":`) {
			t.Errorf("field %s missing from %s", field, r.Data)
		}
	}
	// Nothing is stored: no operation-log or exception-log row.
	ctx := context.Background()
	if n := k.Ent().SysOpLog.Query().CountX(ctx) + k.Ent().SysExceptionLog.Query().CountX(ctx); n != 0 {
		t.Errorf("%d log rows written by a snapshot", n)
	}

	k.Do("GET", "/api/v1/sys/monitor/server", "", nil).Expect(t, "anonymous", 401, int(errcode.TokenInvalid))
	k.User("plain", "Plain#Pass1")
	plain := k.Login("plain", "Plain#Pass1").AccessToken
	k.Do("GET", "/api/v1/sys/monitor/server", plain, nil).Expect(t, "no permission", 403, int(errcode.NoPermission))
	k.User("ops", "Ops#Pass12", "GET:/api/v1/sys/monitor/server")
	ops := k.Login("ops", "Ops#Pass12").AccessToken
	k.Do("GET", "/api/v1/sys/monitor/server", ops, nil).Expect(t, "granted", 200, 0)

	menus := k.Ent().SysMenu.Query().Where(sysmenu.IDIn(370, 371)).AllX(ctx)
	if len(menus) != 2 {
		t.Fatalf("%d of 2 menus seeded", len(menus))
	}
	for _, m := range menus {
		switch m.ID {
		case 370:
			if m.ParentID != 300 || m.Path == nil || *m.Path != "/system/monitor" || m.Type != 2 {
				t.Errorf("page 370: %+v", m)
			}
		case 371:
			if m.ParentID != 370 || m.Permission != "GET:/api/v1/sys/monitor/server" || m.Type != 3 {
				t.Errorf("button 371: %+v", m)
			}
		}
	}
}
