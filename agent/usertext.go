package agent

import "github.com/reika-lsp/reika/contextwin"

// textSpiller is a toolbox that can save text where its read tool reads
// it back (tools.Set's spill dir).
type textSpiller interface {
	SpillText(what, text string) string
}

// userMessage is a message of the user's for the planner. A long one (a
// pasted log or trace) is also saved where the model can read it back:
// the recap, which carries such a message shortened once newer ones
// follow, says where its whole text is (Payload.Spill).
func (s *Session) userMessage(text string) contextwin.Message {
	m := contextwin.Message{Role: contextwin.User, Content: text}
	if sp, ok := s.cfg.Tools.(textSpiller); ok && contextwin.ShouldSpillUser(len(text)) {
		m.Payload.Spill = sp.SpillText("user-message", text)
	}
	return m
}
