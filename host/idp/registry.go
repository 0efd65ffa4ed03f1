// Package idp is the kernel's registry of external identity providers,
// keyed by provider code. Built-in providers (the OIDC instances of
// Service:ExternalAuth:Oidc) and plugin providers (vendor binaries, started
// by the plugin host) share one key space: a code registered twice stops
// startup with an error naming both registrations.
//
// The registry only knows which providers exist and whether they work.
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
)

// Source names one registration: its kind and where it was declared (a
// settings key such as Service:ExternalAuth:Oidc:0, or a plugin binary).
type Source struct {
	Kind Kind
	Name string
}

// BuiltinSource is a built-in registration declared at name.
func BuiltinSource(name string) Source { return Source{Kind: Builtin, Name: name} }

// PluginSource is a plugin registration from the binary at name.
func PluginSource(name string) Source { return Source{Kind: Plugin, Name: name} }

func (s Source) String() string {
	if s.Name == "" {
		return string(s.Kind)
	}
	return fmt.Sprintf("%s %s", s.Kind, s.Name)
}

// Status is the health of a registered provider.
type Status string

// Statuses of an entry.
const (
	// Ready providers take part in logins.
	Ready Status = "ready"
	// Degraded providers are registered but currently failing (a crashed
	// plugin being restarted, an unreachable discovery document). They stay
	// listed so administrators see them.
	Degraded Status = "degraded"
)

// Entry is one registered provider.
type Entry struct {
	Code     string
	Provider pluginsdk.Provider
	Source   Source
	Status   Status
}

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
	if !ValidCode(code) {
		return fmt.Errorf("external login provider code %q (%s) may contain only letters, digits and underscores, at most 32 characters", code, src)
	}
	if p == nil {
		return fmt.Errorf("external login provider %q (%s) is nil", code, src)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.folded[strings.ToLower(code)]; ok {
		return &DuplicateError{Code: code, First: prev.Source, Second: src}
	}
	e := &Entry{Code: code, Provider: p, Source: src, Status: Ready}
	r.entries = append(r.entries, e)
	r.byCode[code] = e
	r.folded[strings.ToLower(code)] = e
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

// SetStatus records the health of a registered provider (the plugin host
// marks a crashed plugin Degraded and a restarted one Ready).
func (r *Registry) SetStatus(code string, s Status) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.byCode[code]
	if !ok {
		return fmt.Errorf("external login provider %q is not registered", code)
	}
	e.Status = s
	return nil
}

// Len returns the number of registered providers.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.entries)
}
