package file

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/predicate"
	"github.com/adminkernel/kernel/ent/sysfile"
	"github.com/adminkernel/kernel/ent/sysfilechunk"
	"github.com/adminkernel/kernel/ent/sysfileupload"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/datascope"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/file/link"
	"github.com/adminkernel/kernel/host/file/storage"
	"github.com/adminkernel/kernel/host/request"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// Config keys the module reads.
const (
	KeyMaxSizeMb         = "sys.upload.maxSizeMb"
	KeyAllowedExtensions = "sys.upload.allowedExtensions"
)

// MaxChunks bounds chunkCount of a chunked upload.
const MaxChunks = 10000

// MaxChunkBytes bounds the chunk size of a chunked upload (the console
// sends 1 MiB chunks, a little more for files over 10 000 MiB).
const MaxChunkBytes = 8 << 20

// ChunkBound is the largest chunk an upload of total bytes in count chunks
// takes: the chunk size the client declared implicitly by splitting total
// into count chunks, that is the largest size C with (count-1)·C < total
// (every chunk but the last is C, the last is smaller or equal; at least
// ceil(total/count), so any split into count chunks fits), and never more
// than MaxChunkBytes. ok is false when total cannot be split into
// count chunks of at most MaxChunkBytes (or the arguments are out of
// range).
func ChunkBound(total, count int64) (bound int64, ok bool) {
	if total <= 0 || count < 1 || count > total {
		return 0, false
	}
	even := total/count + min(total%count, 1) // ceil(total / count)
	if even > MaxChunkBytes {
		return 0, false
	}
	bound = total
	if count > 1 {
		bound = (total - 1) / (count - 1)
	}
	// A split no fixed size gives (5 bytes in 4 chunks) still fits.
	return min(max(bound, even), MaxChunkBytes), true
}

// sweepEvery is how often chunk/init looks for abandoned uploads.
const sweepEvery = 10 * time.Minute

// Service implements the file area.
type Service struct {
	client   *ent.Client
	settings *sysconfig.Service
	store    storage.Storage
	ring     *link.Ring
	scopes   *datascope.Cache
	log      hclog.Logger
	expiry   time.Duration
	pending  int64
	now      func() time.Time

	sweepMu   sync.Mutex
	lastSweep time.Time
}

// Options are the arguments of NewService.
type Options struct {
	Client   *ent.Client
	Settings *sysconfig.Service
	Store    storage.Storage
	Ring     *link.Ring
	Scopes   *datascope.Cache
	Log      hclog.Logger
	// Expiry is how long a chunked upload may receive nothing before it is
	// removed.
	Expiry time.Duration
	// PendingMax bounds the bytes one user's unfinished uploads declare
	// (0: 2 GiB).
	PendingMax int64
}

// NewService returns the service.
func NewService(o Options) *Service {
	pending := o.PendingMax
	if pending <= 0 {
		pending = 2 << 30
	}
	return &Service{client: o.Client, settings: o.Settings, store: o.Store, ring: o.Ring, scopes: o.Scopes, log: o.Log, expiry: o.Expiry, pending: pending, now: time.Now}
}

// UploadOutput is FileUploadOutput of the wire contract.
type UploadOutput struct {
	ID           int64   `json:"id"`
	OriginalName string  `json:"originalName"`
	StoragePath  string  `json:"storagePath"`
	SizeBytes    int64   `json:"sizeBytes"`
	ViewURL      *string `json:"viewUrl"`
}

// File is SysFile of the wire contract.
type File struct {
	ID int64 `json:"id"`
	request.Audit
	OriginalName string  `json:"originalName"`
	StoragePath  string  `json:"storagePath"`
	Extension    string  `json:"extension"`
	ContentType  *string `json:"contentType"`
	SizeBytes    int64   `json:"sizeBytes"`
	Hash         *string `json:"hash"`
	// ViewURL is a signed view link (a kernel addition, as in
	// FileUploadOutput): the console previews images and PDFs through it.
	// Null when the kernel issues no links (Production without keys).
	ViewURL *string `json:"viewUrl"`
}

