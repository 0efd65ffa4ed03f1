package request

import (
	"strings"

	"github.com/gofiber/fiber/v3"
)

// Language picks the kernel language pack for texts the server renders
// itself (spreadsheets, operation-log titles) from Accept-Language: en-US
// when English is asked for first, otherwise zh-CN, the original system's
// language.
func Language(c fiber.Ctx) string {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(c.Get(fiber.HeaderAcceptLanguage))), "en") {
		return "en-US"
	}
	return "zh-CN"
}
