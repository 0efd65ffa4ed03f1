// Package monitor serves the server snapshot (GET /api/v1/sys/monitor/server,
// wire contract §4.10): a one-shot view of the process and the host. The
// process CPU is sampled twice over a 500 ms window, so the call takes about
// 500 ms. Nothing is stored, nothing is kept between calls.
package monitor

import (
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/disk"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/shirou/gopsutil/v4/process"

	"github.com/adminkernel/kernel/host/password"
)

// CPUWindow is the CPU sampling window (spec, Limits).
const CPUWindow = 500 * time.Millisecond

// ServerInfo is the contract's ServerInfoOutput.
type ServerInfo struct {
	MachineName               string     `json:"machineName"`
	OSDescription             string     `json:"osDescription"`
	FrameworkDescription      string     `json:"frameworkDescription"`
	ProcessArchitecture       string     `json:"processArchitecture"`
	ProcessorCount            int        `json:"processorCount"`
	ProcessUptimeSeconds      int64      `json:"processUptimeSeconds"`
	ProcessCPUPercent         float64    `json:"processCpuPercent"`
	ProcessWorkingSetBytes    int64      `json:"processWorkingSetBytes"`
	GCHeapBytes               int64      `json:"gcHeapBytes"`
	TotalAvailableMemoryBytes int64      `json:"totalAvailableMemoryBytes"`
	ThreadCount               int        `json:"threadCount"`
	Disks                     []DiskInfo `json:"disks"`
	// PasswordHashing (a kernel addition) is the password hashing pool:
	// its limits, its load now and since start, and the logins and
	// password changes it refused with 503 (docs/design/security.md, Passwords).
	PasswordHashing *password.Stats `json:"passwordHashing,omitempty"`
}

// DiskInfo is one mounted filesystem.
type DiskInfo struct {
	Name       string `json:"name"`
	TotalBytes int64  `json:"totalBytes"`
	FreeBytes  int64  `json:"freeBytes"`
}

// started approximates the process start when the OS does not tell it.
var started = time.Now()

// Snapshot takes the snapshot. It waits CPUWindow between the two CPU
// samples and returns ctx's error if ctx ends first. Figures the platform
// cannot provide are zero; only the cancellation is an error.
func Snapshot(ctx context.Context) (ServerInfo, error) {
	return snapshot(ctx, CPUWindow)
}

func snapshot(ctx context.Context, window time.Duration) (ServerInfo, error) {
	// proc stays nil (figures zero) if the pid does not fit gopsutil's int32.
	var proc *process.Process
	if pid := os.Getpid(); pid >= 0 && pid <= math.MaxInt32 {
		proc, _ = process.NewProcessWithContext(ctx, int32(pid))
	}
	cpu0, ok0 := cpuSeconds(ctx, proc)
	wall0 := time.Now()

	t := time.NewTimer(window)
	select {
	case <-ctx.Done():
		t.Stop()
		return ServerInfo{}, ctx.Err()
	case <-t.C:
	}

	cpu1, ok1 := cpuSeconds(ctx, proc)
	wall := time.Since(wall0).Seconds()
	cores := runtime.NumCPU()
	info := ServerInfo{
		OSDescription:        osDescription(ctx),
		FrameworkDescription: framework(runtime.Version()),
		ProcessArchitecture:  Architecture(runtime.GOARCH),
		ProcessorCount:       cores,
		GCHeapBytes:          heapBytes(),
		Disks:                disks(ctx),
	}
	if ok0 && ok1 {
		info.ProcessCPUPercent = CPUPercent(cpu1-cpu0, wall, cores)
	}
	info.MachineName, _ = os.Hostname()
	start := started
	if proc != nil {
		if ms, err := proc.CreateTimeWithContext(ctx); err == nil && ms > 0 {
			start = time.UnixMilli(ms)
		}
		if m, err := proc.MemoryInfoWithContext(ctx); err == nil {
			info.ProcessWorkingSetBytes = toInt64(m.RSS)
		}
		if n, err := proc.NumThreadsWithContext(ctx); err == nil {
			info.ThreadCount = int(n)
		}
	}
	if info.ThreadCount == 0 {
		info.ThreadCount, _ = runtime.ThreadCreateProfile(nil)
	}
	info.ProcessUptimeSeconds = max(0, int64(time.Since(start).Seconds()))
	info.TotalAvailableMemoryBytes = availableMemory(ctx)
	return info, nil
}

// cpuSeconds is the processor time (user + system) the process has used.
func cpuSeconds(ctx context.Context, proc *process.Process) (float64, bool) {
	if proc == nil {
		return 0, false
	}
	t, err := proc.TimesWithContext(ctx)
	if err != nil || t == nil {
		return 0, false
	}
	return t.User + t.System, true
}

