package configcenter

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/sysconfig"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/cache"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/request"
	settings "github.com/adminkernel/kernel/host/sysconfig"
)

// Site keys (wire contract §4.5 and §6).
const (
	KeySiteTitle        = "sys.site.title"
	KeySiteSubtitle     = "sys.site.subtitle"
	KeySiteCopyright    = "sys.site.copyright"
	KeySiteCopyrightURL = "sys.site.copyrightUrl"
	KeySiteLogo         = "sys.site.logo"
)

// Column bounds of sys_config (ent schema); longer input is 48002.
const (
	maxNameLen   = 128
	maxGroupLen  = 64
	maxRemarkLen = 512
)

var keyPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// Config is the contract's SysConfig.
type Config struct {
	ID int64 `json:"id"`
	request.Audit
	ConfigKey   string  `json:"configKey"`
	ConfigValue *string `json:"configValue"`
	Name        string  `json:"name"`
	GroupCode   *string `json:"groupCode"`
	Sort        int     `json:"sort"`
	Remark      *string `json:"remark"`
}

// Input is the body of POST and PUT /sys/config (configKey is ignored by PUT).
type Input struct {
	ConfigKey   string        `json:"configKey"`
	ConfigValue *string       `json:"configValue"`
	Name        string        `json:"name"`
	GroupCode   *string       `json:"groupCode"`
	Sort        request.Int64 `json:"sort"`
	Remark      *string       `json:"remark"`
}

// BatchItem is one element of PUT /sys/config/batch.
type BatchItem struct {
	ConfigKey   string  `json:"configKey"`
	ConfigValue *string `json:"configValue"`
}

// SiteInfo is the anonymous site information (wire contract §6 item 1).
type SiteInfo struct {
	Title           *string `json:"title"`
	Subtitle        *string `json:"subtitle"`
	Copyright       *string `json:"copyright"`
	CopyrightURL    *string `json:"copyrightUrl"`
	Logo            *string `json:"logo"`
	CaptchaEnabled  bool    `json:"captchaEnabled"`
	SmsLoginEnabled bool    `json:"smsLoginEnabled"`
	// PasskeyPasswordless is sys.security.passkey.passwordless (a kernel
	// extension: the login page offers the passwordless passkey login).
	PasskeyPasswordless bool `json:"passkeyPasswordless"`
}

// Filter is the query of GET /sys/config/page.
type Filter struct {
	ConfigKey          string
	Name               string
	GroupCode          string
	ExcludedGroupCodes []string
}

// Service is the config center. Every value written is checked against the
// settings service's registry (43012, 43013), and every change goes through
// Settings.Changed, so it is visible to every reader of the settings service
// on the next request.
type Service struct {
	client   *ent.Client
	store    cache.Store
	settings *settings.Service
	// captchaForced is Service:Security:Captcha:Enabled: it turns the
	// captcha on whatever the runtime switch says.
	captchaForced bool
	// ttl is the lifetime of the cached site info.
	ttl time.Duration
}

// NewService returns the config center on the settings service's database
// and cache (the HTTP routes' and `adminkernel config set`'s one service).
func NewService(client *ent.Client, store cache.Store, set *settings.Service, cfg *config.Config) *Service {
	return &Service{
		client: client, store: store, settings: set,
		captchaForced: cfg.Service.Security.Captcha.Enabled,
		ttl:           time.Duration(cfg.Service.Cache.PermissionMinutes) * time.Minute,
	}
}

func toDTO(r *ent.SysConfig) Config {
	return Config{
		ID: r.ID, Audit: request.AuditOf(r.IsDelete, r.CreateTime, r.CreateUserID, r.UpdateTime, r.UpdateUserID),
		ConfigKey: r.ConfigKey, ConfigValue: r.ConfigValue, Name: r.Name,
		GroupCode: r.GroupCode, Sort: r.Sort, Remark: r.Remark,
	}
}

