package host_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinks: every relative link and image of the repository's pages
// (README.md, CHANGELOG.md, docs/**, the READMEs of pluginsdk, plugins and
// examples) names a file that exists and, with a #fragment into a Markdown
// page, a heading of that page (GitHub's anchors). Absolute URLs are not
// fetched.
func TestDocsLinks(t *testing.T) {
	pages := docPages(t, "..")
	if len(pages) < 20 {
		t.Fatalf("found %d pages: the check ran on too few", len(pages))
	}
	var broken []string
	links := 0
	for _, page := range pages {
		for _, l := range markdownLinks(t, page) {
			links++
			if msg := checkLink(page, l.target); msg != "" {
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %s", rel(page), l.line, l.target, msg))
			}
		}
	}
	if links < 100 {
		t.Fatalf("found %d links in %d pages: the check ran on too few", links, len(pages))
	}
	if len(broken) > 0 {
		t.Fatalf("%d broken links:\n%s", len(broken), strings.Join(broken, "\n"))
	}
	t.Logf("%d links in %d pages, none broken", links, len(pages))
}

func rel(p string) string { return strings.TrimPrefix(filepath.ToSlash(p), "../") }

// docPages lists the checked pages below root (the repository).
func docPages(t *testing.T, root string) []string {
	t.Helper()
	var pages []string
	for _, f := range []string{"README.md", "CHANGELOG.md", "pluginsdk/README.md", "plugins/README.md"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			pages = append(pages, filepath.Join(root, f))
		}
	}
	for _, dir := range []string{"docs", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			name := d.Name()
			if !d.IsDir() && strings.HasSuffix(name, ".md") && (dir == "docs" || strings.HasPrefix(name, "README")) {
				pages = append(pages, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(pages)
	return pages
}

type mdLink struct {
	line   int
	target string
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]\n]*\]\(\s*<?([^()\s<>]+(?:\([^()\s]*\))?)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
)

// markdownLinks returns the link targets of a page outside fenced code
// blocks and code spans.
func markdownLinks(t *testing.T, page string) []mdLink {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []mdLink
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fence := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		line = codeSpan.ReplaceAllString(line, "``")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, mdLink{n, m[1]})
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			out = append(out, mdLink{n, m[1]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// checkLink answers "" for a good link, else what is wrong with it.
func checkLink(page, target string) string {
	if scheme.MatchString(target) {
		return "" // http(s), mailto: not fetched
	}
	path, frag, _ := strings.Cut(target, "#")
	file := page
	if path != "" {
		if strings.HasPrefix(path, "/") {
			return "an absolute path: make it relative to the page"
		}
		file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
		if _, err := os.Stat(file); err != nil {
			return "no such file"
		}
	}
	if frag == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	anchors, err := headingAnchors(file)
	if err != nil {
		return err.Error()
	}
	if !anchors[strings.ToLower(frag)] {
		return "no heading #" + frag + " in " + rel(file)
	}
	return ""
}

var (
	headingLine = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor  = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	anchorCache = map[string]map[string]bool{}
)

// headingAnchors computes a page's anchors as GitHub does: the heading
// text in lower case, punctuation dropped, spaces to "-", a repeated
// anchor suffixed -1, -2, ...
func headingAnchors(file string) (map[string]bool, error) {
	if a, ok := anchorCache[file]; ok {
		return a, nil
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[strings.ToLower(m[1])] = true
		}
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := githubSlug(m[2])
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	anchorCache[file] = anchors
	return anchors, nil
}

var mdLinkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

func githubSlug(heading string) string {
	heading = mdLinkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
