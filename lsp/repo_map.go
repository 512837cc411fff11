package lsp

import (
	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/tools"
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

// editorMap is the agent's view of the repo map: rendered into the prefix,
// and learning the files the agent reads (which stay when the editor
// closes them).
type editorMap struct{ s *Server }

func (m editorMap) Render(budget int) string { return m.s.repo.Render(budget) }

func (m editorMap) Learn(f tools.FileText) {
	if len(f.Text) > agent.MapFileMax {
		return
	}
	key := m.s.relative(f.Abs)
	m.s.mu.Lock()
	m.s.agentRead[key] = true
	m.s.mu.Unlock()
	m.s.repo.Update(key, []byte(f.Text))
}
