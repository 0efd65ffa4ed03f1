package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/adminkernel/kernel/config"
)

// PartSize is the multipart part size of S3 uploads: the buffer one upload
// holds while streaming into the store (8 MiB, above S3's 5 MiB minimum;
// 10000 parts make objects of up to 78 GiB, sys.upload.maxSizeMb allows
// 10 GiB).
const PartSize = 8 << 20

// S3 keeps objects in a bucket of an S3-compatible store through minio-go.
type S3 struct {
	c      *minio.Client
	bucket string
	prefix string
}

// NewS3 connects to the store and checks that the bucket exists.
func NewS3(ctx context.Context, s config.S3) (*S3, error) {
	lookup := minio.BucketLookupDNS
	if s.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(s.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(s.AccessKey, s.SecretKey.Reveal(), ""),
		Secure:       s.UseTLS,
		Region:       s.Region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("storage: S3 endpoint %s: %w", s.Endpoint, err)
	}
	ok, err := c.BucketExists(ctx, s.Bucket)
	if err != nil {
		return nil, fmt.Errorf("storage: S3 bucket %s at %s: %w", s.Bucket, s.Endpoint, err)
	}
	if !ok {
		return nil, fmt.Errorf("storage: S3 bucket %s does not exist at %s", s.Bucket, s.Endpoint)
	}
	prefix := strings.Trim(s.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &S3{c: c, bucket: s.Bucket, prefix: prefix}, nil
}

// Kind implements Storage.
func (*S3) Kind() string { return config.StorageS3 }

func (s *S3) key(name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	return s.prefix + name, nil
}

// Put implements Storage: a multipart upload of PartSize parts when the
// content is larger than one part (never the whole content in memory).
func (s *S3) Put(ctx context.Context, name string, r io.Reader, size int64) error {
	k, err := s.key(name)
	if err != nil {
		return err
	}
	_, err = s.c.PutObject(ctx, s.bucket, k, r, size, minio.PutObjectOptions{
		ContentType: "application/octet-stream",
		PartSize:    PartSize,
	})
	return err
}

// Open implements Storage.
func (s *S3) Open(ctx context.Context, name string, off, length int64) (io.ReadCloser, error) {
	k, err := s.key(name)
	if err != nil {
		return nil, err
	}
	opts := minio.GetObjectOptions{}
	switch {
	case length == 0:
		return io.NopCloser(strings.NewReader("")), nil
	case length > 0:
		err = opts.SetRange(off, off+length-1)
	case off > 0:
		err = opts.SetRange(off, 0)
	}
	if err != nil {
		return nil, err
	}
	o, err := s.c.GetObject(ctx, s.bucket, k, opts)
	if err != nil {
		return nil, mapErr(err)
	}
	// GetObject is lazy: the first read tells whether the object exists.
	if _, err := o.Stat(); err != nil {
		_ = o.Close()
		return nil, mapErr(err)
	}
	return o, nil
}

// Size implements Storage.
func (s *S3) Size(ctx context.Context, name string) (int64, error) {
	k, err := s.key(name)
	if err != nil {
		return 0, err
	}
	st, err := s.c.StatObject(ctx, s.bucket, k, minio.StatObjectOptions{})
	if err != nil {
		return 0, mapErr(err)
	}
	return st.Size, nil
}

// Delete implements Storage.
func (s *S3) Delete(ctx context.Context, name string) error {
	k, err := s.key(name)
	if err != nil {
		return err
	}
	if err := s.c.RemoveObject(ctx, s.bucket, k, minio.RemoveObjectOptions{}); err != nil && !errors.Is(mapErr(err), ErrNotFound) {
		return err
	}
	return nil
}

// DeletePrefix implements Storage.
func (s *S3) DeletePrefix(ctx context.Context, prefix string) error {
	k, err := s.key(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return err
	}
	for o := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: k + "/", Recursive: true}) {
		if o.Err != nil {
			return o.Err
		}
		if err := s.c.RemoveObject(ctx, s.bucket, o.Key, minio.RemoveObjectOptions{}); err != nil && !errors.Is(mapErr(err), ErrNotFound) {
			return err
		}
	}
	return nil
}

func mapErr(err error) error {
	if r := minio.ToErrorResponse(err); r.Code == minio.NoSuchKey || r.StatusCode == 404 {
		return ErrNotFound
	}
	return err
}
