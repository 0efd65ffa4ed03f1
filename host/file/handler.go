package file

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/host/bind"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/internal/secheaders"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/route"
)

// FileCSP is the Content-Security-Policy of every file answer
// (secheaders.FileCSP).
const FileCSP = secheaders.FileCSP

type handler struct {
	s   *Service
	who bind.Caller[datascope.Caller]
}

// mount binds /sys/file to s.
func mount(api *route.Group, s *Service, maxPageSize int) {
	h := &handler{s: s, who: bind.Caller[datascope.Caller](s.scopes.RequestCaller)}
	g := api.Group("/sys/file")
	g.Post("/upload", route.Permission, h.upload).StreamsBody().Doc("Upload a file (multipart field file)", nil, UploadOutput{})
	g.Get("/{id}/download", route.Permission, h.download).Doc("Download a file (attachment)", nil, nil)
	g.Get("/{id}/view", route.Anonymous, h.view).Doc("View a file through a signed link (query exp, sig)", nil, nil).Queries("exp", "sig")
	g.Get("/page", route.Permission, bind.PageAs(h.who, maxPageSize, pageFilter, s.Page)).Doc("File page", nil, request.PagedList[File]{}).Paged("FileName")
	g.Delete("/{id}", route.Permission, bind.Remove(h.who, s.Delete)).Doc("Delete a file", nil, true)
	g.Post("/batch-delete", route.Permission, bind.Apply(h.who, s.BatchDelete)).Doc("Delete files", IDsInput{}, true)
	g.Post("/chunk/init", route.Permission, bind.Create(h.who, s.Init)).Doc("Start or resume a chunked upload", InitInput{}, InitOutput{})
	g.Post("/chunk", route.Permission, h.chunk).StreamsBody().Doc("Upload one chunk (multipart uploadId, index, chunk)", nil, true)
	g.Post("/chunk/complete", route.Permission, bind.Create(h.who, s.Complete)).Doc("Complete a chunked upload", CompleteInput{}, UploadOutput{})
}

func pageFilter(c fiber.Ctx) (Filter, error) {
	return Filter{FileName: request.Query(c, "FileName")}, nil
}

// bodyReader records the first read error of a multipart part (a client
// that stops mid-way, a malformed multipart body): a 48002, never a 500.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

// parts opens the multipart body of the request as a stream.
func parts(c fiber.Ctx) (*multipart.Reader, error) {
	mt, params, err := mime.ParseMediaType(string(c.Request().Header.ContentType()))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, request.UnsupportedMediaType()
	}
	var body io.Reader
	if req := c.Request(); req.IsBodyStream() {
		body = req.BodyStream()
	} else {
		body = strings.NewReader(string(req.Body()))
	}
	return multipart.NewReader(&idleDeadline{r: body, conn: c.RequestCtx().Conn()}, params["boundary"]), nil
}

// StreamIdle is how long a streamed upload may send nothing before the
// connection is dropped. It replaces the server's ReadTimeout (30 s for
// the whole request) on the streaming routes, so a large upload over a
// slow link is bounded by its progress, not by its size.
const StreamIdle = 60 * time.Second

// idleDeadline moves the connection's read deadline forward while the body
// arrives (at most once a second).
type idleDeadline struct {
	r    io.Reader
	conn net.Conn
	last time.Time
}

func (d *idleDeadline) Read(p []byte) (int, error) {
	if now := time.Now(); d.conn != nil && now.Sub(d.last) >= time.Second {
		_ = d.conn.SetReadDeadline(now.Add(StreamIdle))
		d.last = now
	}
	return d.r.Read(p)
}

// readFailed maps an error that a body read caused to 48002.
func readFailed(err error, br *bodyReader, field string) error {
	var ec *errcode.Error
	if err != nil && br.err != nil && !errors.As(err, &ec) {
		return request.Invalid(field)
	}
	return err
}

func (h *handler) upload(c fiber.Ctx) error {
	who, err := h.who(c)
	if err != nil {
		return err
	}
	mr, err := parts(c)
	if err != nil {
		return err
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return errcode.New(errcode.FileEmpty)
		}
		if err != nil {
			return request.Invalid("file")
		}
		if p.FormName() != "file" {
			continue
		}
		br := &bodyReader{r: p}
		out, err := h.s.Upload(c.Context(), who, p.FileName(), br)
		if err != nil {
			return readFailed(err, br, "file")
		}
		return envelope.OK(c, out)
	}
}

