package lsptest

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Abs is the absolute path of a workspace-relative path (an absolute one
// is returned as it is).
func (e *Editor) Abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(e.Root, filepath.FromSlash(path))
}

// Rel is a path relative to the workspace when it is inside it.
func (e *Editor) Rel(abs string) string {
	if rel, err := filepath.Rel(e.Root, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return abs
}

// URI is the file URI of a workspace path.
func (e *Editor) URI(path string) string { return FileURI(e.Abs(path)) }

// FileURI is the file URI of an absolute path, as an editor spells it.
func FileURI(abs string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// URIPath is the absolute path a file URI names.
func URIPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !strings.HasPrefix(u.Path, "/") {
		return "", fmt.Errorf("not a local file URI: %q", uri)
	}
	return filepath.FromSlash(u.Path), nil
}
