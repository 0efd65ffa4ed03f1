package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	kjson "github.com/knadh/koanf/parsers/json"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/v2"
)

// LoadOptions says where Load reads settings from.
type LoadOptions struct {
	// ContentRoot is the directory holding the settings files; "" is the
	// working directory.
	ContentRoot string
	// Environment selects appsettings.{Environment}.json; see
	// ResolveEnvironment. "" means Production.
	Environment string
	// Environ is the process environment as "KEY=value" pairs, usually
	// os.Environ(). Nil means no environment variables.
	Environ []string
}

// EnvironmentVariable names the variable ResolveEnvironment reads.
const EnvironmentVariable = "ADMINKERNEL_ENVIRONMENT"

// ResolveEnvironment returns the environment name: the flag when set, else
// ADMINKERNEL_ENVIRONMENT from environ, else Production. The known names are
// normalised to their canonical case (development: Development).
func ResolveEnvironment(flag string, environ []string) string {
	name := strings.TrimSpace(flag)
	if name == "" {
		for _, kv := range environ {
			if k, v, ok := strings.Cut(kv, "="); ok && k == EnvironmentVariable {
				name = strings.TrimSpace(v)
				break
			}
		}
	}
	return normaliseEnvironment(name)
}

func normaliseEnvironment(name string) string {
	if name == "" {
		return Production
	}
	for _, known := range []string{Development, Staging, Production} {
		if strings.EqualFold(name, known) {
			return known
		}
	}
	return name
}

var configType = reflect.TypeFor[Config]()

// Load builds the settings tree: Defaults, overlaid by appsettings.json,
// then appsettings.{Environment}.json from the content root (both
// optional), then environment variables.
//
// Keys are case-insensitive. Variables use "__" (or ":") between levels,
// Service__Database__DbType, and array indexes as levels,
// Service__ExternalAuth__Oidc__0__Code; only variables whose first level is
// a section of Config (Service, Api, Logging) are read. A JSON array
// replaces the array of earlier sources, while environment variables merge
// into it by index (an index past the end appends). Keys of map settings
// (Logging:LogLevel, vendor sections) keep the spelling of the source that
// introduced them. Unknown keys below Service, Api and Logging (not inside
// map settings, whose keys are free) are dropped and remembered with a
// did-you-mean: Validate reports them (a problem in Production, else
// Warnings lists them). Other top-level keys of the files and other
// environment variables are not settings of the kernel and are ignored.
//
// Load does not validate; call Validate on the result. Value type errors
// are returned as a *ValidationError naming each key, followed by every
// problem Validate finds in the rest of the tree (the failed keys holding
// their defaults): one pass reports everything.
func Load(opts LoadOptions) (*Config, error) {
	root, err := filepath.Abs(opts.ContentRoot)
	if err != nil {
		return nil, fmt.Errorf("content root: %w", err)
	}
	environment := normaliseEnvironment(opts.Environment)

	k := koanf.New(":")
	m := &merger{}
	merge := koanf.WithMergeFunc(func(src, dst map[string]any) error {
		m.overlay(dst, src, configType, nil)
		return nil
	})
	defaults := Defaults()
	if err := k.Load(confmap.Provider(toTree(reflect.ValueOf(defaults), "", false).(map[string]any), ""), nil, merge); err != nil {
		return nil, err
	}
	for _, name := range []string{"appsettings.json", "appsettings." + environment + ".json"} {
		m.source = name
		if err := loadFile(k, filepath.Join(root, name), merge); err != nil {
			return nil, err
		}
	}
	m.source = "environment"
	environ := env.Provider(":", env.Opt{
		EnvironFunc:   func() []string { return opts.Environ },
		TransformFunc: envKey,
	})
	if err := k.Load(environ, nil, merge); err != nil {
		return nil, fmt.Errorf("environment variables: %w", err)
	}

	var cfg Config
	if err := k.UnmarshalWithConf("", &cfg, koanf.UnmarshalConf{Tag: "koanf"}); err != nil {
		// Every other problem of the settings with them, in one pass: the
		// keys that failed take their defaults and the rest is validated
		// as Validate would (the unknown keys included), so an operator
		// fixing a type error does not meet the next problem only on the
		// next start.
		problems := decodeProblems(err)
		for _, name := range decodeNames(err) {
			resetToDefault(reflect.ValueOf(&cfg).Elem(), reflect.ValueOf(defaults), strings.Split(name, "."))
		}
		cfg.Environment = environment
		cfg.ContentRoot = root
		cfg.unknown = m.unknown
		return nil, &ValidationError{Problems: append(problems, validateProblems(&cfg)...)}
	}
	cfg.Environment = environment
	cfg.ContentRoot = root
	cfg.unknown = m.unknown
	return &cfg, nil
}

