package sysconfig

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adminkernel/kernel/host/errcode"
)

// Kind is the type of a config value.
type Kind uint8

// Kinds of config values. Writes are strict (Entry.Valid); reads accept
// what the kernel always read (booleans "1"/"0" and any letter case, enum
// values in any letter case) so that rows written by older releases keep
// their meaning.
const (
	// KindString is free text of at most MaxLen runes (0: no limit).
	KindString Kind = iota
	// KindBool is "true" or "false".
	KindBool
	// KindInt is a decimal integer in Min..Max.
	KindInt
	// KindEnum is one of Values.
	KindEnum
	// KindURL is empty, an absolute http(s) URL or a path starting with
	// "/", of at most MaxLen runes.
	KindURL
	// KindIDList is a comma-separated list of positive integer ids (blank
	// for none).
	KindIDList
)

// Entry describes one config key the kernel (or a consumer module) reads.
type Entry struct {
	// Key is the config key, or a family pattern with one "*" segment
	// standing for any code of [A-Za-z0-9_-]{1,64}
	// ("sys.externalauth.*.enabled").
	Key  string
	Kind Kind
	// Min and Max bound a KindInt value.
	Min, Max int64
	// Values are the values of a KindEnum.
	Values []string
	// MaxLen bounds a KindString or KindURL value in runes (0: none).
	MaxLen int
	// Optional lets a KindInt be blank (read as its Default).
	Optional bool
	// Default is what readers get when the key is missing, blank (for an
	// Optional or text kind) or invalid. It must itself be valid.
	Default string
	// OnInvalid, when set, is what an invalid stored value reads as
	// instead of Default: a switch that must fail closed (a provider whose
	// enabled switch reads "off" is off, not on by default).
	OnInvalid string
	// Area is the feature area that reads the key (the config group of a
	// seeded row).
	Area string
	// SuperAdminOnly marks a key only the super-admin writes through the
	// config center (41007 for anyone else; `adminkernel config set` on the
	// host is not refused): a bound that guards what other administrators
	// may do, such as the log retention floor.
	SuperAdminOnly bool
	// FloorKey names a KindInt key whose current value this KindInt key may
	// not be written below (43012 naming the floor): a bound another key
	// keeps, such as the log retention floor. Readers still take the larger
	// of the two, so raising the floor needs no rewrite of this key.
	FloorKey string
	// Description is shown by `adminkernel config get`.
	Description string
}

// fallback is what an invalid stored value reads as.
func (e Entry) fallback() string {
	if e.OnInvalid != "" {
		return e.OnInvalid
	}
	return e.Default
}

// IsFamily reports whether the entry is a family pattern.
func (e Entry) IsFamily() bool { return strings.Contains(e.Key, "*") }

// Expected describes the values the entry accepts, for 43012's args and the
// command line ("integer 1..1440", "true or false", ...).
func (e Entry) Expected() string {
	switch e.Kind {
	case KindBool:
		return "true or false"
	case KindInt:
		s := fmt.Sprintf("integer %d..%d", e.Min, e.Max)
		if e.Optional {
			s += " or blank"
		}
		return s
	case KindEnum:
		return "one of " + strings.Join(e.Values, ", ")
	case KindURL:
		return fmt.Sprintf("blank, an http(s) URL or a path starting with /, at most %d characters", e.MaxLen)
	case KindIDList:
		return "comma-separated positive ids, or blank"
	default:
		if e.MaxLen > 0 {
			return fmt.Sprintf("text of at most %d characters", e.MaxLen)
		}
		return "text"
	}
}

