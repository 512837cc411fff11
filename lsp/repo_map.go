package lsp

import (
	"context"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/tools"
	"github.com/reika-lsp/reika/repomap"
)

// The repo map follows the open documents (parsed again, incrementally,
// after their changes: see map_queue.go) and the files the agent read.
// What the model sees of it is rendered only when the prefix is built: at
// the start of a session and at a shrink event.

// mapDocument brings the map up to date with an open document.
func (s *Server) mapDocument(uri protocol.DocumentURI) {
	s.mapq.apply.Lock()
	defer s.mapq.apply.Unlock()
	d, ok := s.docs.Get(uri)
	if !ok || d.Path == "" {
		return
	}
	if rel, ok := s.mapPath(d.Path); ok {
		s.repo.Update(rel, []byte(d.Text))
	}
}

// mapPath is a file's key in the repo map: its path relative to the
// workspace folder that holds it (the document's project when the editor
// named none). A file outside the workspace — the recap document in the
// state directory, a library the editor jumped into — never enters the
// map, and so never the system prompt.
func (s *Server) mapPath(path string) (string, bool) {
	for _, dir := range s.workspace() {
		rel, err := filepath.Rel(dir, path)
		if err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		return filepath.ToSlash(rel), true
	}
	return "", false
}

// mapOpened has a newly opened document mapped; the set of open
// documents, and so the map's focus, changes only here and on close — not
// per keystroke.
func (s *Server) mapOpened(uri protocol.DocumentURI) {
	s.mapq.mark(uri)
	s.refocus()
	s.firstOpenOnce.Do(func() {
		close(s.firstOpen)
		s.goOwned(s.warmAtOpen)
	})
}

// unmapDocument forgets a closed document, unless the agent read it.
func (s *Server) unmapDocument(uri protocol.DocumentURI) {
	s.mapq.forget(uri)
	path, err := URIToPath(uri)
	if err != nil {
		return
	}
	rel, ok := s.mapPath(path)
	if !ok {
		s.refocus()
		return
	}
	s.mu.Lock()
	keep := s.agentRead[rel]
	s.mu.Unlock()
	if !keep {
		s.removeFromMap(rel)
	}
	s.refocus()
}

// removeFromMap drops a file from the map, after any update with its text
// under way.
func (s *Server) removeFromMap(rel string) {
	s.mapq.apply.Lock()
	defer s.mapq.apply.Unlock()
	s.repo.Remove(rel)
}

// refocus weights up the files the user has open.
func (s *Server) refocus() {
	var paths []string
	for _, d := range s.docs.All() {
		if rel, ok := s.mapPath(d.Path); d.Path != "" && ok {
			paths = append(paths, rel)
		}
	}
	s.repo.SetFocus(paths...)
}

// editorMap is the agent's view of the repo map: rendered into the prefix,
// and learning the files the agent reads (which stay when the editor
// closes them).
type editorMap struct{ s *Server }

// Render brings the map up to date with the open documents first, for
// at most renderFlushMax, then renders what it has.
func (m editorMap) Render(budget int) string {
	m.s.onMapThread(func() {
		ctx, cancel := context.WithTimeout(m.s.ctx, renderFlushMax)
		defer cancel()
		m.s.flushMap(ctx)
	})
	return m.s.repo.Render(budget)
}

// The language server's map has an index: its sessions offer the
// navigation tools, answered from it.
var _ agent.MapIndex = editorMap{}

// Index is the map itself, which the agent's navigation tools ask
// (agent.MapIndex) once per question: brought up to date with the open
// documents first, for at most renderFlushMax, as for Render.
func (m editorMap) Index() *repomap.Map {
	m.s.onMapThread(func() {
		ctx, cancel := context.WithTimeout(m.s.ctx, renderFlushMax)
		defer cancel()
		m.s.flushMap(ctx)
	})
	return m.s.repo
}

func (m editorMap) Learn(f tools.FileText) {
	if len(f.Text) > agent.MapFileMax {
		return
	}
	key, ok := m.s.mapPath(f.Abs)
	if !ok {
		return
	}
	m.s.mu.Lock()
	m.s.agentRead[key] = true
	m.s.mu.Unlock()
	m.s.onMapThread(func() {
		m.s.mapq.apply.Lock()
		defer m.s.mapq.apply.Unlock()
		m.s.repo.Update(key, []byte(f.Text))
	})
}
