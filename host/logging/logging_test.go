package logging_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/logging"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// With Logging:File the log goes to the file alone (standard error gets
// nothing) unless Logging:FileAndStderr; Reopen, what the serve command
// does on SIGHUP, sends the lines written after it to a new file of the
// configured name once logrotate renamed the old one.
func TestFileOnlyAndReopen(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	l, err := logging.New(config.Logging{File: "logs/ak.log"}, dir, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	path := filepath.Join(dir, "logs", "ak.log")
	if l.FilePath() != path {
		t.Fatalf("FilePath = %q, want %q", l.FilePath(), path)
	}
	l.Root().Info("before rotation")
	if stderr.Len() != 0 {
		t.Errorf("with Logging:File standard error got %q", stderr.String())
	}
	rotated := path + ".1"
	if err := os.Rename(path, rotated); err != nil {
		t.Fatal(err)
	}
	l.For("AdminKernel.Test").Info("after rename, before reopen")
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	l.Root().Info("after reopen")
	old, cur := read(t, rotated), read(t, path)
	if !strings.Contains(old, "before rotation") || !strings.Contains(old, "after rename, before reopen") || strings.Contains(old, "after reopen") {
		t.Errorf("rotated file:\n%s", old)
	}
	if !strings.Contains(cur, "after reopen") || strings.Contains(cur, "before") {
		t.Errorf("reopened file:\n%s", cur)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}

	stderr.Reset()
	both, err := logging.New(config.Logging{File: "both.log", FileAndStderr: true}, dir, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	both.Root().Info("to both")
	_ = both.Close()
	if !strings.Contains(stderr.String(), "to both") || !strings.Contains(read(t, filepath.Join(dir, "both.log")), "to both") {
		t.Errorf("FileAndStderr: stderr %q, file %q", stderr.String(), read(t, filepath.Join(dir, "both.log")))
	}

	none, err := logging.New(config.Logging{}, dir, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := none.Reopen(); err != nil || none.FilePath() != "" {
		t.Errorf("without a file: Reopen = %v, FilePath = %q", err, none.FilePath())
	}
}
