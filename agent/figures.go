package agent

import (
	"fmt"

	"github.com/reika-lsp/reika/contextwin"
)

// An engine that sends no counts is priced cautiously by the planner
// (contextwin.Estimator), not measured with the engine's /tokenize:
// llama.cpp, which serves it, always reports its usage, and what drops
// the usage (a proxy, an older OpenAI-compatible server) rarely passes
// /tokenize on; a count of the messages' text would also miss the
// template's tokens, and a tokenize request a round is a second request
// to the engine for every one the user waits on.

// figureNotes is what the session told the user of prompt counts the
// planner did not take: an outlier and missing counts are told once a
// session each (a careless engine or a proxy misreports every request
// alike); what the warm-up met waits for the next run to tell it.
// Guarded by Session.mu.
type figureNotes struct {
	told    [contextwin.Outlier + 1]bool
	pending []string
}

// figureNotice is what to tell the user of a count the planner made fig
// of, for a request it estimated at estimate tokens; "" when there is
// nothing to tell, or it was told before. A truncated count is told by
// the run itself, every time. The caller holds mu.
func (s *Session) figureNotice(fig contextwin.Figure, reported, estimate int) string {
	switch fig {
	case contextwin.Outlier:
		s.stats.Outliers++
	case contextwin.Missing:
		s.stats.Uncounted++
	default:
		return ""
	}
	if s.figures.told[fig] {
		return ""
	}
	s.figures.told[fig] = true
	if fig == contextwin.Missing {
		return "the engine reports no prompt token counts (usage absent or zero): Reika prices the prompt cautiously " +
			"and folds earlier; an engine that reports its usage lets the whole window be used"
	}
	return fmt.Sprintf("the engine counted %d prompt tokens for a request Reika estimated at %d, far from what its other counts "+
		"and any tokenizer support: not learned, Reika keeps its own estimate (told once; the engine or a proxy in front of it misreports usage)",
		reported, estimate)
}

// takeFigureNotes returns what the warm-up met and has not told. The
// caller holds mu.
func (s *Session) takeFigureNotes() []string {
	out := s.figures.pending
	s.figures.pending = nil
	return out
}
