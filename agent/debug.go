package agent

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/reika-lsp/reika/agent/engine"
)

// cacheLine is the REIKA_DEBUG line for one request: whether its prompt
// material was a pure append of the previous request's, or where it first
// differed, and what the engine says reprocessing cost. what names a
// request that is not a round's own ("warm-up", "note", "checkpoint"); a
// round's request has none.
func cacheLine(what string, prev, cur []byte, starts []int, reprocessed, reused int, ms float64) string {
	where := divergence(prev, cur, starts)
	head := "prefix cache"
	if what != "" {
		head += " (" + what + ")"
	}
	return fmt.Sprintf("%s: %s; engine reprocessed %d tokens, reused %d, %.2f s", head, where, reprocessed, reused, ms/1000)
}

// debugTrail is what REIKA_DEBUG follows across every request the engine
// processes — the rounds', the notes', the warm-up's and the checkpoint
// requests' — so that each line compares a request with the one the
// engine processed just before it, whatever its kind. Guarded by the
// session's mu.
type debugTrail struct {
	prev []byte
	// pending are the lines of requests sent outside a run (the warm-up),
	// told at the next run's first round.
	pending []string
}

// debugLine takes one request the engine answered into the trail and
// returns its line; "" when REIKA_DEBUG is off or the engine answered
// nothing. The caller holds mu.
func (s *Session) debugLine(what string, req engine.Request, resp *engine.Response) string {
	if !s.cfg.Debug || resp == nil {
		return ""
	}
	cur, starts := promptBytes(req)
	prev := s.debug.prev
	s.debug.prev = cur
	reprocessed, reused, ms := engineFigures(resp)
	return cacheLine(what, prev, cur, starts, reprocessed, reused, ms)
}

// takeDebugLines returns the lines of requests sent outside a run not yet
// told. The caller holds mu.
func (s *Session) takeDebugLines() []string {
	out := s.debug.pending
	s.debug.pending = nil
	return out
}

// divergence describes how cur relates to prev: "first request", "append
// (+N bytes)", or "diverged at message M byte B" (M counts the system
// prompt as message 0; the tool definitions come before it).
func divergence(prev, cur []byte, starts []int) string {
	if prev == nil {
		return "first request"
	}
	n := min(len(prev), len(cur))
	i := 0
	for i < n && prev[i] == cur[i] {
		i++
	}
	if i == len(prev) {
		return fmt.Sprintf("append (+%d bytes)", len(cur)-len(prev))
	}
	m := sort.Search(len(starts), func(k int) bool { return starts[k] > i }) - 1
	if m < 0 {
		return fmt.Sprintf("diverged in the tool definitions at byte %d", i)
	}
	return fmt.Sprintf("diverged at message %d byte %d", m, i-starts[m])
}

func jsonValid(s string) bool { return json.Valid([]byte(s)) }