// Valid reports whether v is a value the config center accepts for the
// entry (the strict form: "true", not "TRUE" or "1").
func (e Entry) Valid(v string) bool {
	switch e.Kind {
	case KindBool:
		return v == "true" || v == "false"
	case KindInt:
		if e.Optional && strings.TrimSpace(v) == "" {
			return true
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return err == nil && n >= e.Min && n <= e.Max
	case KindEnum:
		// any letter case: the spec spells provisioning Deny/Provision
		return slices.ContainsFunc(e.Values, func(ev string) bool { return strings.EqualFold(ev, v) })
	case KindURL:
		return e.fits(v) && validURL(v)
	case KindIDList:
		_, ok := parseIDList(v)
		return ok
	default:
		return e.fits(v)
	}
}

func (e Entry) fits(v string) bool {
	return e.MaxLen <= 0 || utf8.RuneCountInString(v) <= e.MaxLen
}

func validURL(v string) bool {
	if v == "" {
		return true
	}
	if strings.ContainsAny(v, " \t\r\n") {
		return false
	}
	if strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "//") {
		return true
	}
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// parseIDList reads comma-separated positive ids; blanks between commas are
// not allowed, an all-blank value is the empty list.
func parseIDList(v string) ([]int64, bool) {
	if strings.TrimSpace(v) == "" {
		return nil, true
	}
	var ids []int64
	for part := range strings.SplitSeq(v, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil || n <= 0 {
			return nil, false
		}
		ids = append(ids, n)
	}
	return ids, true
}

// Areas of the kernel's keys (the config groups of the seeded rows).
const (
	AreaSite         = "sys"
	AreaSecurity     = "security"
	AreaExternalAuth = "externalauth"
	AreaUpload       = "upload"
	AreaJob          = "job"
	AreaRealtime     = "realtime"
)

// kernelEntries are the sys_config keys the kernel reads, with their
// types, ranges and defaults: the one source of the defaults (readers pass
// no default of their own). The registry test (registry_test.go) checks
// them against the seed rows and against the code that reads them.
func kernelEntries() []Entry {
	const maxInt = 1<<53 - 1 // ids fit a JavaScript number
	return []Entry{
		{Key: "sys.site.title", Kind: KindString, MaxLen: 128, Default: "AdminKernel", Area: AreaSite, Description: "site title (login page, browser tab)"},
		{Key: "sys.site.subtitle", Kind: KindString, MaxLen: 256, Area: AreaSite, Description: "site subtitle"},
		{Key: "sys.site.copyright", Kind: KindString, MaxLen: 256, Default: "AdminKernel", Area: AreaSite, Description: "copyright line"},
		{Key: "sys.site.copyrightUrl", Kind: KindURL, MaxLen: 2048, Area: AreaSite, Description: "link of the copyright line"},
		{Key: "sys.site.logo", Kind: KindURL, MaxLen: 2048, Area: AreaSite, Description: "site logo URL"},

		{Key: "sys.security.loginLock.maxFailCount", Kind: KindInt, Min: 0, Max: 1000000, Default: "5", Area: AreaSecurity, Description: "failed logins of one account from one client that lock it (0: never)"},
		{Key: "sys.security.loginLock.lockMinutes", Kind: KindInt, Min: 1, Max: 1440, Default: "10", Area: AreaSecurity, Description: "minutes a lock lasts"},
		{Key: "sys.security.loginLock.accountCaptchaThreshold", Kind: KindInt, Min: 0, Max: 100000, Default: "20", Area: AreaSecurity, Description: "account-wide failed logins from which every login of the account needs a captcha (0: never)"},
		{Key: "sys.security.password.minLength", Kind: KindInt, Min: 1, Max: 128, Default: "8", Area: AreaSecurity, Description: "minimum password length"},
		{Key: "sys.security.password.requireUpper", Kind: KindBool, Default: "true", Area: AreaSecurity, Description: "passwords need an upper-case letter"},
		{Key: "sys.security.password.requireLower", Kind: KindBool, Default: "true", Area: AreaSecurity, Description: "passwords need a lower-case letter"},
		{Key: "sys.security.password.requireDigit", Kind: KindBool, Default: "true", Area: AreaSecurity, Description: "passwords need a digit"},
		{Key: "sys.security.password.requireSpecial", Kind: KindBool, Default: "false", Area: AreaSecurity, Description: "passwords need another character"},
		{Key: "sys.security.password.expireDays", Kind: KindInt, Min: 0, Max: 3650, Default: "0", Area: AreaSecurity, Description: "days after which a password must be changed (0: never)"},
		{Key: "sys.security.password.historyCount", Kind: KindInt, Min: 0, Max: 24, Default: "0", Area: AreaSecurity, Description: "above 0, a new password must differ from the old one"},
		{Key: "sys.security.session.accessMinutes", Kind: KindInt, Min: 1, Max: 1440, Default: "120", Area: AreaSecurity, Description: "access-token lifetime in minutes"},
		{Key: "sys.security.session.refreshMinutes", Kind: KindInt, Min: 1, Max: 525600, Default: "10080", Area: AreaSecurity, Description: "refresh-token lifetime in minutes (at least the access lifetime)"},
		{Key: "sys.security.captcha.enabled", Kind: KindBool, Default: "false", Area: AreaSecurity, Description: "login and SMS sending need a captcha (Service:Security:Captcha:Enabled forces it on)"},
		{Key: "sys.security.captcha.type", Kind: KindEnum, Values: []string{"char", "path", "math"}, Default: "char", Area: AreaSecurity, Description: "captcha drawn: char (characters as text), path (characters as stroked outlines, not in the markup), math (a small sum; the answer is its result)"},
		{Key: "sys.security.smsLogin.enabled", Kind: KindBool, Default: "false", Area: AreaSecurity, Description: "SMS-code login"},
		{Key: "sys.security.rateLimit.enabled", Kind: KindBool, Default: "true", Area: AreaSecurity, Description: "per-client rate limiting of /api"},
		{Key: "sys.realtime.maxConnectionsPerUser", Kind: KindInt, Min: 1, Max: 100, Default: "5", Area: AreaRealtime, Description: "open realtime-hub connections one user may hold; the oldest is closed beyond it"},
		{Key: "sys.security.rateLimit.windowSeconds", Kind: KindInt, Min: 1, Max: 3600, Default: "60", Area: AreaSecurity, Description: "rate-limit window in seconds"},
		{Key: "sys.security.rateLimit.permitPerWindow", Kind: KindInt, Min: 1, Max: 1000000, Default: "300", Area: AreaSecurity, Description: "requests per client and window"},
		{Key: "sys.security.rateLimit.authPermitPerWindow", Kind: KindInt, Min: 1, Max: 100000, Default: "1200", Area: AreaSecurity, Description: "requests per client and window to /api/v1/auth except the password attempts (SSO steps, refresh, captcha, SMS, TOTP)"},
		{Key: "sys.security.rateLimit.passwordPermitPerWindow", Kind: KindInt, Min: 1, Max: 100000, Default: "60", Area: AreaSecurity, Description: "password attempts (password login, TOTP bind start, recovery) per client and window"},

		{Key: "sys.externalauth.*.enabled", Kind: KindBool, Default: "true", OnInvalid: "false", Area: AreaExternalAuth, Description: "the provider's login is offered"},
		{Key: "sys.externalauth.*.linkByAccount", Kind: KindBool, Default: "false", Area: AreaExternalAuth, Description: "an identity whose account name matches a user is linked to it"},
		{Key: "sys.externalauth.*.provisioning", Kind: KindEnum, Values: []string{"deny", "provision"}, Default: "deny", Area: AreaExternalAuth, Description: "what an unbound identity's first login does"},
		{Key: "sys.externalauth.*.defaultRoleIds", Kind: KindIDList, Area: AreaExternalAuth, Description: "roles of provisioned accounts"},
		{Key: "sys.externalauth.*.defaultOrgId", Kind: KindInt, Min: 1, Max: maxInt, Optional: true, Area: AreaExternalAuth, Description: "organisation of provisioned accounts"},
		{Key: "sys.security.totp.enabled", Kind: KindBool, Default: "false", Area: AreaSecurity, Description: "TOTP second factor"},
		{Key: "sys.security.totp.requireForSuperAdmin", Kind: KindBool, Default: "false", Area: AreaSecurity, Description: "TOTP required of the super-admin"},
		{Key: "sys.security.passkey.passwordless", Kind: KindBool, Default: "false", Area: AreaSecurity, Description: "passkey login without an account (discoverable credentials; Service:Security:Passkey names the relying party)"},

		{Key: "sys.security.mfa.enabled", Kind: KindBool, Default: "false", Area: AreaSecurity, Description: "SMS second factor after the password (users with a phone)"},
		{Key: "sys.upload.maxSizeMb", Kind: KindInt, Min: 1, Max: 10240, Default: "20", Area: AreaUpload, Description: "largest accepted upload in MB (simple and chunked)"},
		{Key: "sys.upload.allowedExtensions", Kind: KindString, MaxLen: 1024, Default: ".jpg,.png,.pdf,.xlsx,.docx,.zip", Area: AreaUpload, Description: "accepted upload extensions, comma-separated (case-insensitive)"},
		{Key: "sys.import.maxRows", Kind: KindInt, Min: 1, Max: 100000, Default: "10000", Area: AreaUpload, Description: "data rows one user import may hold (46003 beyond)"},
		{Key: "sys.export.maxRows", Kind: KindInt, Min: 1, Max: 10000000, Default: "100000", Area: AreaUpload, Description: "rows one export may hold (46012 beyond: narrow the filters)"},
		{Key: "sys.job.logRetentionDays", Kind: KindInt, Min: 1, Max: 3650, Default: "30", Area: AreaJob, FloorKey: "sys.job.logRetentionFloorDays", Description: "days the operation, login, exception and job logs are kept (the kernel.logRetention job handler; never below sys.job.logRetentionFloorDays)"},
		{Key: "sys.job.logRetentionFloorDays", Kind: KindInt, Min: 1, Max: 3650, Default: "30", Area: AreaJob, SuperAdminOnly: true, Description: "the fewest days the log retention keeps (sys.job.logRetentionDays and a system job's handlerParam days never go below it; only the super-admin changes it)"},
		{Key: "sys.job.alertEmails", Kind: KindString, MaxLen: 1024, Area: AreaJob, Description: "job alert e-mail addresses (recorded; no mailer is built: a job reaching failAlertThreshold is logged)"},
	}
}

// SysPrefix is the kernel's namespace of config keys: a key starting with
// it (in any letter case) must be registered to be written.
const SysPrefix = "sys."

// IsSys reports whether a key is in the kernel's namespace.
func IsSys(key string) bool {
	return len(key) >= len(SysPrefix) && strings.EqualFold(key[:len(SysPrefix)], SysPrefix)
}

var familyCode = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Registry is the set of config keys that are read: the kernel's plus those
// consumer modules register (module.Module.Settings). It is immutable once
// built.
type Registry struct {
	exact    map[string]Entry
	families []Entry
	all      []Entry
}

// NewRegistry returns the kernel's entries plus extra. An extra entry must
// not be in the kernel's namespace (sys.*), must not repeat a key, and its
// default must be valid.
func NewRegistry(extra ...Entry) (*Registry, error) {
	r := &Registry{exact: map[string]Entry{}}
	for _, e := range kernelEntries() {
		if err := r.add(e); err != nil {
			return nil, err
		}
	}
	for _, e := range extra {
		if IsSys(e.Key) {
			return nil, fmt.Errorf("sysconfig: %q is in the kernel's namespace (sys.*): a module registers keys of its own", e.Key)
		}
		if err := r.add(e); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *Registry) add(e Entry) error {
	if e.Key == "" || strings.Count(e.Key, "*") > 1 || (e.IsFamily() && !strings.Contains(e.Key, ".*.")) {
		return fmt.Errorf("sysconfig: %q is not a key or a family pattern (one \".*.\" segment)", e.Key)
	}
	if e.Kind == KindEnum && len(e.Values) == 0 {
		return fmt.Errorf("sysconfig: %q is an enum without values", e.Key)
	}
	if e.Kind == KindInt && e.Min > e.Max {
		return fmt.Errorf("sysconfig: %q has Min > Max", e.Key)
	}
	if !e.Valid(e.Default) {
		return fmt.Errorf("sysconfig: the default %q of %q is not %s", e.Default, e.Key, e.Expected())
	}
	if e.OnInvalid != "" && !e.Valid(e.OnInvalid) {
		return fmt.Errorf("sysconfig: the invalid-value fallback %q of %q is not %s", e.OnInvalid, e.Key, e.Expected())
	}
	if _, dup := r.Lookup(e.Key); dup {
		return fmt.Errorf("sysconfig: %q is registered twice", e.Key)
	}
	for _, f := range r.families {
		if e.IsFamily() && f.Key == e.Key {
			return fmt.Errorf("sysconfig: %q is registered twice", e.Key)
		}
	}
	if e.IsFamily() {
		r.families = append(r.families, e)
	} else {
		r.exact[e.Key] = e
	}
	r.all = append(r.all, e)
	return nil
}

// Lookup returns the entry of a key: an exact entry, else the family whose
// pattern it matches. Keys are compared exactly (letter case included).
func (r *Registry) Lookup(key string) (Entry, bool) {
	if e, ok := r.exact[key]; ok {
		return e, true
	}
	for _, f := range r.families {
		if matchFamily(f.Key, key) {
			return f, true
		}
	}
	return Entry{}, false
}

func matchFamily(pattern, key string) bool {
	i := strings.Index(pattern, "*")
	pre, suf := pattern[:i], pattern[i+1:]
	if len(key) <= len(pre)+len(suf) || !strings.HasPrefix(key, pre) || !strings.HasSuffix(key, suf) {
		return false
	}
	return familyCode.MatchString(key[len(pre) : len(key)-len(suf)])
}

// Entries returns every entry, the kernel's first, in registration order.
func (r *Registry) Entries() []Entry { return slices.Clone(r.all) }

// Check is the config center's validation of a write: a sys.* key must be
// registered and built (43013), and a registered key's value must be valid
// (43012). A nil value (NULL: readers use the default) is always accepted
// for a known key. Keys outside sys.* that nobody registered are the
// consumer's free strings.
func (r *Registry) Check(key string, value *string) error {
	e, ok := r.Lookup(key)
	if !ok {
		if IsSys(key) {
			return errcode.New(errcode.ConfigKeyUnknown).With("key", key)
		}
		return nil
	}
	if value != nil && !e.Valid(*value) {
		return errcode.New(errcode.ConfigValueInvalid).With("key", key).With("expected", e.Expected())
	}
	return nil
}