func toFile(f *ent.SysFile) File {
	return File{
		ID: f.ID, Audit: request.AuditOf(f.IsDelete, f.CreateTime, f.CreateUserID, f.UpdateTime, f.UpdateUserID),

		OriginalName: f.OriginalName, StoragePath: f.StoragePath, Extension: f.Extension,
		ContentType: f.ContentType, SizeBytes: f.SizeBytes, Hash: f.Hash,
	}
}

func (s *Service) output(f *ent.SysFile) UploadOutput {
	return UploadOutput{ID: f.ID, OriginalName: f.OriginalName, StoragePath: f.StoragePath, SizeBytes: f.SizeBytes, ViewURL: s.viewURL(f.ID)}
}

// viewURL signs a view link for the file id; nil when no link is issued.
func (s *Service) viewURL(id int64) *string {
	if !s.ring.Ready() {
		return nil
	}
	u, err := s.ring.ViewURL(id, s.now())
	if err != nil {
		return nil
	}
	return &u
}

// ---- limits ----

type limits struct {
	max  int64
	exts map[string]bool
}

func (s *Service) limits(ctx context.Context) (limits, error) {
	mb, err := s.settings.Int(ctx, KeyMaxSizeMb)
	if err != nil {
		return limits{}, err
	}
	exts, err := s.settings.String(ctx, KeyAllowedExtensions)
	if err != nil {
		return limits{}, err
	}
	return limits{max: int64(mb) << 20, exts: allowedExts(exts)}, nil
}

func tooLarge(max int64) *errcode.Error {
	return errcode.New(errcode.FileTooLarge).With("max", max>>20)
}

// name cleans a client name and checks its extension.
func (l limits) name(raw string) (name, ext string, err error) {
	name = CleanName(raw)
	if name == "" {
		return "", "", request.Invalid("fileName")
	}
	ext = Ext(name)
	if ext == "" || !l.exts[ext] {
		return "", "", errcode.New(errcode.FileExtNotAllowed).With("ext", ext)
	}
	return name, ext, nil
}

// errTooLarge ends a read past the limit.
var errTooLarge = errors.New("file: over the size limit")

// capped reads r and fails with errTooLarge once more than max bytes came.
// It keeps the first read error: a store may take a short read for the
// end of the content (minio-go does), so after a successful Put the caller
// checks failed() before trusting what was stored.
type capped struct {
	r   io.Reader
	n   int64
	max int64
	err error
}

func (c *capped) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.n > c.max {
		err = errTooLarge
	}
	if err != nil && !errors.Is(err, io.EOF) && c.err == nil {
		c.err = err
	}
	return n, err
}

// failed is the first read error, if any.
func (c *capped) failed() error { return c.err }

// newObjectName is a storage name made of the date and 128 random bits.
func (s *Service) newObjectName() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "files/" + s.now().UTC().Format("2006/01") + "/" + hex.EncodeToString(b[:])
}

func chunkName(uploadID int64, index int) string {
	return fmt.Sprintf("chunks/%d/%d", uploadID, index)
}

func chunkDir(uploadID int64) string { return fmt.Sprintf("chunks/%d", uploadID) }

// orgOf is the caller's org (nil without one).
func (s *Service) orgOf(ctx context.Context, userID int64) (*int64, error) {
	u, err := s.client.SysUser.Query().Where(sysuser.ID(userID)).Select(sysuser.FieldOrgID).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return u.OrgID, nil
}

// Visible is visible for the other areas reading sys_file (the recycle
// bin): the same data scope as the files area's own pages.
func Visible(who datascope.Caller) []predicate.SysFile { return visible(who) }