// validateProblems are the problems Validate finds in a tree decoded in
// part (a type error's key holds its default): none when it finds none or
// cannot judge the tree (a panic on a value it never expected is no reason
// to hide the type errors).
func validateProblems(cfg *Config) (out []string) {
	defer func() {
		if recover() != nil {
			out = nil
		}
	}()
	var ve *ValidationError
	if errors.As(cfg.Validate(), &ve) {
		return ve.Problems
	}
	return nil
}

// decodeNames are the keys of the Unmarshal errors, as mapstructure names
// them (Service.Database.SlowSqlMillis; Oidc[0] for an element).
func decodeNames(err error) []string {
	var out []string
	for _, leaf := range decodeLeaves(err) {
		if de, ok := leaf.(*mapstructure.DecodeError); ok { //nolint:errorlint // a leaf of decodeLeaves
			out = append(out, de.Name())
		}
	}
	return out
}

// decodeLeaves walks an Unmarshal error one wrapper at a time, so every
// branch of a joined error is reached, and returns its leaves: the
// *mapstructure.DecodeError of each key, or the innermost other error.
func decodeLeaves(err error) []error {
	var out []error
	var walk func(error)
	walk = func(err error) {
		if joined, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range joined.Unwrap() {
				walk(e)
			}
			return
		}
		if _, ok := err.(*mapstructure.DecodeError); !ok { //nolint:errorlint // one wrapper at a time
			if inner := errors.Unwrap(err); inner != nil {
				walk(inner)
				return
			}
		}
		out = append(out, err)
	}
	walk(err)
	return out
}

// resetToDefault sets the field at path (koanf names, any letter case) of
// dst to its value in def. A path through an array element or a map entry
// is left as decoded (the defaults have no such element).
func resetToDefault(dst, def reflect.Value, path []string) {
	for _, name := range path {
		if dst.Kind() != reflect.Struct || strings.ContainsAny(name, "[]") {
			return
		}
		f, ok := lookupField(dst.Type(), name)
		if !ok {
			return
		}
		dst, def = dst.FieldByIndex(f.Index), def.FieldByIndex(f.Index)
	}
	if dst.CanSet() {
		dst.Set(def)
	}
}

// rawBytes is a koanf provider for file content read by loadFile.
type rawBytes []byte

func (b rawBytes) ReadBytes() ([]byte, error)    { return b, nil }
func (b rawBytes) Read() (map[string]any, error) { return nil, errors.New("not supported") }

// loadFile merges one optional JSON settings file into k.
func loadFile(k *koanf.Koanf, path string, merge koanf.Option) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read settings: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // editors may write a BOM
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	err = k.Load(rawBytes(data), kjson.Parser(), merge)
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &syntax):
		line, col := position(data, syntax.Offset)
		return fmt.Errorf("%s: line %d, column %d: %w", path, line, col, err)
	case errors.As(err, &typ):
		line, col := position(data, typ.Offset)
		return fmt.Errorf("%s: line %d, column %d: the file must hold a JSON object", path, line, col)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// position turns the offset of a json error (bytes read before the error)
// into a 1-based line and column of the offending byte.
func position(data []byte, offset int64) (line, col int) {
	at := int(min(max(offset, 1), int64(len(data)))) - 1
	if at < 0 {
		return 1, 1
	}
	before := data[:at]
	return bytes.Count(before, []byte("\n")) + 1, at - bytes.LastIndexByte(before, '\n')
}

// envKey maps Service__Database__DbType to Service:Database:DbType and
// drops variables outside the settings sections.
func envKey(name, value string) (string, any) {
	key := strings.ReplaceAll(name, "__", ":")
	section, _, nested := strings.Cut(key, ":")
	if _, ok := lookupField(configType, section); !nested || !ok {
		return "", nil
	}
	return key, value
}

// settingName is the canonical name of a struct field, "" when the field is
// not a setting.
func settingName(f reflect.StructField) string {
	if name := f.Tag.Get("koanf"); f.IsExported() && name != "-" {
		return name
	}
	return ""
}

