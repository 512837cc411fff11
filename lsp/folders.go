package lsp

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// folders are the workspace folders, as absolute paths: set by initialize,
// changed by didChangeWorkspaceFolders. It is safe for concurrent use.
type folders struct {
	mu    sync.RWMutex
	paths []string
}

func (f *folders) set(paths []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paths = slices.Clone(paths)
}

// change removes and adds folders; a folder is listed once.
func (f *folders) change(added, removed []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paths = slices.DeleteFunc(f.paths, func(p string) bool { return slices.Contains(removed, p) })
	for _, p := range added {
		if !slices.Contains(f.paths, p) {
			f.paths = append(f.paths, p)
		}
	}
}

// all is a copy of the folders.
func (f *folders) all() []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.Clone(f.paths)
}

// first is the first folder, the workspace's root.
func (f *folders) first() (string, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if len(f.paths) == 0 {
		return "", false
	}
	return f.paths[0], true
}

// relative writes a path relative to the first folder that holds it, with
// slashes; a path outside every folder is returned as it is.
func (f *folders) relative(path string) string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, dir := range f.paths {
		if rel, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return path
}
