// Package storage keeps the bytes of uploaded files: on the local disk
// under the data directory, or in an S3-compatible object store
// (Service:Upload:Storage). Object names are made by the file module
// (snowflake ids and fixed prefixes), never from what a client sent; both
// implementations refuse any other shape of name.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/adminkernel/kernel/config"
)

// Storage is where file contents live.
type Storage interface {
	// Kind is config.StorageLocal or config.StorageS3.
	Kind() string
	// Put stores r under name, replacing what was there. size is the
	// length when known, -1 otherwise. The object appears whole or not at
	// all.
	Put(ctx context.Context, name string, r io.Reader, size int64) error
	// Open reads length bytes from offset off (length < 0: to the end).
	Open(ctx context.Context, name string, off, length int64) (io.ReadCloser, error)
	// Size returns the stored length (ErrNotFound when absent).
	Size(ctx context.Context, name string) (int64, error)
	// Delete removes name; an absent name is no error.
	Delete(ctx context.Context, name string) error
	// DeletePrefix removes every object whose name starts with prefix + "/".
	DeletePrefix(ctx context.Context, prefix string) error
}

// ErrNotFound: no object has the name.
var ErrNotFound = errors.New("storage: object not found")

// validName is the shape of the names the file module makes:
// lower-case letters, digits, '-', '_' and '.' in '/'-separated segments,
// none of them "." or "..".
var validName = regexp.MustCompile(`^[a-z0-9_-]+(\.[a-z0-9_-]+)?(/[a-z0-9_-]+(\.[a-z0-9_-]+)?)*$`)

// CheckName refuses a name the module would not make.
func CheckName(name string) error {
	if len(name) > 200 || !validName.MatchString(name) {
		return fmt.Errorf("storage: invalid object name %q", name)
	}
	return nil
}

// New builds the storage Service:Upload selects. dataDir is the kernel's
// data directory (local storage keeps its files under dataDir/files).
func New(ctx context.Context, u config.Upload, dataDir string) (Storage, error) {
	switch u.Storage {
	case config.StorageS3:
		return NewS3(ctx, u.S3)
	case config.StorageLocal, "":
		return NewLocal(dataDir)
	}
	return nil, fmt.Errorf("storage: Service:Upload:Storage %q is not supported", u.Storage)
}