// visible restricts a sys_file query to the caller's data scope: files of
// an org in the scope, and the caller's own files when the scope includes
// them.
func visible(who datascope.Caller) []predicate.SysFile {
	sc := who.Scope
	if who.SuperAdmin || sc.Unrestricted {
		return nil
	}
	var or []predicate.SysFile
	if len(sc.OrgIDs) > 0 {
		or = append(or, sysfile.OrgIDIn(sc.OrgIDs...))
	}
	if sc.IncludeSelf {
		or = append(or, sysfile.CreateUserID(who.UserID))
	}
	switch len(or) {
	case 0:
		return []predicate.SysFile{sysfile.IDIn()}
	case 1:
		return or
	}
	return []predicate.SysFile{sysfile.Or(or...)}
}

// ---- simple upload ----

// save streams content into a new object: the first SniffLen bytes are
// checked against ext, the size is capped at max, the SHA-256 computed on
// the way. It returns the object name, size, hash and content type.
func (s *Service) save(ctx context.Context, ext string, r io.Reader, size, max int64) (obj string, n int64, sum, ctype string, err error) {
	c := &capped{r: r, max: max}
	head := make([]byte, SniffLen)
	hn, err := io.ReadFull(c, head)
	switch {
	case errors.Is(err, errTooLarge):
		return "", 0, "", "", tooLarge(max)
	case errors.Is(err, io.EOF) || hn == 0:
		return "", 0, "", "", errcode.New(errcode.FileEmpty)
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return "", 0, "", "", err
	}
	head = head[:hn]
	ctype, ok := CheckContent(ext, head)
	if !ok {
		return "", 0, "", "", errcode.New(errcode.FileExtNotAllowed).With("ext", ext).With("reason", "content")
	}
	h := sha256.New()
	h.Write(head)
	body := io.MultiReader(bytes.NewReader(head), io.TeeReader(c, h))
	obj = s.newObjectName()
	if err := s.store.Put(ctx, obj, body, size); err != nil || c.failed() != nil {
		_ = s.store.Delete(context.WithoutCancel(ctx), obj)
		if c.n > c.max {
			return "", 0, "", "", tooLarge(max)
		}
		if c.failed() != nil {
			return "", 0, "", "", c.failed()
		}
		return "", 0, "", "", err
	}
	return obj, c.n, hex.EncodeToString(h.Sum(nil)), ctype, nil
}

// Upload stores one file sent as the multipart part "file".
func (s *Service) Upload(ctx context.Context, who datascope.Caller, rawName string, r io.Reader) (UploadOutput, error) {
	l, err := s.limits(ctx)
	if err != nil {
		return UploadOutput{}, err
	}
	name, ext, err := l.name(rawName)
	if err != nil {
		return UploadOutput{}, err
	}
	obj, n, sum, ctype, err := s.save(ctx, ext, r, -1, l.max)
	if err != nil {
		return UploadOutput{}, err
	}
	f, err := s.record(ctx, who.UserID, name, ext, obj, ctype, sum, n)
	if err != nil {
		_ = s.store.Delete(context.WithoutCancel(ctx), obj)
		return UploadOutput{}, err
	}
	return s.output(f), nil
}

func (s *Service) record(ctx context.Context, userID int64, name, ext, obj, ctype, sum string, n int64) (*ent.SysFile, error) {
	org, err := s.orgOf(ctx, userID)
	if err != nil {
		return nil, err
	}
	return s.client.SysFile.Create().SetOriginalName(name).SetStoragePath(obj).SetExtension(ext).
		SetContentType(ctype).SetSizeBytes(n).SetHash(sum).SetNillableOrgID(org).SetCreateUserID(userID).Save(ctx)
}

// ---- reading ----

// Filter is the page filter (FileName).
type Filter struct{ FileName string }

