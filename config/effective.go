package config

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// sensitiveParts are the name fragments that mark a value as sensitive.
var sensitiveParts = []string{
	"password", "pwd", "secret", "token", "credential",
	"header", "authorization", "apikey", "api_key", "cookie",
}

// SensitiveName reports whether a setting, parameter or field called name
// holds a value that must never be printed: its name contains,
// case-insensitively, password, pwd, secret, token, credential, header,
// authorization, apikey, api_key or cookie. Only names are tested, never
// values. The SQL log and the operation log use the same list.
func SensitiveName(name string) bool {
	name = strings.ToLower(name)
	for _, part := range sensitiveParts {
		if strings.Contains(name, part) {
			return true
		}
	}
	return false
}

var (
	// key=value pairs of ADO-style (";"-separated) connection strings.
	adoPair = regexp.MustCompile(`(^|;)(\s*)([^=;]+?)(\s*=\s*)("(?:[^"]|"")*"|'(?:[^']|'')*'|[^;]*)`)
	// key=value pairs of space-separated DSNs and URL query strings.
	wordPair = regexp.MustCompile(`(^|[\s?&])([\w.-]+)(\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`)
	// user:password@ in URLs and DSNs (the last @ ends the password).
	userInfo = regexp.MustCompile(`(^|[\s=])([A-Za-z][\w+.-]*://)?([^\s:@/]*):(\S*)@`)
)

// MaskConnectionString replaces the passwords in a connection string or
// URL by ***: the value of every key=value pair whose key is a
// SensitiveName (Password=...; pwd=..., ?token=...) and, in strings
// without ";", the password of user:pass@. Everything else stays readable.
func MaskConnectionString(s string) string {
	if strings.Contains(s, ";") {
		return adoPair.ReplaceAllStringFunc(s, func(m string) string {
			p := adoPair.FindStringSubmatch(m)
			if !SensitiveName(p[3]) {
				return m
			}
			return p[1] + p[2] + p[3] + p[4] + masked
		})
	}
	s = wordPair.ReplaceAllStringFunc(s, func(m string) string {
		p := wordPair.FindStringSubmatch(m)
		if !SensitiveName(p[2]) {
			return m
		}
		return p[1] + p[2] + p[3] + masked
	})
	return userInfo.ReplaceAllString(s, "${1}${2}${3}:"+masked+"@")
}

// WriteEffective prints the effective settings as indented JSON with the
// canonical key spelling, Environment and ContentRoot first. Secrets print
// as ***, except ConnectionString, whose password alone is masked; string
// values whose key is a SensitiveName print as ***; passwords inside URLs
// and connection strings elsewhere are masked too.
func (c *Config) WriteEffective(w io.Writer) error {
	doc := object{{"Environment", c.Environment}, {"ContentRoot", c.ContentRoot}}
	doc = append(doc, toTree(reflect.ValueOf(*c), "", true).(object)...)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

var secretType = reflect.TypeFor[Secret]()

// toTree turns settings into plain values keyed by canonical names: a
// map[string]any tree with secrets revealed (to seed Load with the
// defaults), or, when printing, an ordered object tree with secrets masked.
// name is the setting's own name, used to spot sensitive values.
func toTree(v reflect.Value, name string, printing bool) any {
	if v.Type() == secretType {
		s := Secret(v.String())
		switch {
		case !printing:
			return s.Reveal()
		case name == "ConnectionString":
			return MaskConnectionString(s.Reveal())
		}
		return s.String()
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return toTree(v.Elem(), name, printing)
	case reflect.Struct:
		var obj object
		for i := range v.NumField() {
			if n := settingName(v.Type().Field(i)); n != "" {
				obj = append(obj, member{n, toTree(v.Field(i), n, printing)})
			}
		}
		return obj.result(printing)
	case reflect.Map:
		if v.IsNil() && !printing {
			return nil
		}
		var obj object
		for _, k := range v.MapKeys() {
			obj = append(obj, member{k.String(), toTree(v.MapIndex(k), k.String(), printing)})
		}
		sort.Slice(obj, func(i, j int) bool { return obj[i].key < obj[j].key })
		return obj.result(printing)
	case reflect.Slice:
		if v.IsNil() && !printing {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = toTree(v.Index(i), name, printing)
		}
		return out
	case reflect.String:
		s := v.String()
		switch {
		case !printing || s == "":
			return s
		case SensitiveName(name):
			return masked
		}
		return MaskConnectionString(s)
	}
	return v.Interface()
}

// object is a JSON object that keeps its key order.
type object []member

type member struct {
	key   string
	value any
}

// result is obj itself when printing, else a map without null values.
func (obj object) result(printing bool) any {
	if printing {
		return obj
	}
	m := make(map[string]any, len(obj))
	for _, e := range obj {
		if e.value != nil {
			m[e.key] = e.value
		}
	}
	return m
}

// MarshalJSON writes the members in order.
func (obj object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, e := range obj {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(e.key); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := enc.Encode(e.value); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
