package lsp

import (
	"os"
	"path/filepath"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/contextwin"
)

// The repo map follows the open documents (parsed again, incrementally, on
// every change) and the files the agent read. What the model sees of it is
// rendered only when the prefix is built: at the start of a session and at
// a shrink event.

// mapDocument brings the map up to date with an open document.
func (s *Server) mapDocument(uri protocol.DocumentURI) {
	d, ok := s.docs.Get(uri)
	if !ok || d.Path == "" {
		return
	}
	s.repo.Update(s.relative(d.Path), []byte(d.Text))
}

// mapOpened maps a newly opened document; the set of open documents, and
// so the map's focus, changes only here and on close — not per keystroke.
func (s *Server) mapOpened(uri protocol.DocumentURI) {
	s.mapDocument(uri)
	s.refocus()
	s.firstOpenOnce.Do(func() { close(s.firstOpen) })
}

// unmapDocument forgets a closed document, unless the agent read it.
func (s *Server) unmapDocument(uri protocol.DocumentURI) {
	path, err := URIToPath(uri)
	if err != nil {
		return
	}
	rel := s.relative(path)
	s.mu.Lock()
	keep := s.agentRead[rel]
	s.mu.Unlock()
	if !keep {
		s.repo.Remove(rel)
	}
	s.refocus()
}

// refocus weights up the files the user has open.
func (s *Server) refocus() {
	var paths []string
	for _, d := range s.docs.All() {
		if d.Path != "" {
			paths = append(paths, s.relative(d.Path))
		}
	}
	s.repo.SetFocus(paths...)
}

// mapRead adds a file the agent read: its open buffer, else the disk.
func (s *Server) mapRead(root, rel string) {
	if rel == "" {
		return
	}
	abs := rel
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, filepath.FromSlash(rel))
	}
	text := ""
	if d, ok := s.docs.ByPath(abs); ok {
		text = d.Text
	} else if data, err := os.ReadFile(abs); err == nil && len(data) <= mapFileMax {
		text = string(data)
	} else {
		return
	}
	key := s.relative(abs)
	s.mu.Lock()
	s.agentRead[key] = true
	s.mu.Unlock()
	s.repo.Update(key, []byte(text))
}

// mapFileMax bounds a file the map reads from disk.
const mapFileMax = 4 << 20

// repoMap is the agent's repo-map hook: the map rendered in its budget —
// REIKA_REPO_MAP_BUDGET, else 5% of the window — or nothing when the
// budget is 0.
func (s *Server) repoMap(budget func() int) func() string {
	return func() string {
		n := budget()
		if n <= 0 {
			return ""
		}
		return s.repo.Render(n)
	}
}

// mapBudget is the map's size in characters for a window.
func mapBudget(set bool, value, window int) int {
	if set {
		return value
	}
	return contextwin.RepoMapChars(window)
}