// sortColumns maps the contract's property names (lower-cased) to columns.
var sortColumns = map[string]string{
	"id":           sysconfig.FieldID,
	"isdelete":     sysconfig.FieldIsDelete,
	"createtime":   sysconfig.FieldCreateTime,
	"createuserid": sysconfig.FieldCreateUserID,
	"updatetime":   sysconfig.FieldUpdateTime,
	"updateuserid": sysconfig.FieldUpdateUserID,
	"configkey":    sysconfig.FieldConfigKey,
	"configvalue":  sysconfig.FieldConfigValue,
	"name":         sysconfig.FieldName,
	"groupcode":    sysconfig.FieldGroupCode,
	"sort":         sysconfig.FieldSort,
	"remark":       sysconfig.FieldRemark,
}

// Page lists live config rows. The default order is sort, then id; a
// SortField naming a real column orders by it first (id breaks ties).
func (s *Service) Page(ctx context.Context, f Filter, p request.Page) ([]Config, int, error) {
	q := s.client.SysConfig.Query().Where(sysconfig.IsDelete(false))
	if v := strings.TrimSpace(f.ConfigKey); v != "" {
		q.Where(sysconfig.ConfigKeyContainsFold(v))
	}
	if v := strings.TrimSpace(f.Name); v != "" {
		q.Where(sysconfig.NameContainsFold(v))
	}
	if v := strings.TrimSpace(f.GroupCode); v != "" {
		q.Where(sysconfig.GroupCode(v))
	}
	var excluded []string
	for _, g := range f.ExcludedGroupCodes {
		if g = strings.TrimSpace(g); g != "" {
			excluded = append(excluded, g)
		}
	}
	if len(excluded) > 0 {
		// NOT IN is unknown for NULL: rows without a group belong to
		// "the remaining groups" too.
		q.Where(sysconfig.Or(sysconfig.GroupCodeIsNil(), sysconfig.GroupCodeNotIn(excluded...)))
	}
	total, err := q.Clone().Count(ctx)
	if err != nil {
		return nil, 0, err
	}
	order := []sysconfig.OrderOption{orderBy(sysconfig.FieldSort, false), orderBy(sysconfig.FieldID, false)}
	if col, ok := sortColumns[strings.ToLower(strings.TrimSpace(p.SortField))]; ok {
		order = []sysconfig.OrderOption{orderBy(col, p.Desc), orderBy(sysconfig.FieldID, p.Desc)}
	}
	rows, err := q.Order(order...).Offset(p.Offset()).Limit(p.Size).All(ctx)
	if err != nil {
		return nil, 0, err
	}
	items := make([]Config, len(rows))
	for i, r := range rows {
		items[i] = toDTO(r)
	}
	return items, total, nil
}

func orderBy(col string, desc bool) sysconfig.OrderOption {
	if desc {
		return ent.Desc(col)
	}
	return ent.Asc(col)
}

// Get returns a live row (43004 when missing or deleted).
func (s *Service) Get(ctx context.Context, id int64) (Config, error) {
	r, err := s.client.SysConfig.Query().Where(sysconfig.ID(id), sysconfig.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return Config{}, errcode.New(errcode.ConfigNotFound)
	}
	if err != nil {
		return Config{}, err
	}
	return toDTO(r), nil
}

// Value reads one key through the cache; nil when missing, deleted or NULL.
func (s *Service) Value(ctx context.Context, key string) (*string, error) {
	if !keyPattern.MatchString(key) {
		// Such a key can never exist: answer without caching a miss for it.
		return nil, nil
	}
	v, ok, err := s.settings.Value(ctx, key)
	if err != nil || !ok {
		return nil, err
	}
	return &v, nil
}