func (h *handler) chunk(c fiber.Ctx) error {
	who, err := h.who(c)
	if err != nil {
		return err
	}
	mr, err := parts(c)
	if err != nil {
		return err
	}
	var uploadID *int64
	var index *int
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return errcode.New(errcode.FileEmpty)
		}
		if err != nil {
			return request.Invalid("chunk")
		}
		switch p.FormName() {
		case "uploadId", "index":
			raw, err := io.ReadAll(io.LimitReader(p, 32))
			if err != nil {
				return request.Invalid(p.FormName())
			}
			n, err := ChunkField(p.FormName(), raw)
			if err != nil {
				return err
			}
			if p.FormName() == "uploadId" {
				uploadID = &n
			} else {
				i := int(n)
				index = &i
			}
		case "chunk":
			// uploadId and index come first: the chunk is streamed as it
			// arrives, to the place they name.
			if uploadID == nil {
				return request.Invalid("uploadId")
			}
			if index == nil {
				return request.Invalid("index")
			}
			br := &bodyReader{r: p}
			if err := h.s.Chunk(c.Context(), who, *uploadID, *index, br); err != nil {
				return readFailed(err, br, "chunk")
			}
			return envelope.OK(c, true)
		}
	}
}

// ChunkField parses the uploadId or index field of a chunk request: a
// non-negative decimal, an index at most MaxChunks (48002 otherwise).
func ChunkField(name string, raw []byte) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil || n < 0 || (name == "index" && n > MaxChunks) {
		return 0, request.Invalid(name)
	}
	return n, nil
}

func (h *handler) download(c fiber.Ctx) error {
	who, err := h.who(c)
	if err != nil {
		return err
	}
	id, err := request.ParamInt64(c, "id")
	if err != nil {
		return err
	}
	f, err := h.s.Download(c.Context(), who, id)
	if err != nil {
		return err
	}
	return h.serve(c, f, false)
}

func (h *handler) view(c fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return forbidden(c)
	}
	f, ok, err := h.s.View(c.Context(), id, request.Query(c, "exp"), request.Query(c, "sig"))
	if !ok {
		return forbidden(c)
	}
	if err != nil {
		return err
	}
	return h.serve(c, f, inline[f.Extension])
}

// forbidden is the contract's answer to a bad view signature: HTTP 403
// with an empty body.
func forbidden(c fiber.Ctx) error {
	c.Status(fiber.StatusForbidden)
	c.Response().ResetBody()
	return nil
}

// serve streams a file with Range and conditional-request support.
func (h *handler) serve(c fiber.Ctx, f *ent.SysFile, inlined bool) error {
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentSecurityPolicy, FileCSP)
	etag := ""
	if f.Hash != nil {
		etag = `"` + *f.Hash + `"`
		c.Set(fiber.HeaderETag, etag)
	}
	c.Set(fiber.HeaderAcceptRanges, "bytes")
	if c.Get(fiber.HeaderCacheControl) == "" {
		c.Set(fiber.HeaderCacheControl, "private, no-cache")
	}
	if etag != "" && matches(c.Get(fiber.HeaderIfNoneMatch), etag) {
		c.Status(fiber.StatusNotModified)
		return nil
	}
	ctype := "application/octet-stream"
	kind := "attachment"
	if inlined && f.ContentType != nil {
		ctype, kind = *f.ContentType, "inline"
	}
	c.Set(fiber.HeaderContentType, ctype)
	c.Set(fiber.HeaderContentDisposition, Disposition(kind, f.OriginalName))
	size := f.SizeBytes
	off, length, status := int64(0), size, fiber.StatusOK
	if rg := c.Get(fiber.HeaderRange); rg != "" {
		if ir := c.Get(fiber.HeaderIfRange); ir == "" || (etag != "" && ir == etag) {
			o, n, ok, satisfiable := parseRange(rg, size)
			switch {
			case !satisfiable:
				c.Set(fiber.HeaderContentRange, "bytes */"+strconv.FormatInt(size, 10))
				c.Status(fiber.StatusRequestedRangeNotSatisfiable)
				return nil
			case ok:
				off, length, status = o, n, fiber.StatusPartialContent
				c.Set(fiber.HeaderContentRange, "bytes "+strconv.FormatInt(o, 10)+"-"+strconv.FormatInt(o+n-1, 10)+"/"+strconv.FormatInt(size, 10))
			}
		}
	}
	rc, err := h.s.Open(c.Context(), f, off, length)
	if err != nil {
		return err
	}
	c.Status(status)
	return c.SendStream(rc, int(length))
}

// matches reports whether an If-None-Match value names etag (or is *).
func matches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// parseRange reads a single "bytes=" range of a body of size bytes. ok is
// false when the header is to be ignored (malformed, several ranges: the
// whole body is sent); satisfiable is false for a range that starts past
// the end (416).
func parseRange(h string, size int64) (off, length int64, ok, satisfiable bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, true
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, true
	}
	if a == "" { // suffix: the last b bytes
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false, true
		}
		if n == 0 || size == 0 {
			return 0, 0, false, false
		}
		n = min(n, size)
		return size - n, n, true, true
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 {
		return 0, 0, false, true
	}
	end := size - 1
	if b != "" {
		e, err := strconv.ParseInt(b, 10, 64)
		if err != nil || e < start {
			return 0, 0, false, true
		}
		end = min(e, size-1)
	}
	if start >= size {
		return 0, 0, false, false
	}
	return start, end - start + 1, true, true
}