// lookupField finds the field of struct type t named key, ignoring case.
func lookupField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name := settingName(f); name != "" && strings.EqualFold(name, key) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// merger overlays the sources in turn and remembers the unknown keys they
// hold (source names the one being merged).
type merger struct {
	source  string
	unknown []unknownKey
}

// overlay merges src over dst following the shape of type t and returns the
// result. Struct keys are rewritten to their canonical names and unknown
// ones dropped (and recorded); map keys match case-insensitively, keeping
// dst's spelling; arrays are replaced by JSON arrays and merged by index
// from the {"0": ...} maps environment variables produce. Values of the
// wrong shape are passed through for Unmarshal to report. path is the
// canonical path of dst.
func (m *merger) overlay(dst, src any, t reflect.Type, path []string) any {
	if src == nil {
		return dst
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		s, ok := src.(map[string]any)
		if !ok {
			return src
		}
		d, _ := dst.(map[string]any)
		if d == nil {
			d = map[string]any{}
		}
		for _, k := range sortedKeys(s) {
			key := k
			var elem reflect.Type
			if t.Kind() == reflect.Struct {
				f, ok := lookupField(t, k)
				if !ok {
					m.record(path, k)
					continue
				}
				key, elem = settingName(f), f.Type
			} else {
				elem = t.Elem()
				for existing := range d {
					if strings.EqualFold(existing, k) {
						key = existing
						break
					}
				}
			}
			if v := m.overlay(d[key], s[k], elem, append(slices.Clip(path), key)); v != nil {
				d[key] = v
			}
		}
		return d
	case reflect.Slice:
		switch s := src.(type) {
		case []any:
			out := make([]any, 0, len(s))
			for i, e := range s {
				out = append(out, m.overlay(nil, e, t.Elem(), append(slices.Clip(path), strconv.Itoa(i))))
			}
			return out
		case map[string]any:
			d, _ := dst.([]any)
			d = slices.Clone(d)
			type item struct {
				index int
				value any
			}
			var items []item
			for _, k := range sortedKeys(s) {
				if i, err := strconv.Atoi(k); err == nil && i >= 0 {
					items = append(items, item{i, s[k]})
				} else {
					m.record(path, k)
				}
			}
			sort.SliceStable(items, func(a, b int) bool { return items[a].index < items[b].index })
			for _, it := range items {
				at := append(slices.Clip(path), strconv.Itoa(it.index))
				if it.index < len(d) {
					d[it.index] = m.overlay(d[it.index], it.value, t.Elem(), at)
				} else {
					d = append(d, m.overlay(nil, it.value, t.Elem(), at))
				}
			}
			return d
		}
	}
	return src
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// decodeProblems turns Unmarshal errors into one line per key, the key
// written as Service:Database:SlowSqlMillis.
func decodeProblems(err error) []string {
	var out []string
	for _, leaf := range decodeLeaves(err) {
		de, ok := leaf.(*mapstructure.DecodeError) //nolint:errorlint // a leaf of decodeLeaves
		if !ok {
			out = append(out, leaf.Error())
			continue
		}
		key := keyPath(de.Name())
		var pe *mapstructure.ParseError
		var ue *mapstructure.UnconvertibleTypeError
		switch {
		case errors.As(de, &pe):
			out = append(out, fmt.Sprintf("%s: %q is not %s", key, fmt.Sprint(pe.Value), describe(pe.Expected.Type())))
		case errors.As(de, &ue):
			out = append(out, fmt.Sprintf("%s: expected %s, got %s", key, describe(ue.Expected.Type()), describe(reflect.TypeOf(ue.Value))))
		default:
			out = append(out, fmt.Sprintf("%s: %v", key, de.Unwrap()))
		}
	}
	return out
}

// keyPath rewrites mapstructure's Service.ExternalAuth.Oidc[0].Code as
// Service:ExternalAuth:Oidc:0:Code; map keys inside brackets keep their dots.
func keyPath(name string) string {
	var b strings.Builder
	inBracket := false
	for _, r := range name {
		switch {
		case r == '[':
			inBracket = true
			b.WriteByte(':')
		case r == ']':
			inBracket = false
		case r == '.' && !inBracket:
			b.WriteByte(':')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func describe(t reflect.Type) string {
	if t == nil {
		return "null"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return describe(t.Elem())
	}
	return t.String()
}
