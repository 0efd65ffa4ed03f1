package main

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// goBench is the median of every run of one Go benchmark in go-bench.txt.
type goBench struct {
	Name    string  `json:"name"`
	Pkg     string  `json:"pkg"`
	Runs    int     `json:"runs"`
	NsPerOp float64 `json:"nsPerOp"`
	// CPUNsPerOp is the bench package's cpu-ns/op metric (process CPU
	// time per iteration), -1 when the benchmark does not report it.
	CPUNsPerOp  float64 `json:"cpuNsPerOp"`
	BytesPerOp  float64 `json:"bytesPerOp"`
	AllocsPerOp float64 `json:"allocsPerOp"`
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parseGoBench reads `go test -bench -benchmem` output; it returns the
// benchmarks in file order with their medians, and the file's time.
func parseGoBench(path string) ([]goBench, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer func() { _ = f.Close() }() // opened read-only: nothing to flush
	st, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	type acc struct {
		pkg                    string
		ns, cpu, bytes, allocs []float64
	}
	byName := map[string]*acc{}
	var order []string
	pkg := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key := pkg + " " + m[1]
		a, ok := byName[key]
		if !ok {
			a = &acc{pkg: pkg}
			byName[key] = a
			order = append(order, key)
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				a.ns = append(a.ns, v)
			case "cpu-ns/op":
				a.cpu = append(a.cpu, v)
			case "B/op":
				a.bytes = append(a.bytes, v)
			case "allocs/op":
				a.allocs = append(a.allocs, v)
			}
		}
	}
	var out []goBench
	for _, key := range order {
		a := byName[key]
		_, name, _ := strings.Cut(key, " ")
		out = append(out, goBench{Name: name, Pkg: a.pkg, Runs: len(a.ns),
			NsPerOp: median(a.ns), CPUNsPerOp: median(a.cpu), BytesPerOp: median(a.bytes), AllocsPerOp: median(a.allocs)})
	}
	return out, st.ModTime(), sc.Err()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return -1
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// find returns the benchmark whose name is name (without the -N suffix).
func findBench(bs []goBench, name string) (goBench, bool) {
	for _, b := range bs {
		if b.Name == name {
			return b, true
		}
	}
	return goBench{}, false
}