// Site returns the site info, cached as one entry (settings.SiteKey) that
// Settings.Changed drops whenever a key it is built from changes.
func (s *Service) Site(ctx context.Context) (SiteInfo, error) {
	var out SiteInfo
	if b, ok, err := s.store.Get(ctx, settings.SiteKey); err == nil && ok && json.Unmarshal(b, &out) == nil {
		return out, nil
	}
	out = SiteInfo{}
	for _, f := range []struct {
		key string
		dst **string
	}{
		{KeySiteTitle, &out.Title},
		{KeySiteSubtitle, &out.Subtitle},
		{KeySiteCopyright, &out.Copyright},
		{KeySiteCopyrightURL, &out.CopyrightURL},
		{KeySiteLogo, &out.Logo},
	} {
		v, ok, err := s.settings.Value(ctx, f.key)
		if err != nil {
			return SiteInfo{}, err
		}
		if ok {
			*f.dst = &v
		}
	}
	captcha, err := s.settings.Bool(ctx, settings.KeyCaptchaEnabled)
	if err != nil {
		return SiteInfo{}, err
	}
	out.CaptchaEnabled = s.captchaForced || captcha
	if out.SmsLoginEnabled, err = s.settings.Bool(ctx, settings.KeySmsLoginEnabled); err != nil {
		return SiteInfo{}, err
	}
	if out.PasskeyPasswordless, err = s.settings.Bool(ctx, settings.KeyPasskeyPasswordless); err != nil {
		return SiteInfo{}, err
	}
	if b, err := json.Marshal(out); err == nil {
		// A cache write failure only costs a rebuild next time.
		_ = s.store.Set(ctx, settings.SiteKey, b, s.ttl)
	}
	return out, nil
}

// Batch is PUT /sys/config/batch: SetValues for the signed-in user.
func (s *Service) Batch(ctx context.Context, userID int64, items []BatchItem) error {
	_, err := s.SetValues(ctx, userID, items)
	return err
}

