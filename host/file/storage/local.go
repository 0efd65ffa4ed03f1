package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/adminkernel/kernel/config"
)

// Local keeps objects as files under a root directory (mode 0600, in
// directories of mode 0700). Visible to one machine only: several replicas
// need S3 (docs/operators/files.md).
type Local struct{ root string }

// NewLocal returns the local storage under dataDir/files, creating it.
func NewLocal(dataDir string) (*Local, error) {
	root := filepath.Join(dataDir, "files")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("storage: create %s: %w", root, err)
	}
	return &Local{root: root}, nil
}

// Kind implements Storage.
func (*Local) Kind() string { return config.StorageLocal }

// Root is the directory the objects live in.
func (l *Local) Root() string { return l.root }

func (l *Local) path(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	return filepath.Join(l.root, filepath.FromSlash(name)), nil
}

// Put implements Storage: a temporary file in the target directory, synced
// and renamed into place.
func (l *Local) Put(ctx context.Context, name string, r io.Reader, _ int64) error {
	p, err := l.path(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".put-*") // mode 0600
	if err != nil {
		return err
	}
	tname := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(tname)
		}
	}()
	if _, err := io.Copy(tmp, ctxReader{ctx, r}); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tname, p); err != nil {
		return err
	}
	ok = true
	return nil
}

// Open implements Storage.
func (l *Local) Open(_ context.Context, name string, off, length int64) (io.ReadCloser, error) {
	p, err := l.path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p) //nolint:gosec // G304: p is built from a checked, kernel-made name
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if off > 0 {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	if length < 0 {
		return f, nil
	}
	return limited{io.LimitReader(f, length), f}, nil
}

// Size implements Storage.
func (l *Local) Size(_ context.Context, name string) (int64, error) {
	p, err := l.path(name)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// Delete implements Storage.
func (l *Local) Delete(_ context.Context, name string) error {
	p, err := l.path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// DeletePrefix implements Storage.
func (l *Local) DeletePrefix(_ context.Context, prefix string) error {
	p, err := l.path(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return err
	}
	return os.RemoveAll(p)
}

type limited struct {
	io.Reader
	io.Closer
}

// ctxReader stops a copy when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