// CPUPercent is processor time used over a wall-clock interval, normalised
// over all logical cores and clamped to 0-100.
func CPUPercent(cpuSeconds, wallSeconds float64, cores int) float64 {
	if wallSeconds <= 0 || cores <= 0 || math.IsNaN(cpuSeconds) {
		return 0
	}
	p := cpuSeconds / wallSeconds / float64(cores) * 100
	switch {
	case p < 0 || math.IsNaN(p):
		return 0
	case p > 100:
		return 100
	}
	return math.Round(p*100) / 100
}

// Architecture names GOARCH the way the contract does (X64, Arm64, ...).
func Architecture(goarch string) string {
	switch goarch {
	case "amd64":
		return "X64"
	case "386":
		return "X86"
	case "arm64":
		return "Arm64"
	case "arm":
		return "Arm"
	case "wasm":
		return "Wasm"
	case "s390x":
		return "S390x"
	case "loong64":
		return "LoongArch64"
	case "ppc64le":
		return "Ppc64le"
	case "riscv64":
		return "RiscV64"
	}
	return goarch
}

// framework turns runtime.Version ("go1.26.8") into "Go 1.26.8".
func framework(v string) string {
	if rest, ok := strings.CutPrefix(v, "go"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		return "Go " + rest
	}
	return "Go " + v
}

var (
	osOnce sync.Once
	osDesc string
)

// osDescription is e.g. "Linux 6.8.0-45-generic (ubuntu 24.04)"; it does not
// change while the process runs, so it is computed once.
func osDescription(ctx context.Context) string {
	osOnce.Do(func() {
		name := runtime.GOOS
		switch name {
		case "linux":
			name = "Linux"
		case "windows":
			name = "Microsoft Windows"
		case "darwin":
			name = "Darwin"
		case "freebsd":
			name = "FreeBSD"
		}
		osDesc = name
		h, err := host.InfoWithContext(context.WithoutCancel(ctx))
		if err != nil || h == nil {
			return
		}
		if h.KernelVersion != "" {
			osDesc += " " + h.KernelVersion
		}
		if p := strings.TrimSpace(h.Platform + " " + h.PlatformVersion); p != "" {
			osDesc += " (" + p + ")"
		}
	})
	return osDesc
}

// heapBytes is the Go heap in use (bytes of live and not yet swept heap
// objects: MemStats.HeapAlloc) read without stopping the world.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return toInt64(s[0].Value.Uint64())
	}
	return 0
}

// availableMemory is the physical memory the process may use: the host's
// total, or the Go memory limit (GOMEMLIMIT) when that is lower.
func availableMemory(ctx context.Context) int64 {
	var total int64
	if v, err := mem.VirtualMemoryWithContext(ctx); err == nil && v != nil {
		total = toInt64(v.Total)
	}
	if limit := debug.SetMemoryLimit(-1); limit > 0 && limit < math.MaxInt64 && (total == 0 || limit < total) {
		return limit
	}
	return total
}

// pseudoFS are filesystem types that hold no disk space of their own.
var pseudoFS = map[string]bool{
	"proc": true, "sysfs": true, "devtmpfs": true, "devpts": true, "tmpfs": true, "ramfs": true,
	"cgroup": true, "cgroup2": true, "mqueue": true, "debugfs": true, "tracefs": true,
	"securityfs": true, "pstore": true, "bpf": true, "autofs": true, "configfs": true,
	"fusectl": true, "hugetlbfs": true, "binfmt_misc": true, "nsfs": true, "rpc_pipefs": true,
	"efivarfs": true, "selinuxfs": true, "squashfs": true, "nfsd": true, "fuse.lxcfs": true,
	"fuse.gvfsd-fuse": true, "fuse.portal": true, "devfs": true, "fdescfs": true, "overlay-tmpfs": true,
}

// disks lists the real mounted filesystems (directories only, so that
// single bind-mounted files are left out), each once.
func disks(ctx context.Context) []DiskInfo {
	parts, err := disk.PartitionsWithContext(ctx, true)
	if err != nil {
		parts, _ = disk.PartitionsWithContext(ctx, false)
	}
	out := []DiskInfo{}
	type key struct {
		device      string
		total, free uint64
	}
	seen := map[key]bool{}
	for _, p := range parts {
		if pseudoFS[strings.ToLower(p.Fstype)] {
			continue
		}
		if st, err := os.Stat(p.Mountpoint); err != nil || !st.IsDir() {
			continue
		}
		u, err := disk.UsageWithContext(ctx, p.Mountpoint)
		if err != nil || u == nil || u.Total == 0 {
			continue
		}
		k := key{p.Device, u.Total, u.Free}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, DiskInfo{Name: p.Mountpoint, TotalBytes: toInt64(u.Total), FreeBytes: toInt64(u.Free)})
	}
	return out
}

func toInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}
