// Package idp is the kernel's registry of external identity providers,
// keyed by provider code. Built-in providers (the OIDC instances of
// Service:ExternalAuth:Oidc) and plugin providers (vendor binaries, started
// by the plugin host) share one key space: a code registered twice stops
// startup with an error naming both registrations.
//
// The registry only knows which providers exist and whether they work;
// plugins that cannot work (unconfigured, missing, not launched) are
// recorded without a provider so that administrators see why.
// Whether a provider is switched on is a runtime setting
// (sys.externalauth.{code}.enabled) read on every request by the
// external-login feature, so switching a provider off never touches the
// registry.
package idp

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/adminkernel/kernel/pluginsdk"
)

// Kind tells where a provider comes from.
type Kind string

// Kinds of registration.
const (
	// Builtin providers run in process (the OIDC instances).
	Builtin Kind = "builtin"
	// Plugin providers are vendor binaries run by the plugin host.
	Plugin Kind = "plugin"
	// Compiled providers are pluginsdk.Provider values a business
	// application compiled in (host.Options.Providers); they run in process.
	Compiled Kind = "compiled"
)

// Source names one registration: its kind and where it was declared (a
// settings key such as Service:ExternalAuth:Oidc:0, or a plugin binary).
type Source struct {
	Kind Kind
	Name string
}

// BuiltinSource is a built-in registration declared at name.
func BuiltinSource(name string) Source { return Source{Kind: Builtin, Name: name} }

// CompiledSource is a compiled-in registration declared at name (for
// example host.Options.Providers[0]).
func CompiledSource(name string) Source { return Source{Kind: Compiled, Name: name} }

// PluginSource is a plugin registration from the binary at name.
func PluginSource(name string) Source { return Source{Kind: Plugin, Name: name} }

func (s Source) String() string {
	if s.Name == "" {
		return string(s.Kind)
	}
	return fmt.Sprintf("%s %s", s.Kind, s.Name)
}

// Status is the condition of a provider: whether it takes part in logins,
// and if not, why. Only Ready providers are offered to end users.
type Status string

// Statuses of an entry. Ready, Degraded and Misconfigured entries have a
// provider; Unconfigured, Missing and NotLaunched entries are recorded
// without one (Record), so administrators see them, and are never called.
const (
	// Ready providers take part in logins.
	Ready Status = "ready"
	// Degraded providers are registered but currently failing (a crashed
	// plugin being restarted). They are not offered until they are ready
	// again; a login already under way may still complete.
	Degraded Status = "degraded"
	// Misconfigured providers run but refused their settings (the reason is
	// the provider's own message). They are not offered.
	Misconfigured Status = "misconfigured"
	// Unconfigured plugins have an empty settings section: not started.
	Unconfigured Status = "unconfigured"
	// Missing plugins have settings but no usable binary in the plugin
	// folder.
	Missing Status = "missing"
	// NotLaunched plugins have settings and a binary that failed its
	// checks (SHA-256 pin, code, protocol) or its start.
	NotLaunched Status = "not launched"
)

// Entry is one registered or recorded provider.
type Entry struct {
	Code string
	// Provider is nil for entries recorded without one (Unconfigured,
	// Missing, NotLaunched).
	Provider pluginsdk.Provider
	Source   Source
	Status   Status
	// Reason says why the status is not Ready ("" when it is).
	Reason string
}

// Ready reports whether the entry takes part in logins: it has a provider
// and its status is Ready.
func (e Entry) Ready() bool { return e.Provider != nil && e.Status == Ready }

// DuplicateError reports a provider code registered twice.
type DuplicateError struct {
	Code          string
	First, Second Source
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("external login provider code %q is registered twice: by %s and by %s; provider codes must be unique", e.Code, e.First, e.Second)
}

// codePattern is what a provider code may look like: it appears in URLs,
// config keys (sys.externalauth.{code}.enabled) and 32-character columns.
var codePattern = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)

// ValidCode reports whether code can be registered.
func ValidCode(code string) bool { return codePattern.MatchString(code) }

// Registry maps provider codes to providers. It is safe for concurrent use.
type Registry struct {
	mu      sync.RWMutex
	entries []*Entry
	byCode  map[string]*Entry // exact code
	folded  map[string]*Entry // lower-case code: duplicates differing in case are refused too
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byCode: map[string]*Entry{}, folded: map[string]*Entry{}}
}

// Register adds a provider under code, with status Ready. A code that is
// already registered (compared case-insensitively, since codes end up in
// case-insensitive config keys) is refused with a *DuplicateError naming
// both registrations; so are an invalid code and a nil provider.
func (r *Registry) Register(code string, p pluginsdk.Provider, src Source) error {
	if p == nil {
		return fmt.Errorf("external login provider %q (%s) is nil", code, src)
	}
	return r.add(&Entry{Code: code, Provider: p, Source: src, Status: Ready})
}

// Record lists a provider that cannot take part in logins, without a
// provider: a plugin that is unconfigured, missing or not launched, with
// the reason. Its code is taken like a registered one (a *DuplicateError
// when it already is); st must be Unconfigured, Missing or NotLaunched.
func (r *Registry) Record(code string, src Source, st Status, reason string) error {
	switch st {
	case Unconfigured, Missing, NotLaunched:
	default:
		return fmt.Errorf("external login provider %q (%s): status %q cannot be recorded without a provider", code, src, st)
	}
	return r.add(&Entry{Code: code, Source: src, Status: st, Reason: reason})
}

func (r *Registry) add(e *Entry) error {
	if !ValidCode(e.Code) {
		return fmt.Errorf("external login provider code %q (%s) may contain only letters, digits and underscores, at most 32 characters", e.Code, e.Source)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.folded[strings.ToLower(e.Code)]; ok {
		return &DuplicateError{Code: e.Code, First: prev.Source, Second: e.Source}
	}
	r.entries = append(r.entries, e)
	r.byCode[e.Code] = e
	r.folded[strings.ToLower(e.Code)] = e
	return nil
}

// Get returns the provider registered under exactly code.
func (r *Registry) Get(code string) (Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.byCode[code]
	if !ok {
		return Entry{}, false
	}
	return *e, true
}

// List returns every entry in registration order.
func (r *Registry) List() []Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Entry, len(r.entries))
	for i, e := range r.entries {
		out[i] = *e
	}
	return out
}

// SetStatus records the condition of a registered provider and why (""
// for Ready): the plugin host marks a crashed plugin Degraded, one that
// refuses its settings Misconfigured and a restarted one Ready. Entries
// recorded without a provider keep their status.
func (r *Registry) SetStatus(code string, s Status, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byCode[code]
	if !ok {
		return fmt.Errorf("external login provider %q is not registered", code)
	}
	if e.Provider == nil {
		return fmt.Errorf("external login provider %q is %s, without a provider", code, e.Status)
	}
	e.Status, e.Reason = s, reason
	return nil
}

// Len returns the number of registered providers.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.entries)
}