// Page lists the live files visible to the caller, newest first.
func (s *Service) Page(ctx context.Context, who datascope.Caller, f Filter, p request.Page) ([]File, int, error) {
	q := s.client.SysFile.Query().Where(sysfile.IsDelete(false)).Where(visible(who)...)
	if v := strings.TrimSpace(f.FileName); v != "" {
		q.Where(sysfile.OriginalNameContainsFold(v))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	q.Order(request.Order(p, sortColumns, sysfile.FieldID, sysfile.OrderOption(ent.Desc(sysfile.FieldCreateTime, sysfile.FieldID)))...)
	rows, err := q.Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := make([]File, len(rows))
	for i, r := range rows {
		out[i] = toFile(r)
		out[i].ViewURL = s.viewURL(r.ID)
	}
	return out, total, nil
}

var sortColumns = func() map[string]string {
	m := make(map[string]string, len(sysfile.Columns))
	for _, c := range sysfile.Columns {
		m[strings.ReplaceAll(c, "_", "")] = c
	}
	return m
}()

// live returns a live file visible to who (44004 otherwise: a file out of
// scope is not revealed).
func (s *Service) live(ctx context.Context, who *datascope.Caller, id int64) (*ent.SysFile, error) {
	q := s.client.SysFile.Query().Where(sysfile.ID(id), sysfile.IsDelete(false))
	if who != nil {
		q.Where(visible(*who)...)
	}
	f, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.FileNotFound)
	}
	return f, err
}

// Download returns a visible live file for GET {id}/download.
func (s *Service) Download(ctx context.Context, who datascope.Caller, id int64) (*ent.SysFile, error) {
	return s.live(ctx, &who, id)
}

// View checks a view link and returns its file. ok is false for a bad,
// expired or foreign signature (the caller answers 403 with no body).
func (s *Service) View(ctx context.Context, id int64, exp, sig string) (*ent.SysFile, bool, error) {
	e, ok := parseExp(exp)
	if !ok || !s.ring.Verify(link.PurposeView, id, e, sig, s.now()) {
		return nil, false, nil
	}
	f, err := s.live(ctx, nil, id)
	return f, true, err
}

var digits = regexp.MustCompile(`^[0-9]{1,12}$`)

