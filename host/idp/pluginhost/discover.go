package pluginhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/adminkernel/kernel/host/idp"
)

// FilePrefix starts the file name of every provider plugin:
// adminkernel-provider-<code>.
const FilePrefix = "adminkernel-provider-"

// DefaultDirName is the plugin folder next to the host binary, used when
// Service:ExternalAuth:PluginDir is empty.
const DefaultDirName = "plugins"

// Candidate is a plugin binary found in the plugin folder.
type Candidate struct {
	// Code is the provider code taken from the file name.
	Code string
	// Path is the absolute path of the binary.
	Path string
}

// SkippedFile is a file of the plugin folder that is not launched, and why.
type SkippedFile struct {
	Path   string
	Reason string
}

// ResolveDir returns the plugin folder: configured when absolute, relative
// to contentRoot when relative, and plugins/ next to the running binary
// when empty.
func ResolveDir(configured, contentRoot string) (string, error) {
	switch {
	case configured == "":
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("pluginhost: locating the host binary for the default plugin folder: %w", err)
		}
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		return filepath.Join(filepath.Dir(exe), DefaultDirName), nil
	case filepath.IsAbs(configured):
		return filepath.Clean(configured), nil
	default:
		return filepath.Abs(filepath.Join(contentRoot, configured))
	}
}

// Discover lists the plugin binaries of dir: regular, executable files
// named adminkernel-provider-<code>, with <code> a valid provider code,
// that only their owner can write. Everything else is returned as skipped
// with the reason. A missing folder holds no plugins; any other error
// reading it is returned.
func Discover(dir string) ([]Candidate, []SkippedFile, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	entries, err := os.ReadDir(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("pluginhost: reading the plugin folder %s: %w", abs, err)
	}
	var found []Candidate
	var skipped []SkippedFile
	seen := map[string]string{}
	for _, e := range entries {
		path := filepath.Join(abs, e.Name())
		code, reason := check(e, path)
		if reason == "" {
			if prev, dup := seen[strings.ToLower(code)]; dup {
				reason = fmt.Sprintf("provider code %q is already taken by %s", code, prev)
			}
		}
		if reason != "" {
			skipped = append(skipped, SkippedFile{Path: path, Reason: reason})
			continue
		}
		seen[strings.ToLower(code)] = path
		found = append(found, Candidate{Code: code, Path: path})
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Code < found[j].Code })
	return found, skipped, nil
}

// check returns the code of a plugin file, or why it is skipped.
func check(e fs.DirEntry, path string) (code, reason string) {
	name := e.Name()
	code, ok := strings.CutPrefix(name, FilePrefix)
	if !ok {
		return "", "not named " + FilePrefix + "<code>"
	}
	if !idp.ValidCode(code) {
		return "", fmt.Sprintf("%q is not a provider code (letters, digits and underscores, at most 32 characters)", code)
	}
	if e.Type()&fs.ModeSymlink != 0 {
		return "", "a symbolic link (plugins must be regular files in the plugin folder)"
	}
	if !e.Type().IsRegular() {
		return "", "not a regular file"
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", err.Error()
	}
	mode := info.Mode()
	if mode.Perm()&0o111 == 0 {
		return "", "not executable"
	}
	if mode.Perm()&0o002 != 0 {
		return "", "writable by every user (anyone could replace the provider)"
	}
	return code, ""
}
