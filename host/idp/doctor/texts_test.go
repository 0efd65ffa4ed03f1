package doctor_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/errcode"
)

// keyLiteral is the shape of a doctor msgKey in the package's source.
var keyLiteral = regexp.MustCompile(`^doctor\.[A-Za-z]+(\.[A-Za-z]+)+$`)

// emittedKeys returns every msgKey literal of the package's own (non-test)
// sources: each message and hint key the doctor can emit.
func emittedKeys(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && keyLiteral.MatchString(s) {
					seen[s] = true
				}
			}
			return true
		})
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var placeholder = regexp.MustCompile(`\{\w+\}`)

// textProblem says what is wrong with key's text in pack, measured against
// the English text ("" when nothing is).
func textProblem(pack, english map[string]string, key string) string {
	text := strings.TrimSpace(pack[key])
	if text == "" {
		return "no text"
	}
	for _, p := range placeholder.FindAllString(english[key], -1) {
		if !strings.Contains(text, p) {
			return "lacks the placeholder " + p
		}
	}
	return ""
}

// Every key the doctor can emit has a text in both language packs, with
// the English text's placeholders.
func TestEveryDoctorKeyHasTexts(t *testing.T) {
	t.Parallel()
	keys := emittedKeys(t)
	if len(keys) < 40 {
		t.Fatalf("found only %d doctor keys in the sources: %v", len(keys), keys)
	}
	english, err := errcode.LanguagePack("en-US")
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range errcode.Languages {
		pack, err := errcode.LanguagePack(lang)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range keys {
			t.Run(lang+"/"+key, func(t *testing.T) {
				t.Parallel()
				if p := textProblem(pack, english, key); p != "" {
					t.Errorf("%s %s: %s (%q)", lang, key, p, pack[key])
				}
			})
		}
	}
}

// The check above fails on a missing text or a lost placeholder.
func TestTextProblemFindsGaps(t *testing.T) {
	t.Parallel()
	english := map[string]string{"doctor.dns.fail": "{host} does not resolve: {error}."}
	cases := []struct {
		name string
		pack map[string]string
		want string
	}{
		{"complete", map[string]string{"doctor.dns.fail": "{host} 无法解析：{error}。"}, ""},
		{"missing", map[string]string{}, "no text"},
		{"blank", map[string]string{"doctor.dns.fail": " "}, "no text"},
		{"placeholder lost", map[string]string{"doctor.dns.fail": "{host} 无法解析。"}, "lacks the placeholder {error}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := textProblem(tc.pack, english, "doctor.dns.fail"); got != tc.want {
				t.Errorf("textProblem = %q, want %q", got, tc.want)
			}
		})
	}
}
