package acp

import (
	"encoding/json"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reika-lsp/reika/agent"
)

// compacted shows a shrink of the conversation — results shed to their
// summaries, turns folded into a recap — in one line: as a
// compaction_update where the client takes it (the schema's unstable
// session compaction, which the SDK does not know yet, so it is written
// here), else as a completed step.
func (s *session) compacted(e agent.Event) {
	line := shrinkLine(e)
	if !s.srv.takesCompaction() {
		s.status(line)
		return
	}
	s.mu.Lock()
	s.serial++
	id := fmt.Sprintf("reika-compaction-%d", s.serial)
	s.mu.Unlock()
	// The schema's lifecycle: in progress first (the entity's place in
	// the timeline), then one terminal update with the summary.
	s.sendRaw(map[string]any{"sessionUpdate": "compaction_update", "compactionId": id, "status": "in_progress"})
	s.sendRaw(map[string]any{"sessionUpdate": "compaction_update", "compactionId": id, "status": "completed",
		"summary": []any{map[string]any{"type": "text", "text": line}}})
}

// shrinkLine says what a shed or a fold did, and why, in one line.
func shrinkLine(e agent.Event) string {
	why := "to keep the conversation within the context window"
	if e.Emergency {
		why = "to fit the window of the engine, which refused the request"
	}
	switch e.Kind {
	case agent.Shed:
		n := len(e.ShedItems)
		return fmt.Sprintf("Reika replaced %d old tool result%s (%d bytes) with short summaries %s; reading again gives the full text", n, plural(n), e.ShedChars, why)
	case agent.Folded:
		return fmt.Sprintf("Reika folded %d older message%s into a recap of %d bytes %s (/recap shows it)", e.Folded, plural(e.Folded), e.RecapChars, why)
	}
	return e.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// sendRaw sends a session/update the SDK has no type for, in order with
// the SDK's own (they are written at once, under the same lock).
func (s *session) sendRaw(update map[string]any) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
		"params": map[string]any{"sessionId": sdk.SessionId(s.id), "update": update}})
	if err != nil {
		return
	}
	s.srv.wire.send(append(b, '\n'))
}