func parseExp(v string) (int64, bool) {
	if !digits.MatchString(v) {
		return 0, false
	}
	var n int64
	for _, c := range v {
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// Open reads a stored file's bytes [off, off+length).
func (s *Service) Open(ctx context.Context, f *ent.SysFile, off, length int64) (io.ReadCloser, error) {
	rc, err := s.store.Open(ctx, f.StoragePath, off, length)
	if errors.Is(err, storage.ErrNotFound) {
		s.log.Error("the content of a file is missing from the storage", "file_id", f.ID, "storage", s.store.Kind())
		return nil, errcode.New(errcode.FileNotFound)
	}
	return rc, err
}

// ---- deleting ----

// Delete soft-deletes a visible file (the bytes stay for the recycle bin).
func (s *Service) Delete(ctx context.Context, who datascope.Caller, id int64) error {
	return s.BatchDelete(ctx, who, IDsInput{IDs: []request.Int64{request.Int64(id)}})
}

// IDsInput is the body of batch-delete.
type IDsInput struct {
	IDs []request.Int64 `json:"ids"`
}

// BatchDelete soft-deletes visible files; one id that is not a visible
// live file refuses the whole batch (44004).
func (s *Service) BatchDelete(ctx context.Context, who datascope.Caller, in IDsInput) error {
	if len(in.IDs) == 0 || len(in.IDs) > 1000 {
		return request.Invalid("ids")
	}
	ids := make([]int64, 0, len(in.IDs))
	seen := map[int64]bool{}
	for _, id := range in.IDs {
		if id <= 0 {
			return request.Invalid("ids")
		}
		if !seen[int64(id)] {
			seen[int64(id)] = true
			ids = append(ids, int64(id))
		}
	}
	n, err := s.client.SysFile.Query().Where(sysfile.IDIn(ids...), sysfile.IsDelete(false)).Where(visible(who)...).Count(ctx)
	if err != nil {
		return err
	}
	if n != len(ids) {
		return errcode.New(errcode.FileNotFound)
	}
	for _, id := range ids {
		if err := s.client.SysFile.Update().Where(sysfile.ID(id), sysfile.IsDelete(false)).
			SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(who.UserID).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// ---- chunked upload ----

// InitInput is the body of chunk/init.
type InitInput struct {
	FileHash    string        `json:"fileHash"`
	FileName    string        `json:"fileName"`
	TotalSize   request.Int64 `json:"totalSize"`
	ChunkCount  request.Int64 `json:"chunkCount"`
	ContentType *string       `json:"contentType"`
}

// InitOutput is the answer of chunk/init.
type InitOutput struct {
	Uploaded        bool          `json:"uploaded"`
	File            *UploadOutput `json:"file"`
	UploadID        *int64        `json:"uploadId"`
	ReceivedIndexes []int         `json:"receivedIndexes"`
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

func checkHash(h string) (string, error) {
	h = strings.ToLower(strings.TrimSpace(h))
	if !sha256Hex.MatchString(h) {
		return "", request.Invalid("fileHash")
	}
	return h, nil
}

// Init starts or resumes a chunked upload, or answers "already uploaded"
// when a visible live file of the same content exists (instant upload: a
// new sys_file row sharing its stored object).
func (s *Service) Init(ctx context.Context, who datascope.Caller, in InitInput) (InitOutput, error) {
	s.maybeSweep(ctx)
	l, err := s.limits(ctx)
	if err != nil {
		return InitOutput{}, err
	}
	sum, err := checkHash(in.FileHash)
	if err != nil {
		return InitOutput{}, err
	}
	name, ext, err := l.name(in.FileName)
	if err != nil {
		return InitOutput{}, err
	}
	total, count := int64(in.TotalSize), int64(in.ChunkCount)
	switch {
	case total <= 0:
		return InitOutput{}, errcode.New(errcode.FileEmpty)
	case total > l.max:
		return InitOutput{}, tooLarge(l.max)
	case count < 1 || count > MaxChunks || count > total:
		return InitOutput{}, request.Invalid("chunkCount")
	}
	if _, ok := ChunkBound(total, count); !ok {
		return InitOutput{}, errcode.New(errcode.ChunkTooLarge).With("max", MaxChunkBytes)
	}
	same, err := s.client.SysFile.Query().
		Where(sysfile.Hash(sum), sysfile.SizeBytes(total), sysfile.Extension(ext), sysfile.IsDelete(false)).
		Where(visible(who)...).Order(ent.Desc(sysfile.FieldID)).First(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return InitOutput{}, err
	}
	if same != nil {
		if n, err := s.store.Size(ctx, same.StoragePath); err == nil && n == total {
			f, err := s.record(ctx, who.UserID, name, ext, same.StoragePath, deref(same.ContentType), sum, total)
			if err != nil {
				return InitOutput{}, err
			}
			out := s.output(f)
			return InitOutput{Uploaded: true, File: &out, ReceivedIndexes: []int{}}, nil
		}
	}
	up, err := s.client.SysFileUpload.Query().
		Where(sysfileupload.CreateUserID(who.UserID), sysfileupload.FileHash(sum),
			sysfileupload.TotalSize(total), sysfileupload.ChunkCount(int(count)),
			sysfileupload.TouchTimeGT(s.now().Add(-s.expiry))).
		Order(ent.Desc(sysfileupload.FieldID)).First(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return InitOutput{}, err
	}
	if up == nil {
		if err := s.checkPending(ctx, who.UserID, total); err != nil {
			return InitOutput{}, err
		}
		org, err := s.orgOf(ctx, who.UserID)
		if err != nil {
			return InitOutput{}, err
		}
		ct, _ := request.OptionalText("contentType", in.ContentType, 128)
		up, err = s.client.SysFileUpload.Create().SetFileHash(sum).SetFileName(name).SetTotalSize(total).
			SetChunkCount(int(count)).SetNillableContentType(ct).SetNillableOrgID(org).
			SetCreateUserID(who.UserID).SetTouchTime(s.now()).Save(ctx)
		if err != nil {
			return InitOutput{}, err
		}
	}
	got, err := s.client.SysFileChunk.Query().Where(sysfilechunk.UploadID(up.ID)).
		Order(ent.Asc(sysfilechunk.FieldChunkIndex)).Select(sysfilechunk.FieldChunkIndex).Ints(ctx)
	if err != nil {
		return InitOutput{}, err
	}
	if got == nil {
		got = []int{}
	}
	id := up.ID
	return InitOutput{UploadID: &id, ReceivedIndexes: got}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkPending refuses a new upload of total bytes when the user's
// unfinished uploads (not yet abandoned) would then declare more than the
// pending bound (44008, args max in MB).
func (s *Service) checkPending(ctx context.Context, userID, total int64) error {
	held, err := s.client.SysFileUpload.Query().
		Where(sysfileupload.CreateUserID(userID), sysfileupload.TouchTimeGT(s.now().Add(-s.expiry))).
		Aggregate(sum0(sysfileupload.FieldTotalSize)).Int(ctx)
	if err != nil {
		return err
	}
	if int64(held)+total > s.pending {
		return errcode.New(errcode.UploadPendingExceeded).With("max", s.pending>>20)
	}
	return nil
}

// upload returns the caller's upload in progress (44004 otherwise).
func (s *Service) upload(ctx context.Context, userID, id int64) (*ent.SysFileUpload, error) {
	up, err := s.client.SysFileUpload.Query().Where(sysfileupload.ID(id), sysfileupload.CreateUserID(userID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errcode.New(errcode.FileNotFound)
	}
	return up, err
}

// Chunk stores chunk index of upload uploadID. Sending a chunk again
// replaces it; chunks may come in any order and in parallel.
func (s *Service) Chunk(ctx context.Context, who datascope.Caller, uploadID int64, index int, r io.Reader) error {
	up, err := s.upload(ctx, who.UserID, uploadID)
	if err != nil {
		return err
	}
	if index < 0 || index >= up.ChunkCount {
		return request.Invalid("index")
	}
	// A chunk is at most the upload's chunk size, and the upload's chunks
	// together at most its total size: an upload never parks more than it
	// declared.
	bound, ok := ChunkBound(up.TotalSize, int64(up.ChunkCount))
	if !ok { // an upload row of an older release
		bound = min(up.TotalSize, MaxChunkBytes)
	}
	others, err := s.chunkBytes(ctx, up.ID, index)
	if err != nil {
		return err
	}
	limit := min(bound, up.TotalSize-others)
	h := sha256.New()
	c := &capped{r: r, max: limit}
	name := chunkName(up.ID, index)
	if err := s.store.Put(ctx, name, io.TeeReader(c, h), -1); err != nil || c.failed() != nil {
		// A chunk read in part is no chunk: whatever was stored goes.
		_ = s.store.Delete(context.WithoutCancel(ctx), name)
		if c.n > c.max {
			return errcode.New(errcode.ChunkTooLarge).With("max", limit)
		}
		if c.failed() != nil {
			return c.failed()
		}
		return err
	}
	if c.n == 0 {
		_ = s.store.Delete(ctx, name)
		return errcode.New(errcode.FileEmpty)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	n, err := s.client.SysFileChunk.Update().Where(sysfilechunk.UploadID(up.ID), sysfilechunk.ChunkIndex(index)).
		SetSizeBytes(c.n).SetHash(sum).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		err := s.client.SysFileChunk.Create().SetUploadID(up.ID).SetChunkIndex(index).SetSizeBytes(c.n).
			SetHash(sum).SetCreateUserID(who.UserID).Exec(ctx)
		if ent.IsConstraintError(err) { // a parallel copy of the same chunk won
			err = s.client.SysFileChunk.Update().Where(sysfilechunk.UploadID(up.ID), sysfilechunk.ChunkIndex(index)).
				SetSizeBytes(c.n).SetHash(sum).Exec(ctx)
		}
		if err != nil {
			return err
		}
	}
	return s.client.SysFileUpload.UpdateOneID(up.ID).SetTouchTime(s.now()).Exec(ctx)
}

// chunkBytes sums the recorded sizes of the upload's chunks other than
// index.
func (s *Service) chunkBytes(ctx context.Context, uploadID int64, index int) (int64, error) {
	n, err := s.client.SysFileChunk.Query().Where(sysfilechunk.UploadID(uploadID), sysfilechunk.ChunkIndexNEQ(index)).
		Aggregate(sum0(sysfilechunk.FieldSizeBytes)).Int(ctx)
	return int64(n), err
}

// sum0 is SUM(field), 0 over no row.
func sum0(field string) ent.AggregateFunc {
	return func(s *sql.Selector) string { return "COALESCE(" + sql.Sum(s.C(field)) + ", 0)" }
}

// CompleteInput is the body of chunk/complete.
type CompleteInput struct {
	UploadID    request.Int64 `json:"uploadId"`
	FileHash    string        `json:"fileHash"`
	FileName    string        `json:"fileName"`
	ChunkCount  request.Int64 `json:"chunkCount"`
	ContentType *string       `json:"contentType"`
}

// Complete checks that every chunk is there, assembles them in order into
// one object (streamed: never the whole file in memory), checks the whole
// file's SHA-256 and records the file.
func (s *Service) Complete(ctx context.Context, who datascope.Caller, in CompleteInput) (UploadOutput, error) {
	l, err := s.limits(ctx)
	if err != nil {
		return UploadOutput{}, err
	}
	sum, err := checkHash(in.FileHash)
	if err != nil {
		return UploadOutput{}, err
	}
	up, err := s.upload(ctx, who.UserID, int64(in.UploadID))
	if err != nil {
		return UploadOutput{}, err
	}
	if sum != up.FileHash {
		return UploadOutput{}, errcode.New(errcode.ChunkHashMismatch)
	}
	if int64(in.ChunkCount) != int64(up.ChunkCount) {
		return UploadOutput{}, request.Invalid("chunkCount")
	}
	rawName := in.FileName
	if strings.TrimSpace(rawName) == "" {
		rawName = up.FileName
	}
	name, ext, err := l.name(rawName)
	if err != nil {
		return UploadOutput{}, err
	}
	if up.TotalSize > l.max {
		return UploadOutput{}, tooLarge(l.max)
	}
	chunks, err := s.client.SysFileChunk.Query().Where(sysfilechunk.UploadID(up.ID)).
		Order(ent.Asc(sysfilechunk.FieldChunkIndex)).All(ctx)
	if err != nil {
		return UploadOutput{}, err
	}
	var missing []int
	var total int64
	next := 0
	for _, c := range chunks {
		for ; next < c.ChunkIndex; next++ {
			missing = append(missing, next)
		}
		next = c.ChunkIndex + 1
		// The stored bytes must be what the row says.
		if n, err := s.store.Size(ctx, chunkName(up.ID, c.ChunkIndex)); err != nil || n != c.SizeBytes {
			missing = append(missing, c.ChunkIndex)
		}
		total += c.SizeBytes
	}
	for ; next < up.ChunkCount; next++ {
		missing = append(missing, next)
	}
	if len(missing) > 0 {
		if len(missing) > 50 {
			missing = missing[:50]
		}
		return UploadOutput{}, errcode.New(errcode.ChunkMissing).With("missing", missing)
	}
	if total != up.TotalSize {
		return UploadOutput{}, errcode.New(errcode.ChunkHashMismatch).With("sizeBytes", total)
	}
	r := &chunkReader{ctx: ctx, s: s, upload: up.ID, count: up.ChunkCount}
	defer r.Close()
	obj, n, got, ctype, err := s.save(ctx, ext, r, up.TotalSize, l.max)
	if err != nil {
		return UploadOutput{}, err
	}
	if got != up.FileHash || n != up.TotalSize {
		_ = s.store.Delete(context.WithoutCancel(ctx), obj)
		return UploadOutput{}, errcode.New(errcode.ChunkHashMismatch)
	}
	// The upload row goes first: of two completes racing, one records.
	gone, err := s.client.SysFileUpload.Delete().Where(sysfileupload.ID(up.ID)).Exec(ctx)
	if err != nil || gone == 0 {
		_ = s.store.Delete(context.WithoutCancel(ctx), obj)
		if err == nil {
			err = errcode.New(errcode.FileNotFound)
		}
		return UploadOutput{}, err
	}
	f, err := s.record(ctx, who.UserID, name, ext, obj, ctype, got, n)
	if err != nil {
		_ = s.store.Delete(context.WithoutCancel(ctx), obj)
		return UploadOutput{}, err
	}
	s.dropChunks(context.WithoutCancel(ctx), up.ID)
	return s.output(f), nil
}

// chunkReader reads the chunks of an upload one after another.
type chunkReader struct {
	ctx    context.Context
	s      *Service
	upload int64
	count  int
	i      int
	cur    io.ReadCloser
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for {
		if c.cur == nil {
			if c.i >= c.count {
				return 0, io.EOF
			}
			rc, err := c.s.store.Open(c.ctx, chunkName(c.upload, c.i), 0, -1)
			if err != nil {
				return 0, err
			}
			c.cur = rc
			c.i++
		}
		n, err := c.cur.Read(p)
		if errors.Is(err, io.EOF) {
			_ = c.cur.Close()
			c.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (c *chunkReader) Close() {
	if c.cur != nil {
		_ = c.cur.Close()
		c.cur = nil
	}
}

// dropChunks removes an upload's chunk rows and objects.
func (s *Service) dropChunks(ctx context.Context, uploadID int64) {
	if err := s.store.DeletePrefix(ctx, chunkDir(uploadID)); err != nil {
		s.log.Warn("removing the chunks of an upload failed", "upload_id", uploadID, "error", err)
	}
	if _, err := s.client.SysFileChunk.Delete().Where(sysfilechunk.UploadID(uploadID)).Exec(ctx); err != nil {
		s.log.Warn("removing the chunk rows of an upload failed", "upload_id", uploadID, "error", err)
	}
}

// maybeSweep runs Sweep when the last one is older than sweepEvery.
func (s *Service) maybeSweep(ctx context.Context) {
	s.sweepMu.Lock()
	due := s.now().Sub(s.lastSweep) >= sweepEvery
	if due {
		s.lastSweep = s.now()
	}
	s.sweepMu.Unlock()
	if due {
		if _, err := s.Sweep(context.WithoutCancel(ctx)); err != nil {
			s.log.Warn("removing abandoned uploads failed", "error", err)
		}
	}
}

// Sweep removes the chunked uploads that received nothing for longer than
// the expiry, with their chunks. It returns how many it removed.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	old, err := s.client.SysFileUpload.Query().Where(sysfileupload.TouchTimeLT(s.now().Add(-s.expiry))).
		Limit(1000).IDs(ctx)
	if err != nil {
		return 0, err
	}
	for _, id := range old {
		if _, err := s.client.SysFileUpload.Delete().Where(sysfileupload.ID(id)).Exec(ctx); err != nil {
			return 0, err
		}
		s.dropChunks(ctx, id)
	}
	if len(old) > 0 {
		s.log.Info("removed abandoned chunked uploads", "count", len(old))
	}
	return len(old), nil
}
