package agent

import (
	"encoding/json"
	"fmt"

	"github.com/reika-lsp/reika/agent/engine"
	"github.com/reika-lsp/reika/agent/transcript"
)

// The tool definitions are in the fixed prefix, which the engine caches:
// a change to them makes it prefill the whole request again. So the tools
// in force change only at a fold, which rewrites the request after the
// prefix anyway (contextwin's PrefixAtFold): there the prefix is rebuilt
// with the tools of now — the new list an MCP server announced (its
// tools/list_changed), or, in a resumed session, the tools it runs with
// now where the prefix it resumed carries others (an MCP server the
// client allowed at the load, a tool of a newer Reika) — its system
// prompt and repo map kept as they were.

// toolsChange is a Toolbox whose tools may change during the session:
// agent/mcp's, whose servers announce new lists.
type toolsChange interface {
	// TakeChange puts the new lists in force and returns the definitions
	// now and a line for the user; ok is false when nothing changed.
	TakeChange() (defs []engine.Tool, said string, ok bool)
}

// prefixAtFold puts a new fixed prefix in front of a fold's request when
// the tools changed since the prefix was built, and records it; it
// returns the prefix's size. contextwin calls it while s.mu is held.
func (s *Session) prefixAtFold() (int, bool) {
	if s.replaying {
		// A resumed session takes the prefixes the one it continues took.
		if len(s.replayPrefixes) == 0 {
			return 0, false
		}
		p := s.replayPrefixes[0]
		s.replayPrefixes = s.replayPrefixes[1:]
		s.prefix = p
		return p.Chars, true
	}
	if s.prefix == nil {
		return 0, false
	}
	tools, said := s.tools, ""
	if tc, ok := s.cfg.Tools.(toolsChange); ok {
		var defs []engine.Tool
		if defs, said, ok = tc.TakeChange(); ok {
			tools = s.withSubagent(defs)
		}
	}
	if engine.SameTools(tools, s.prefix.Tools) {
		return 0, false
	}
	if said == "" {
		// The prefix resumed carries other tools than the session has.
		said = fmt.Sprintf("the requests carry this session's tools from this fold on, not those of the conversation it resumed (%s)",
			engine.ToolChanges(s.prefix.Tools, tools))
	}
	s.toolNews = append(s.toolNews, said)
	s.tools = tools
	p := NewPrefix(s.prefix.System, tools)
	p.Map = s.prefix.Map
	s.prefix = p
	if s.tr != nil {
		if data, err := json.Marshal(p.Tools); err == nil {
			s.drove(transcript.Record{Kind: transcript.KindPrefix, Prefix: &transcript.Prefix{System: p.System, Tools: data, Chars: p.Chars, Map: p.Map}})
		}
	}
	return p.Chars, true
}

// resumedTools says, of a resumed session whose prefix carries other
// tools than it runs with now, which differ and when they reach the
// model; "" when they are the same.
func (s *Session) resumedTools() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prefix == nil || engine.SameTools(s.tools, s.prefix.Tools) {
		return ""
	}
	return fmt.Sprintf("the tools of this session differ from those of the conversation it resumes (%s): "+
		"the requests carry them from the conversation's next fold on, so that the engine's cache of it holds until then (compact folds it now)",
		engine.ToolChanges(s.prefix.Tools, s.tools))
}

// withSubagent is the toolbox's definitions with the subagent tool's, as
// the session offers them.
func (s *Session) withSubagent(defs []engine.Tool) []engine.Tool {
	if s.cfg.NoSubagents {
		return defs
	}
	return beforeMCP(defs, subagentDefinition())
}

// takeToolNews returns what the user should hear of the tools a fold put
// in force, and forgets it. The caller holds mu.
func (s *Session) takeToolNews() []string {
	out := s.toolNews
	s.toolNews = nil
	return out
}
