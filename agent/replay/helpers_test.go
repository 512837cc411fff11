package replay

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/reika-lsp/reika/agent/engine"
)

// Helpers only the tests use: the generator writes sessions, and the
// acceptance checks the peers' token count against the engine's.

// WriteRecording encodes s in its JSONL form.
func WriteRecording(w io.Writer, s *Recording) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	h := headerLine{Type: "session", Name: s.Name, Source: s.Source, System: s.System, RepoMap: s.RepoMap}
	for _, t := range s.Tools {
		h.Tools = append(h.Tools, toolLine{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	for _, f := range s.Facts {
		h.Facts = append(h.Facts, factLine(f))
	}
	if err := enc.Encode(h); err != nil {
		return err
	}
	for i, r := range s.Rounds {
		rl := roundLine{Type: "round", N: i + 1, User: r.User, Assistant: replyLine{Content: r.Assistant.Content}}
		for _, c := range r.Assistant.ToolCalls {
			rl.Assistant.ToolCalls = append(rl.Assistant.ToolCalls, callLine{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		for _, m := range r.Results {
			p := m.Payload
			rl.Results = append(rl.Results, resultLine{CallID: m.ToolCallID, Content: m.Content,
				Payload: payloadLine{Kind: p.Kind.String(), Path: p.Path, From: p.From, To: p.To, Total: p.Total}})
		}
		if err := enc.Encode(rl); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// promptTokens is what the engine will count for req.
func promptTokens(prefix int, msgs []engine.Message) int {
	n := prefix + genPrompt
	for _, m := range msgs {
		if m.Role != "system" {
			n += blockTokens(m)
		}
	}
	return n
}
