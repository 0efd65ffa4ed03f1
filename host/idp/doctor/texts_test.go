package doctor_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/idp/doctor"
)

// The console translates every message and hint key of the doctor, in
// both languages, with the same placeholders as the English text.
func TestConsoleTexts(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "console", "src", "i18n", "doctor.ts"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	zhAt := strings.Index(src, "'zh-CN': {")
	if zhAt < 0 {
		t.Fatal("doctor.ts has no zh-CN pack")
	}
	placeholders := regexp.MustCompile(`\{\w+\}`)
	for _, key := range doctor.Keys() {
		for _, pack := range []struct{ name, body string }{{"en-US", src[:zhAt]}, {"zh-CN", src[zhAt:]}} {
			m := regexp.MustCompile(`"` + regexp.QuoteMeta(key) + `": "((?:[^"\\]|\\.)*)"`).FindStringSubmatch(pack.body)
			if m == nil {
				t.Errorf("%s: doctor.ts lacks %s", pack.name, key)
				continue
			}
			want := placeholders.FindAllString(doctor.Text(key), -1)
			for _, p := range want {
				if !strings.Contains(m[1], p) {
					t.Errorf("%s %s lacks the placeholder %s: %q", pack.name, key, p, m[1])
				}
			}
		}
	}
}
