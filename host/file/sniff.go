package file

import (
	"net/http"
	"strings"
)

// SniffLen is how many leading bytes are sniffed.
const SniffLen = 512

// families maps an extension to the content types its bytes may sniff as
// (http.DetectContentType, the WHATWG algorithm) and the type the file is
// served with. Extensions not listed here may hold anything but markup
// (see CheckContent).
var families = map[string]struct {
	sniffed []string
	serve   string
}{
	".png":  {[]string{"image/png"}, "image/png"},
	".jpg":  {[]string{"image/jpeg"}, "image/jpeg"},
	".jpeg": {[]string{"image/jpeg"}, "image/jpeg"},
	".gif":  {[]string{"image/gif"}, "image/gif"},
	".webp": {[]string{"image/webp"}, "image/webp"},
	".bmp":  {[]string{"image/bmp"}, "image/bmp"},
	".ico":  {[]string{"image/x-icon"}, "image/x-icon"},
	".pdf":  {[]string{"application/pdf"}, "application/pdf"},
	".zip":  {[]string{"application/zip"}, "application/zip"},
	".xlsx": {[]string{"application/zip"}, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
	".docx": {[]string{"application/zip"}, "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
	".pptx": {[]string{"application/zip"}, "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
	".gz":   {[]string{"application/x-gzip"}, "application/gzip"},
	".txt":  {[]string{"text/plain; charset=utf-8", "text/plain; charset=utf-16be", "text/plain; charset=utf-16le"}, "text/plain; charset=utf-8"},
	".csv":  {[]string{"text/plain; charset=utf-8"}, "text/csv; charset=utf-8"},
	".json": {[]string{"text/plain; charset=utf-8"}, "application/json"},
	".mp4":  {[]string{"video/mp4"}, "video/mp4"},
	".mp3":  {[]string{"audio/mpeg"}, "audio/mpeg"},
}

// inline are the types served inline by /view (wire contract §4.11: png,
// jpg, jpeg, gif, webp, bmp, ico and pdf); everything else is an
// attachment.
var inline = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".bmp": true, ".ico": true, ".pdf": true}

// markup are sniffed types a browser may run or render as a document.
func markup(sniffed string) bool {
	return strings.HasPrefix(sniffed, "text/html") || strings.HasPrefix(sniffed, "text/xml")
}

// CheckContent sniffs the leading bytes of a file named with extension ext
// and returns the content type it is stored and served with. ok is false
// when the bytes contradict the extension: a listed extension whose bytes
// sniff as another type (a .png that is HTML), or any other extension whose
// bytes are HTML or XML.
func CheckContent(ext string, head []byte) (contentType string, ok bool) {
	sniffed := http.DetectContentType(head)
	if f, listed := families[ext]; listed {
		for _, s := range f.sniffed {
			if sniffed == s {
				return f.serve, true
			}
		}
		return "", false
	}
	if markup(sniffed) {
		return "", false
	}
	return "application/octet-stream", true
}