// SetValues writes config values in one transaction, all or nothing: the
// path of PUT /sys/config/batch and of `adminkernel config set` (userID 0:
// no user). Every value is first checked against the registry: a sys.* key
// it does not name is 43013, an invalid value 43012, and then nothing is
// written (a deviation from the contract's "unknown keys are ignored",
// docs/reference/compatibility.md). The last occurrence of a key wins, as a sequence
// of updates would. A registered key without a live row gets one (name =
// key, group = the entry's area); other keys without a live row are
// ignored. Name, group and sort of existing rows are never touched. The
// changed keys (and the site info when it is built from one of them) are
// invalidated after the commit; they are returned in request order.
func (s *Service) SetValues(ctx context.Context, userID int64, items []BatchItem) ([]string, error) {
	want := make(map[string]*string, len(items))
	keys := make([]string, 0, len(items))
	for _, it := range items {
		if err := s.settings.Registry().Check(it.ConfigKey, it.ConfigValue); err != nil {
			return nil, err
		}
		if err := s.superOnly(ctx, userID, it.ConfigKey); err != nil {
			return nil, err
		}
		if !keyPattern.MatchString(it.ConfigKey) {
			continue // cannot name an existing key (and is not a sys.* one)
		}
		if _, dup := want[it.ConfigKey]; !dup {
			keys = append(keys, it.ConfigKey)
		}
		want[it.ConfigKey] = it.ConfigValue
	}
	for _, k := range keys {
		if err := s.aboveFloor(ctx, k, want[k], want); err != nil {
			return nil, err
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	var changed []string
	err := database.WithTx(ctx, s.client, func(tx *ent.Tx) error {
		changed = changed[:0]
		rows, err := tx.SysConfig.Query().
			Where(sysconfig.ConfigKeyIn(keys...), sysconfig.IsDelete(false)).
			All(ctx)
		if err != nil {
			return err
		}
		byKey := make(map[string]*ent.SysConfig, len(rows))
		for _, r := range rows {
			byKey[r.ConfigKey] = r // exact keys only, whatever the collation
		}
		for _, k := range keys { // in request order
			r, ok := byKey[k]
			v := want[k]
			if !ok {
				e, known := s.settings.Registry().Lookup(k)
				if !known || v == nil {
					continue
				}
				c := tx.SysConfig.Create().SetConfigKey(k).SetConfigValue(*v).SetName(k).SetGroupCode(e.Area)
				if userID != 0 {
					c.SetCreateUserID(userID)
				}
				if err := c.Exec(ctx); err != nil {
					return err
				}
				changed = append(changed, k)
				continue
			}
			if equalPtr(r.ConfigValue, v) {
				continue
			}
			u := tx.SysConfig.UpdateOneID(r.ID)
			if userID != 0 {
				u.SetUpdateUserID(userID)
			}
			if v == nil {
				u.ClearConfigValue()
			} else {
				u.SetConfigValue(*v)
			}
			if err := u.Exec(ctx); err != nil {
				return err
			}
			changed = append(changed, r.ConfigKey)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return changed, s.settings.Changed(ctx, changed...)
}

// Add creates a key (43005 when a live row holds it).
func (s *Service) Add(ctx context.Context, userID int64, in Input) (int64, error) {
	key := strings.TrimSpace(in.ConfigKey)
	if !keyPattern.MatchString(key) {
		return 0, request.Invalid("configKey")
	}
	if err := validate(&in); err != nil {
		return 0, err
	}
	if err := s.settings.Registry().Check(key, in.ConfigValue); err != nil {
		return 0, err
	}
	if err := s.superOnly(ctx, userID, key); err != nil {
		return 0, err
	}
	if err := s.aboveFloor(ctx, key, in.ConfigValue, nil); err != nil {
		return 0, err
	}
	taken, err := s.client.SysConfig.Query().Where(sysconfig.ConfigKey(key), sysconfig.IsDelete(false)).Exist(ctx)
	if err != nil {
		return 0, err
	}
	if taken {
		return 0, errcode.New(errcode.ConfigKeyExists)
	}
	row, err := s.client.SysConfig.Create().
		SetConfigKey(key).
		SetNillableConfigValue(in.ConfigValue).
		SetName(in.Name).
		SetNillableGroupCode(in.GroupCode).
		SetSort(int(in.Sort)).
		SetNillableRemark(in.Remark).
		SetCreateUserID(userID).
		Save(ctx)
	if ent.IsConstraintError(err) {
		// A concurrent add won the unique (config_key, delete_key) index.
		return 0, errcode.New(errcode.ConfigKeyExists).Wrap(err)
	}
	if err != nil {
		return 0, err
	}
	// A miss for this key may be cached.
	return row.ID, s.settings.Changed(ctx, key)
}

// Update rewrites value, name, group, sort and remark of a live row; its key
// is immutable.
func (s *Service) Update(ctx context.Context, userID, id int64, in Input) error {
	if err := validate(&in); err != nil {
		return err
	}
	row, err := s.client.SysConfig.Query().Where(sysconfig.ID(id), sysconfig.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return errcode.New(errcode.ConfigNotFound)
	}
	if err != nil {
		return err
	}
	if err := s.settings.Registry().Check(row.ConfigKey, in.ConfigValue); err != nil {
		return err
	}
	if err := s.superOnly(ctx, userID, row.ConfigKey); err != nil {
		return err
	}
	if err := s.aboveFloor(ctx, row.ConfigKey, in.ConfigValue, nil); err != nil {
		return err
	}
	u := s.client.SysConfig.UpdateOneID(id).Where(sysconfig.IsDelete(false)).
		SetName(in.Name).SetSort(int(in.Sort)).SetUpdateUserID(userID)
	if in.ConfigValue == nil {
		u.ClearConfigValue()
	} else {
		u.SetConfigValue(*in.ConfigValue)
	}
	if in.GroupCode == nil {
		u.ClearGroupCode()
	} else {
		u.SetGroupCode(*in.GroupCode)
	}
	if in.Remark == nil {
		u.ClearRemark()
	} else {
		u.SetRemark(*in.Remark)
	}
	err = u.Exec(ctx)
	if ent.IsNotFound(err) {
		return errcode.New(errcode.ConfigNotFound) // deleted meanwhile
	}
	if err != nil {
		return err
	}
	return s.settings.Changed(ctx, row.ConfigKey)
}

// Delete soft-deletes a live row (is_delete and delete_key = id), which
// frees its key for re-creation.
func (s *Service) Delete(ctx context.Context, userID, id int64) error {
	row, err := s.client.SysConfig.Query().Where(sysconfig.ID(id), sysconfig.IsDelete(false)).Only(ctx)
	if ent.IsNotFound(err) {
		return errcode.New(errcode.ConfigNotFound)
	}
	if err != nil {
		return err
	}
	if err := s.superOnly(ctx, userID, row.ConfigKey); err != nil {
		return err
	}
	err = s.client.SysConfig.UpdateOneID(id).Where(sysconfig.IsDelete(false)).
		SetIsDelete(true).SetDeleteKey(id).SetUpdateUserID(userID).Exec(ctx)
	if ent.IsNotFound(err) {
		return errcode.New(errcode.ConfigNotFound)
	}
	if err != nil {
		return err
	}
	return s.settings.Changed(ctx, row.ConfigKey)
}

// validate checks the editable fields against the column bounds; an empty
// group code or remark is stored as NULL.
func validate(in *Input) error {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || utf8.RuneCountInString(in.Name) > maxNameLen {
		return request.Invalid("name")
	}
	in.GroupCode = blankToNil(in.GroupCode)
	if in.GroupCode != nil && utf8.RuneCountInString(*in.GroupCode) > maxGroupLen {
		return request.Invalid("groupCode")
	}
	in.Remark = blankToNil(in.Remark)
	if in.Remark != nil && utf8.RuneCountInString(*in.Remark) > maxRemarkLen {
		return request.Invalid("remark")
	}
	return nil
}

func blankToNil(p *string) *string {
	if p == nil {
		return nil
	}
	v := strings.TrimSpace(*p)
	if v == "" {
		return nil
	}
	return &v
}

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// aboveFloor refuses (43012, args key and expected) a value of a key with
// a FloorKey below the floor's value: the one written with it in the same
// batch (batch may be nil), else the stored one. A nil or blank value reads
// as the default, which the floor also bounds at read time.
func (s *Service) aboveFloor(ctx context.Context, key string, value *string, batch map[string]*string) error {
	e, ok := s.settings.Registry().Lookup(key)
	if !ok || e.FloorKey == "" || value == nil || strings.TrimSpace(*value) == "" {
		return nil
	}
	n, ok := parseInt64(*value)
	if !ok {
		return nil // Check has refused what is not an integer
	}
	var floor int64
	if fv, inBatch := batch[e.FloorKey]; inBatch && fv != nil {
		if floor, ok = parseInt64(*fv); !ok {
			return nil // the floor's own Check refuses it
		}
	} else {
		f, err := s.settings.Int(ctx, e.FloorKey)
		if err != nil {
			return err
		}
		floor = int64(f)
	}
	if n < floor {
		return errcode.New(errcode.ConfigValueInvalid).With("key", key).
			With("expected", fmt.Sprintf("integer %d..%d (not below %s)", floor, e.Max, e.FloorKey))
	}
	return nil
}

// parseInt64 reads a trimmed decimal integer.
func parseInt64(v string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil
}

// superOnly refuses (41003, arg key) a write of a SuperAdminOnly key by a
// user other than the super-admin; userID 0 is the host's command line.
func (s *Service) superOnly(ctx context.Context, userID int64, key string) error {
	e, ok := s.settings.Registry().Lookup(key)
	if !ok || !e.SuperAdminOnly || userID == 0 {
		return nil
	}
	super, err := s.client.SysUser.Query().Where(sysuser.ID(userID), sysuser.IsSuperAdmin(true), sysuser.IsDelete(false)).Exist(ctx)
	if err != nil {
		return err
	}
	if !super {
		return errcode.New(errcode.SuperAdminRequired).With("key", key)
	}
	return nil
}
