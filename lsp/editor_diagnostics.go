package lsp

import (
	"os"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/reika-lsp/reika/agent"
	"github.com/reika-lsp/reika/agent/tools"
)

// The editor's own diagnostics come with an ask (askArgs.Diagnostics): the
// VS Code extension and the Neovim plugin send the errors and warnings
// the editor shows in the workspace, a file's as publishDiagnostics gives
// them. The server keeps those of the workspace's files, at most
// tools.MaxEditorDiagnostics, errors first; the model reads them in the
// ask, and the diagnostics tool answers from them for the files no
// language server of Reika's serves.

// maxEditorScan bounds the work an ask's diagnostics cost: the
// diagnostics past it are counted, not read.
const maxEditorScan = 2000

// editorSeverities are the severities kept, by their names in answers.
var editorSeverities = map[protocol.DiagnosticSeverity]string{
	protocol.DiagnosticSeverityError:   "error",
	protocol.DiagnosticSeverityWarning: "warning",
}

// takeEditorDiagnostics keeps the editor's diagnostics of files and
// returns them as the ask gives them to the model, "" when there are none.
func (s *Server) takeEditorDiagnostics(files []protocol.PublishDiagnosticsParams) string {
	list, total := s.editorDiagnostics(files)
	s.editorDiags.Set(list)
	return tools.EditorDiagnosticsText(s.editorDiags.All(), total)
}

// editorDiagnostics converts the errors and warnings of the workspace's
// files in files, each place in bytes of the file as the editor has it (or
// the disk), and counts them all (total).
func (s *Server) editorDiagnostics(files []protocol.PublishDiagnosticsParams) (list []tools.EditorDiagnostic, total int) {
	scanned := 0
	for _, f := range files {
		path, err := URIToPath(f.URI)
		if err != nil {
			continue
		}
		if _, inside := s.mapPath(path); !inside {
			continue
		}
		rel := s.relative(path)
		var m *Mapper
		for _, d := range f.Diagnostics {
			sev, ok := editorSeverities[d.Severity]
			if !ok {
				continue
			}
			total++
			if scanned++; scanned > maxEditorScan {
				continue
			}
			if m == nil {
				m = NewMapper(s.editorText(f.URI, path), s.encoding())
			}
			line, col := int(d.Range.Start.Line)+1, int(d.Range.Start.Character)+1
			if o, err := m.Offset(d.Range.Start); err == nil {
				if start, err := m.Offset(protocol.Position{Line: d.Range.Start.Line}); err == nil {
					col = o - start + 1
				}
			}
			list = append(list, tools.EditorDiagnostic{Path: rel, Line: line, Column: col,
				Severity: sev, Message: d.Message, Source: d.Source})
		}
	}
	return list, total
}

// editorText is the file's text as the editor has it, else the disk's,
// "" when neither has it (the places then stay as the editor gave them).
func (s *Server) editorText(uri protocol.DocumentURI, path string) string {
	if d, open := s.docs.Get(uri); open {
		return d.Text
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Size() > agent.MapFileMax {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// joinParagraphs joins the non-empty texts with a blank line.
func joinParagraphs(texts ...string) string {
	var parts []string
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}
