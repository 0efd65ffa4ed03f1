package pluginsdk_test

import (
	"strings"
	"testing"

	"github.com/adminkernel/kernel/pluginsdk"
)

func TestValidIcon(t *testing.T) {
	t.Parallel()
	long := "a:" + strings.Repeat("b", pluginsdk.MaxIconLen-2)
	for icon, want := range map[string]bool{
		"ant-design:wechat-work-outlined": true,
		"ant-design:dingtalk-outlined":    true,
		"mdi:key":                         true,
		"simple-icons:github":             true,
		"ri:2fa-fill":                     true,
		long:                              true,
		long + "b":                        false,
		"":                                false,
		"mdi":                             false,
		":key":                            false,
		"mdi:":                            false,
		"mdi:key:extra":                   false,
		"MDI:Key":                         false,
		"mdi:key ":                        false,
		" mdi:key":                        false,
		"mdi:-key":                        false,
		"mdi:key-":                        false,
		"mdi:key--2":                      false,
		"mdi:key_2":                       false,
		"mdi:key.svg":                     false,
		"https://cdn.example/x.svg":       false,
		"//cdn.example/x.svg":             false,
		"data:image/svg+xml;base64,AAAA":  false,
		"mdi:<script>":                    false,
		"mdi:k\u00e9y":                    false,
	} {
		if got := pluginsdk.ValidIcon(icon); got != want {
			t.Errorf("ValidIcon(%q) = %v, want %v", icon, got, want)
		}
	}
}

func TestValidBrand(t *testing.T) {
	t.Parallel()
	for brand, want := range map[string]bool{
		"github":      true,
		"wecom":       true,
		"social_chat": true,
		"azure-ad":    true,
		"x2":          true,
		strings.Repeat("b", pluginsdk.MaxBrandLen):   true,
		strings.Repeat("b", pluginsdk.MaxBrandLen+1): false,
		"":            false,
		"GitHub":      false,
		"git hub":     false,
		"_github":     false,
		"github_":     false,
		"git__hub":    false,
		"mdi:github":  false,
		"github.com":  false,
		"gith\u00fcb": false,
	} {
		if got := pluginsdk.ValidBrand(brand); got != want {
			t.Errorf("ValidBrand(%q) = %v, want %v", brand, got, want)
		}
	}
}
