// Package contextwin decides what each request to the engine carries after
// the fixed prefix: how the context window is divided (Budget), how text
// is priced in tokens without a tokenizer (Estimator), how much room the
// reply needs (Reserve), and — as the conversation grows — what is cut,
// shed and folded so that requests stay byte-for-byte appends of each
// other for as long as possible and shrink in as few events as possible.
//
// The agent drives a Planner:
//
//	s := contextwin.NewPlanner(contextwin.Config{Window: 24000, PrefixChars: len(prefix)})
//	s.Append(contextwin.Message{Role: contextwin.User, Content: task})
//	for {
//		p := s.Plan()
//		switch {
//		case p.TooSmall, p.GiveUp: // tell the user p.Problem; stop
//		case p.Event == contextwin.Note: // send p.Messages with tool_choice "none", then s.SetNote(answer) and Plan again
//		}
//		// send prefix + p.Messages with max_tokens p.MaxTokens …
//		// on a context-length refusal: p = s.Overflow(promptTokens, window) and retry once
//		fig := s.Observe(contextwin.Usage{PromptTokens: …, CompletionTokens: …, FinishReason: …})
//		// fig says what became of the count: Learned, Missing, Truncated, Outlier
//		s.Append(reply); s.Append(results…)
//	}
//
// The engine's counts are checked, not trusted: the ratio is the median of
// recent counts, a count far from it (or above what any tokenizer gives) is
// an outlier and not learned, no count at all leaves the estimate cautious,
// and no single count makes the window too small (see Estimator).
//
// Inside, the Planner keeps the transcript (every message appended, and
// how each stands: whole, shed to its summary, cut to fit), the view and
// the recaps. The view is what the next request carries after the fixed
// prefix: its messages, each naming what it stands for (an entry of the
// transcript, the front recap or the middle recap), with its size and how
// many of its bytes no request has carried; the view's totals are the
// sums of those by construction, changed only as messages are pushed,
// truncated, replaced or carried. A recap is one value of one type as the
// request carries it — its message, the bytes of it carried before
// (verbatim) and the size of its own text, which the recap budget bounds
// — and the planner holds two: the front recap, after the fixed prefix,
// and the middle one, between older turns left as they were sent and the
// newest. Plan hands out a copy of the view's messages, which the caller
// owns.
//
// A thinking model's reasoning is carried as the engine's chat template
// renders it (Config.Reasoning, reasoning.go): none on a template that
// drops it, all of it on one that preserves it, and on a turn template
// (Qwen3's: the reasoning after the last user message) the current turn's,
// with what would be a user message after a tool result — what the user
// says while the agent works, the note's question, the middle recap —
// riding at the end of that result, so that the template keeps the turn's
// reasoning and the request changes only where the planner changed it. At
// a shrink event the reasoning after the first message it changed goes:
// the engine prefills that part again anyway.
//
// Summarize and BuildRecap are the pieces a shed and a fold use; NewBudget
// and NewChip are the figures a status line shows.
//
// The package is pure: no I/O, no clock, no goroutines, no randomness, no
// LSP or HTTP types; the same inputs always give the same bytes. Functions
// are safe for concurrent use; a Planner is not.
package contextwin
